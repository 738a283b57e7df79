"""The asyncpg pool of one workspace, with its per-connection init hook."""

from __future__ import annotations

import json
import logging

import asyncpg
from pgvector.asyncpg import register_vector

from .identifiers import search_path
from .sqlfile import load_queries
from .translate import translated

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


async def create_pool(
    dsn: str,
    workspace: str,
    *,
    min_size: int = 1,
    max_size: int = 8,
    statement_timeout_ms: int = 0,
) -> asyncpg.Pool:
    """Open a pool whose connections all have ``workspace`` first on search_path."""
    async with translated():
        return await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            init=init_connection,
            reset=keep_session,
            server_settings=server_settings(workspace, statement_timeout_ms),
        )
