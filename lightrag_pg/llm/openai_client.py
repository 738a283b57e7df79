"""Chat and embedding clients for any OpenAI-compatible endpoint.

Both clients disable the ``openai`` library's own retries and use
:func:`~lightrag_pg.llm.retry.call_with_retries` with a concurrency limit, so
failures surface as :class:`~lightrag_pg.errors.LLMError` /
:class:`~lightrag_pg.errors.LLMTimeout`.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import ConfigurationError, LightRAGError, LLMError, LLMTimeout
from .embedding_func import EmbeddingFunc, validate_embeddings
from .retry import Limiter, call_with_retries
from .usage import Measured, current_measured, report_usage

if TYPE_CHECKING:
    import openai

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_UPSTREAM_ONLY_KWARGS = frozenset(
    {"hashing_kv", "keyword_extraction", "enable_cot", "token_tracker", "_priority", "cache_type"}
)
_KNOWN_EMBEDDING_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_PLACEHOLDER_KEY = "not-needed"
_C = TypeVar("_C")


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def llm_configured() -> bool:
    """Whether environment variables point the chat client at an endpoint."""
    names = ("OPENAI_API_KEY", "LLM_BINDING_API_KEY", "OPENAI_BASE_URL", "LLM_BINDING_HOST")
    return _env(*names) is not None


def embedding_configured() -> bool:
    """Whether environment variables point the embedding client at an endpoint."""
    return (
        _env(
            "EMBEDDING_BINDING_HOST",
            "EMBEDDING_BINDING_API_KEY",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
        )
        is not None
    )


def strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` reasoning blocks from a model answer."""
    text = _THINK_BLOCK.sub("", text)
    lower = text.lower()
    if "</think>" in lower:
        text = text[lower.rindex("</think>") + len("</think>") :]
    return text.strip()


class _ClientHolder:
    """One ``AsyncOpenAI`` client, rebuilt when used from a new event loop."""

    def __init__(self, base_url: str | None, api_key: str | None, timeout: float) -> None:
        if api_key is None and base_url is None:
            raise ConfigurationError(
                "no OpenAI-compatible endpoint configured: pass api_key/base_url "
                "or set OPENAI_API_KEY / OPENAI_BASE_URL"
            )
        self.base_url = base_url
        self._api_key = api_key or _PLACEHOLDER_KEY
        self._timeout = timeout if timeout > 0 else None
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> openai.AsyncOpenAI:
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self._timeout,
                max_retries=0,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()


class OpenAIChat:
    """An async chat function with the upstream LightRAG ``llm_model_func`` signature.

    Arguments left as ``None`` come from the environment: ``LLM_MODEL``
    (default ``gpt-4o-mini``), ``OPENAI_BASE_URL`` or ``LLM_BINDING_HOST``,
    ``OPENAI_API_KEY`` or ``LLM_BINDING_API_KEY``.
    """

    _lightrag_pg_protected = True

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 180.0,
        max_retries: int = 3,
        base_delay: float = 1.0,
        max_concurrent: int = 4,
        stream_usage: bool = True,
    ) -> None:
        self.model = model or _env("LLM_MODEL") or "gpt-4o-mini"
        self.stream_usage = stream_usage
        self._holder = _ClientHolder(
            base_url or _env("OPENAI_BASE_URL", "LLM_BINDING_HOST"),
            api_key or _env("OPENAI_API_KEY", "LLM_BINDING_API_KEY"),
            timeout,
        )
        self.timeout = timeout
        self.max_retries = max_retries
        self.base_delay = base_delay
        self._limiter = Limiter(max_concurrent)

    @property
    def base_url(self) -> str | None:
        """The endpoint base URL (``None``: the OpenAI API)."""
        return self._holder.base_url

    async def __call__(
        self,
        prompt: str,
        system_prompt: str | None = None,
        history_messages: Sequence[dict[str, Any]] | None = None,
        *,
        stream: bool = False,
        **kwargs: Any,
    ) -> str | AsyncIterator[str]:
        """Send one chat completion request.

        Returns the answer text with ``<think>`` blocks removed, or with
        ``stream=True`` an async iterator of text pieces. Extra keyword
        arguments (``temperature``, ``max_tokens``, ...) go to the API. The
        response's ``usage`` is reported to the running
        :func:`~lightrag_pg.llm.usage.measuring` block (a stream asks for it with
        ``stream_options``, unless ``stream_usage=False``, and reports it at its end).
        """
        messages: list[dict[str, Any]] = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        messages.extend(history_messages or ())
        messages.append({"role": "user", "content": prompt})
        params = {k: v for k, v in kwargs.items() if k not in _UPSTREAM_ONLY_KWARGS}
        params.setdefault("model", self.model)
        if stream and self.stream_usage:
            params.setdefault("stream_options", {"include_usage": True})
        what = f"chat completion ({params['model']})"
        measured = current_measured()

        async def attempt() -> Any:
            async with self._limiter:
                client = self._holder.get()
                return await client.chat.completions.create(messages=messages, stream=stream, **params)  # type: ignore[arg-type]

        response = await call_with_retries(
            attempt,
            timeout=self.timeout,
            max_retries=self.max_retries,
            base_delay=self.base_delay,
            what=what,
        )
        if stream:
            return _stream_text(response, what, measured)
        _report(getattr(response, "usage", None), getattr(response, "model", None), measured)
        if not response.choices:
            return ""
        content = response.choices[0].message.content
        return strip_think(content) if content else ""

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._holder.aclose()

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _report(usage: Any, model: str | None, measured: Measured | None) -> None:
    """Report an OpenAI ``usage`` object (absent: nothing) to ``measured``."""
    if usage is None or measured is None:
        return
    details = getattr(usage, "prompt_tokens_details", None)
    report_usage(
        getattr(usage, "prompt_tokens", None),
        getattr(usage, "completion_tokens", None),
        getattr(details, "cached_tokens", None) if details is not None else None,
        model,
        to=measured,
    )


