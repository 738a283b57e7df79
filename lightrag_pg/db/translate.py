"""Translation of asyncpg errors into lightrag_pg errors, at the storage boundary.

The boundary is the workspace pool's connection (``WorkspacePool.acquire``), which
every unit of work, session and store goes through; code on a connection of its
own (workspace creation, advisory locks) uses :func:`translated`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from ..errors import (
    ConcurrentUpdate,
    ConnectionLost,
    LightRAGError,
    ReferenceGone,
    StatementTimeout,
    StorageError,
)


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


DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, ConnectionError)
"""The exceptions :func:`translated` maps; any other passes unchanged (a file's ``OSError``
raised while a connection is held is no lost connection)."""


@asynccontextmanager
async def translated() -> AsyncIterator[None]:
    """Re-raise driver errors raised inside the block as lightrag_pg errors."""
    try:
        yield
    except DRIVER_ERRORS as exc:
        raise translate(exc) from exc
