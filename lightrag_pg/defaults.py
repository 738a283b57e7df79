"""Choosing the LLM, embedding function and extractor when the caller gives none."""

from __future__ import annotations

from .config import Settings
from .errors import ConfigurationError
from .llm.embedding_func import EmbeddingFunc
from .llm.openai_client import OpenAIChat, OpenAIEmbedding, embedding_configured, llm_configured
from .llm.wrap import LLMFunc
from .offline.minilm import DEFAULT_BATCH_SIZE, EMBEDDING_DIM, MAX_SEQ_LENGTH, MODEL_NAME, LocalMiniLM


def default_llm(settings: Settings) -> LLMFunc | None:
    """An OpenAI-compatible chat client when the environment configures one, else None."""
    if not llm_configured():
        return None
    return OpenAIChat(
        timeout=settings.llm_timeout,
        max_retries=settings.max_retries,
        base_delay=settings.retry_base_delay,
        max_concurrent=settings.llm_max_async,
    )


def default_embedding(settings: Settings) -> EmbeddingFunc:
    """The configured embedding endpoint, else the local all-MiniLM-L6-v2 model."""
    if embedding_configured():
        client = OpenAIEmbedding(
            batch_size=settings.embedding_batch_num,
            timeout=settings.embedding_timeout,
            max_retries=settings.max_retries,
            base_delay=settings.retry_base_delay,
            max_concurrent=settings.embedding_max_async,
        )
        if client.embedding_dim is None:
            raise ConfigurationError(
                f"unknown dimension of embedding model {client.model!r}: set EMBEDDING_DIM"
            )
        return client.as_embedding_func()
    return local_embedding_func()


def local_embedding_func(*, batch_size: int = DEFAULT_BATCH_SIZE) -> EmbeddingFunc:
    """An ``EmbeddingFunc`` (384 dimensions) over :class:`~lightrag_pg.offline.minilm.LocalMiniLM`."""
    model = LocalMiniLM(batch_size=batch_size)
    return EmbeddingFunc(
        embedding_dim=EMBEDDING_DIM,
        func=model,
        max_token_size=MAX_SEQ_LENGTH,
        model_name=MODEL_NAME,
        truncate=model.truncate,
    )


def choose_extractor(settings: Settings, llm: LLMFunc | None) -> str:
    """``settings.extractor`` if set, else ``llm`` when an LLM is available, else ``nlp``."""
    if settings.extractor == "llm" and llm is None:
        raise ConfigurationError(
            "extractor='llm' needs an LLM: pass llm_model_func or set OPENAI_API_KEY / OPENAI_BASE_URL"
        )
    return settings.extractor or ("llm" if llm is not None else "nlp")
