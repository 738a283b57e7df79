"""Translation of asyncpg errors into lightrag_pg errors, at the storage boundary."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import ParamSpec, TypeVar

import asyncpg

from ..errors import (
    ConcurrentUpdate,
    ConnectionLost,
    LightRAGError,
    ReferenceGone,
    StatementTimeout,
    StorageError,
)

P = ParamSpec("P")
T = TypeVar("T")


def translate(exc: BaseException) -> LightRAGError:
    """Map a driver exception onto the matching :class:`StorageError`."""
    if isinstance(exc, (asyncpg.SerializationError, asyncpg.DeadlockDetectedError)):
        return ConcurrentUpdate(str(exc))
    if isinstance(exc, asyncpg.ForeignKeyViolationError):
        return ReferenceGone(str(exc))
    if isinstance(exc, asyncpg.QueryCanceledError) and "statement timeout" in str(exc):
        return StatementTimeout(
            "PostgreSQL cancelled a statement that ran longer than the statement timeout "
            f"(setting statement_timeout_ms): {exc}"
        )
    if isinstance(
        exc,
        (
            asyncpg.ConnectionDoesNotExistError,
            asyncpg.PostgresConnectionError,
            asyncpg.InterfaceError,
            ConnectionError,
            OSError,
        ),
    ):
        return ConnectionLost(f"lost the connection to PostgreSQL: {exc}")
    if isinstance(exc, asyncpg.PostgresError):
        return StorageError(f"{type(exc).__name__}: {exc}")
    return StorageError(str(exc))


_DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError)


@asynccontextmanager
async def translated() -> AsyncIterator[None]:
    """Re-raise driver errors raised inside the block as lightrag_pg errors."""
    try:
        yield
    except _DRIVER_ERRORS as exc:
        raise translate(exc) from exc


def translating(func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Decorator form of :func:`translated` for store methods."""

    @functools.wraps(func)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(*args, **kwargs)
        except _DRIVER_ERRORS as exc:
            raise translate(exc) from exc

    return wrapper
