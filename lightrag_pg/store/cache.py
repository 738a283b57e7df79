"""LLM response cache, keyed by a hash of what was asked."""

from __future__ import annotations

from typing import Any

import asyncpg

from ..db.sqlfile import load_queries
from ..db.translate import translated, translating

SQL = load_queries(__package__, "cache.sql")


class CacheStore:
    """``llm_cache`` on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @translating
    async def get(self, key: str) -> str | None:
        """The cached answer for ``key``, if any."""
        return await self.conn.fetchval(SQL["get"], key)

    @translating
    async def put(
        self,
        key: str,
        response: str,
        *,
        cache_type: str,
        mode: str = "default",
        prompt: str = "",
        chunk_id: str | None = None,
    ) -> None:
        """Store an answer."""
        await self.conn.execute(SQL["put"], key, cache_type, mode, chunk_id, prompt, response)


class PoolCache:
    """``llm_cache`` through a pool: each read and write on its own connection, autocommit."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self, key: str) -> str | None:
        """The cached answer for ``key``, if any."""
        async with translated(), self.pool.acquire() as conn:
            return await CacheStore(conn).get(key)

    async def put(self, key: str, response: str, **fields: Any) -> None:
        """Store an answer (the fields of :meth:`CacheStore.put`)."""
        async with translated(), self.pool.acquire() as conn:
            await CacheStore(conn).put(key, response, **fields)
