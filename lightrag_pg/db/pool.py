"""The asyncpg pool of one workspace, with its per-connection init hook."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from ..errors import PoolExhausted
from .connect import CONNECT_ERRORS, connect_failure
from .embedded import redact_dsn
from .identifiers import search_path
from .sqlfile import load_queries

log = logging.getLogger(__name__)

SQL = load_queries(__package__, "pool.sql")

HNSW_EF_SEARCH = 200


async def init_connection(conn: asyncpg.Connection) -> None:
    """Register the pgvector and jsonb codecs and load AGE (when permitted)."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    has_age = await conn.fetchval(SQL["age_installed"])
    if has_age:
        try:
            await conn.execute(SQL["load_age"])
        except asyncpg.InsufficientPrivilegeError:
            log.debug("LOAD 'age' not permitted; Cypher needs age in session_preload_libraries")


async def keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset on release: nothing is sent to the server.

    asyncpg's default reset costs one round trip per checkout (closing cursors,
    UNLISTEN, RESET ALL, releasing advisory locks), which was a third of a
    query's statements. asyncpg still rolls back a transaction left open before
    calling this, without a round trip when there is none. Nothing else needs
    resetting because lightrag_pg never leaves session state on a pooled
    connection: session settings are fixed at connect time (``server_settings``),
    settings inside statements are ``SET LOCAL`` / ``set_config(..., true)``,
    cursors live only inside transactions, nothing LISTENs, and session advisory
    locks are held on a dedicated connection outside the pool
    (:mod:`lightrag_pg.index.locks`). Code that changes session state on a
    connection from ``rag.pool`` must call ``await conn.reset()`` before releasing it.
    """


def server_settings(workspace: str, statement_timeout_ms: int = 0) -> dict[str, str]:
    """Session settings applied once per connection, at connect time."""
    settings = {
        "search_path": search_path(workspace),
        "hnsw.ef_search": str(HNSW_EF_SEARCH),
        "hnsw.iterative_scan": "relaxed_order",
        "application_name": "lightrag_pg",
    }
    if statement_timeout_ms:
        settings["statement_timeout"] = str(statement_timeout_ms)
    return settings


class WorkspacePool(asyncpg.Pool):
    """An asyncpg pool whose ``acquire`` waits a bounded time and says what it waited for.

    Waiting longer than ``acquire_timeout`` seconds for a free connection raises
    :class:`~lightrag_pg.errors.PoolExhausted` instead of hanging: the usual
    cause is a caller holding every connection (a ``rag.session()`` or
    ``rag.unit_of_work()`` block) while calling the same LightRAG.
    ``embedding_dim`` is the workspace's vector width, which the stores on its
    connections write their vector searches for.
    """

    __slots__ = ("acquire_timeout", "embedding_dim", "workspace")

    def acquire(self, *, timeout: float | None = None) -> _BoundedAcquire:  # type: ignore[override]
        """Like :meth:`asyncpg.Pool.acquire`, with the pool's timeout by default."""
        wait = self.acquire_timeout if timeout is None else timeout
        return _BoundedAcquire(super().acquire(timeout=wait), self, wait)


class _BoundedAcquire:
    """The context manager of :meth:`WorkspacePool.acquire`."""

    __slots__ = ("_inner", "_pool", "_timeout")

    def __init__(self, inner: Any, pool: WorkspacePool, timeout: float) -> None:
        self._inner, self._pool, self._timeout = inner, pool, timeout

    async def __aenter__(self) -> asyncpg.Connection:
        try:
            return await self._inner.__aenter__()
        except asyncio.TimeoutError as exc:
            raise PoolExhausted(
                f"no free connection in the pool of workspace {self._pool.workspace!r} after "
                f"{self._timeout:g} s (pool_max_size={self._pool.get_max_size()}, "
                "pool_acquire_timeout): is a rag.session() or rag.unit_of_work() block held "
                "while calling the same LightRAG? Otherwise raise pool_max_size"
            ) from exc

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.__aexit__(*exc)


async def create_pool(
    dsn: str,
    workspace: str,
    *,
    embedding_dim: int,
    min_size: int = 1,
    max_size: int = 8,
    statement_timeout_ms: int = 0,
    connect_timeout: float = 10.0,
    acquire_timeout: float = 30.0,
) -> WorkspacePool:
    """Open a pool whose connections all have ``workspace`` (of ``embedding_dim``
    dimensions) first on search_path."""
    pool = WorkspacePool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        max_queries=50_000,
        max_inactive_connection_lifetime=300.0,
        init=init_connection,
        reset=keep_session,
        loop=None,
        connection_class=asyncpg.Connection,
        record_class=asyncpg.Record,
        server_settings=server_settings(workspace, statement_timeout_ms),
        timeout=connect_timeout,
    )
    pool.acquire_timeout = acquire_timeout
    pool.workspace = workspace
    pool.embedding_dim = embedding_dim
    try:
        return await pool
    except CONNECT_ERRORS as exc:
        raise connect_failure(exc, redact_dsn(dsn), connect_timeout) from exc
