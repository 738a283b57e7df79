"""Timeouts, retries with exponential backoff, and per-event-loop concurrency limits."""

from __future__ import annotations

import asyncio
import functools
import random
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from ..errors import ConfigurationError, LightRAGError, LLMError, LLMTimeout

T = TypeVar("T")
P = ParamSpec("P")

MAX_BACKOFF = 60.0

_RETRYABLE_TYPES: tuple[type[BaseException], ...] = (
    TimeoutError,
    asyncio.TimeoutError,
    ConnectionError,
    LLMTimeout,
)
_TIMEOUT_TYPES: tuple[type[BaseException], ...] = (TimeoutError, asyncio.TimeoutError, LLMTimeout)


def _openai() -> Any:
    """The ``openai`` module if something has imported it, else None.

    An exception can only be one of openai's if openai is loaded, so the
    checks below never import it themselves.
    """
    return sys.modules.get("openai")


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed call is worth repeating (timeouts, 429, 5xx, lost connections)."""
    if isinstance(exc, _RETRYABLE_TYPES):
        return True
    openai = _openai()
    if openai is None:
        return False
    retryable = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError)
    if isinstance(exc, (*retryable, openai.InternalServerError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return bool(exc.status_code == 429 or exc.status_code >= 500)
    return False


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, _TIMEOUT_TYPES):
        return True
    openai = _openai()
    return openai is not None and isinstance(exc, openai.APITimeoutError)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) and not str(exc):
        return "timed out"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def backoff_delay(attempt: int, base_delay: float) -> float:
    """Delay before retry number ``attempt`` (0-based): exponential plus up to 10% jitter."""
    delay = min(base_delay * (2**attempt), MAX_BACKOFF)
    return delay + random.uniform(0.0, delay * 0.1)


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    *,
    timeout: float | None,
    max_retries: int,
    base_delay: float,
    what: str,
) -> T:
    """Run ``await fn()`` with a timeout, retrying transient failures.

    Each attempt is limited to ``timeout`` seconds (``None`` or ``<= 0``: no
    limit). Timeouts, rate limits (429), server errors (5xx) and connection
    errors are retried up to ``max_retries`` times with exponential backoff
    starting at ``base_delay`` seconds. Other lightrag_pg errors (for example
    :class:`~lightrag_pg.errors.EmbeddingError`) propagate unchanged; any other
    non-retryable error raises :class:`LLMError` at once. When retries run out,
    :class:`LLMTimeout` is raised if the last failure was a timeout, else
    :class:`LLMError`; the message names ``what``, the attempt count and the
    last error.
    """
    attempts = max(0, max_retries) + 1
    limit = timeout if timeout is not None and timeout > 0 else None
    last: BaseException | None = None
    for attempt in range(attempts):
        try:
            return await asyncio.wait_for(fn(), limit)
        except LightRAGError as exc:
            if not isinstance(exc, LLMTimeout):
                raise
            last = exc
        except Exception as exc:
            if not is_retryable(exc):
                raise LLMError(f"{what} failed: {_describe(exc)}") from exc
            last = exc
        if attempt + 1 < attempts:
            await asyncio.sleep(backoff_delay(attempt, base_delay))
    assert last is not None
    plural = "attempt" if attempts == 1 else "attempts"
    if _is_timeout(last):
        timed_out = isinstance(last, (TimeoutError, asyncio.TimeoutError)) and not str(last)
        detail = f"timed out after {limit}s" if timed_out else _describe(last)
        raise LLMTimeout(f"{what} failed after {attempts} {plural}: {detail}") from last
    raise LLMError(f"{what} failed after {attempts} {plural}: {_describe(last)}") from last


class Limiter:
    """An ``asyncio.Semaphore`` per running event loop.

    A plain semaphore is bound to the first loop that waits on it; keeping one
    per loop lets a client object be reused across ``asyncio.run`` calls.
    """

    def __init__(self, max_concurrent: int) -> None:
        if max_concurrent <= 0:
            raise ConfigurationError(f"max_concurrent must be positive, got {max_concurrent!r}")
        self.max_concurrent = max_concurrent
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def semaphore(self) -> asyncio.Semaphore:
        """The semaphore of the running event loop."""
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.max_concurrent)
            self._semaphores[loop] = sem
        return sem

    async def __aenter__(self) -> None:
        await self.semaphore().acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.semaphore().release()


def limited(func: Callable[P, Awaitable[T]], max_concurrent: int | Limiter) -> Callable[P, Awaitable[T]]:
    """Wrap an async callable so at most ``max_concurrent`` calls run at once."""
    limiter = max_concurrent if isinstance(max_concurrent, Limiter) else Limiter(max_concurrent)

    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> T:
        async with limiter:
            return await func(*args, **kwargs)

    return wrapper
