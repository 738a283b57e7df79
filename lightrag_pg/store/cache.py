"""LLM response cache, keyed by a hash of what was asked."""

from __future__ import annotations

import hashlib

import asyncpg

from ..db.sqlfile import load_queries
from ..db.translate import translating

SQL = load_queries(__package__, "cache.sql")


def cache_key(cache_type: str, mode: str, *parts: str) -> str:
    """A stable key for a prompt: ``type:mode:md5(parts)``."""
    digest = hashlib.md5("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{cache_type}:{mode}:{digest}"


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
