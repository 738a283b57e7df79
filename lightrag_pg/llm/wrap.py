"""Give user-supplied LLM and embedding callables limits, timeouts and retries."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from ..config import Settings
from ..errors import ConfigurationError
from .embedding_func import EmbeddingFunc
from .retry import Limiter, call_with_retries

LLMFunc = Callable[..., Awaitable[str | AsyncIterator[str]]]
"""``async (prompt, system_prompt=None, history_messages=None, *, stream=False, **kw)``."""


def _is_protected(func: Any) -> bool:
    return bool(getattr(func, "_lightrag_pg_protected", False))


def describe_llm(func: Any) -> str:
    """What an LLM function talks to, for messages: model and endpoint, else its name."""
    model = getattr(func, "model", None)
    if model is not None:
        return f"model {model!r} at {getattr(func, 'base_url', None) or 'the OpenAI API'}"
    return f"function {getattr(func, '__name__', type(func).__name__)!r}"


def llm_model_name(func: Any) -> str:
    """The model an LLM function talks to (its ``model``), else its name, for the accounting."""
    if func is None:
        return "none"
    model = getattr(func, "model", None)
    if isinstance(model, str) and model:
        return model
    return str(getattr(func, "__name__", type(func).__name__))


def wrap_llm(func: LLMFunc, *, settings: Settings) -> LLMFunc:
    """Wrap an upstream-style async LLM function with limits, timeout and retries.

    The result runs at most ``settings.llm_max_async`` calls at once, limits
    each attempt to ``settings.llm_timeout`` seconds and retries transient
    failures ``settings.max_retries`` times (backoff from
    ``settings.retry_base_delay``). Functions that already do this
    (:class:`~lightrag_pg.llm.openai_client.OpenAIChat`, or anything already
    wrapped) are returned unchanged.
    """
    if not callable(func):
        raise ConfigurationError("llm_model_func must be an async callable")
    if _is_protected(func):
        return func
    limiter = Limiter(settings.llm_max_async)

    @functools.wraps(func)
    async def wrapped(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: Sequence[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> str | AsyncIterator[str]:
        async def attempt() -> str | AsyncIterator[str]:
            async with limiter:
                return await func(
                    prompt,
                    system_prompt=system_prompt,
                    history_messages=history_messages,
                    **kwargs,
                )

        return await call_with_retries(
            attempt,
            timeout=settings.llm_timeout,
            max_retries=settings.max_retries,
            base_delay=settings.retry_base_delay,
            what=f"LLM call ({getattr(func, '__name__', type(func).__name__)})",
        )

    wrapped._lightrag_pg_protected = True  # type: ignore[attr-defined]
    return wrapped


def wrap_embedding(embedding_func: EmbeddingFunc, *, settings: Settings) -> EmbeddingFunc:
    """Wrap an :class:`EmbeddingFunc` with batching, limits, timeout and retries.

    Texts are sent in batches of ``settings.embedding_batch_num``, at most
    ``settings.embedding_max_async`` batches at once. Each batch is validated
    by ``embedding_func``; an :class:`~lightrag_pg.errors.EmbeddingError`
    (wrong shape) is raised at once, never retried. An ``EmbeddingFunc`` whose
    ``func`` already does all this (an ``OpenAIEmbedding``, or anything already
    wrapped) is returned unchanged.
    """
    if not isinstance(embedding_func, EmbeddingFunc):
        raise ConfigurationError("embedding_func must be an EmbeddingFunc")
    if _is_protected(embedding_func.func):
        return embedding_func
    limiter = Limiter(settings.embedding_max_async)
    batch_size = settings.embedding_batch_num
    name = embedding_func.model_name

    async def embed_batch(batch: list[str], offset: int) -> np.ndarray:
        async def attempt() -> np.ndarray:
            async with limiter:
                return await embedding_func(batch)

        return await call_with_retries(
            attempt,
            timeout=settings.embedding_timeout,
            max_retries=settings.max_retries,
            base_delay=settings.retry_base_delay,
            what=f"embedding of texts {offset}..{offset + len(batch) - 1} ({name})",
        )

    async def batched(texts: list[str]) -> np.ndarray:
        if len(texts) <= batch_size:  # already a batch (the pipeline sends batches of this size)
            return await embed_batch(texts, 0)
        parts = await asyncio.gather(
            *(embed_batch(texts[i : i + batch_size], i) for i in range(0, len(texts), batch_size))
        )
        return np.concatenate(parts, axis=0)

    batched._lightrag_pg_protected = True  # type: ignore[attr-defined]
    return dataclasses.replace(embedding_func, func=batched)