async def _stream_text(stream: Any, what: str, measured: Measured | None) -> AsyncIterator[str]:
    import openai

    try:
        async for chunk in stream:
            if getattr(chunk, "usage", None) is not None:
                _report(chunk.usage, getattr(chunk, "model", None), measured)
            if not chunk.choices:
                continue
            piece = chunk.choices[0].delta.content
            if piece:
                yield piece
    except LightRAGError:
        raise
    except (TimeoutError, openai.APITimeoutError) as exc:
        raise LLMTimeout(f"{what} stream timed out: {exc}") from exc
    except Exception as exc:
        raise LLMError(f"{what} stream failed: {type(exc).__name__}: {exc}") from exc
    finally:
        await stream.close()


class OpenAIEmbedding:
    """An async embedding function for an OpenAI-compatible ``/embeddings`` endpoint.

    Arguments left as ``None`` come from the environment: ``EMBEDDING_MODEL``
    (default ``text-embedding-3-small``), ``EMBEDDING_BINDING_HOST`` or
    ``OPENAI_BASE_URL``, ``EMBEDDING_BINDING_API_KEY`` or ``OPENAI_API_KEY``,
    ``EMBEDDING_DIM`` (requested ``dimensions``).
    """

    _lightrag_pg_protected = True

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        dimensions: int | None = None,
        batch_size: int = 10,
        timeout: float = 60.0,
        max_retries: int = 3,
        base_delay: float = 1.0,
        max_concurrent: int = 8,
    ) -> None:
        if batch_size <= 0:
            raise ConfigurationError(f"batch_size must be positive, got {batch_size!r}")
        env_dim = _env("EMBEDDING_DIM")
        if dimensions is None and env_dim is not None:
            if not env_dim.isdigit() or int(env_dim) <= 0:
                raise ConfigurationError(f"EMBEDDING_DIM must be a positive integer, got {env_dim!r}")
            dimensions = int(env_dim)
        self.model = model or _env("EMBEDDING_MODEL") or "text-embedding-3-small"
        self.dimensions = dimensions
        self._holder = _ClientHolder(
            base_url or _env("EMBEDDING_BINDING_HOST", "OPENAI_BASE_URL"),
            api_key or _env("EMBEDDING_BINDING_API_KEY", "OPENAI_API_KEY"),
            timeout,
        )
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.base_delay = base_delay
        self._limiter = Limiter(max_concurrent)

    @property
    def base_url(self) -> str | None:
        """The endpoint base URL (``None``: the OpenAI API)."""
        return self._holder.base_url

    @property
    def embedding_dim(self) -> int | None:
        """The vector size, if known from ``dimensions`` or the model name."""
        return self.dimensions or _KNOWN_EMBEDDING_DIMS.get(self.model)

    async def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; returns a float32 array of shape ``(len(texts), dim)``."""
        batch = list(texts)
        if not batch:
            return np.zeros((0, self.embedding_dim or 0), dtype=np.float32)
        parts = await asyncio.gather(
            *(
                self._embed_batch(batch[i : i + self.batch_size], i)
                for i in range(0, len(batch), self.batch_size)
            )
        )
        return np.concatenate(parts, axis=0)

    async def _embed_batch(self, texts: list[str], offset: int) -> np.ndarray:
        inputs = [text if text else " " for text in texts]
        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}

        async def attempt() -> Any:
            async with self._limiter:
                client = self._holder.get()
                return await client.embeddings.create(
                    model=self.model, input=inputs, encoding_format="float", **extra
                )

        response = await call_with_retries(
            attempt,
            timeout=self.timeout,
            max_retries=self.max_retries,
            base_delay=self.base_delay,
            what=f"embedding of texts {offset}..{offset + len(texts) - 1} ({self.model})",
        )
        usage = getattr(response, "usage", None)
        if usage is not None:
            report_usage(getattr(usage, "prompt_tokens", None), 0, 0, self.model)
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = [row.embedding for row in rows]
        dim = self.embedding_dim or (len(vectors[0]) if vectors else 0)
        return validate_embeddings(vectors, len(texts), dim, self.model)

    def as_embedding_func(
        self, embedding_dim: int | None = None, max_token_size: int | None = 8192
    ) -> EmbeddingFunc:
        """Wrap this client in an :class:`EmbeddingFunc` with a known dimension."""
        dim = embedding_dim or self.embedding_dim
        if dim is None:
            raise ConfigurationError(
                f"embedding dimension of model {self.model!r} is unknown; "
                "pass dimensions= or set EMBEDDING_DIM"
            )
        return EmbeddingFunc(
            embedding_dim=dim, func=self, max_token_size=max_token_size, model_name=self.model
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._holder.aclose()

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
