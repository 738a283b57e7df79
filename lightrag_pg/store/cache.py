"""LLM response cache, keyed by a hash of what was asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import asyncpg

from ..db.pool import WorkspacePool
from ..db.sqlfile import load_queries

SQL = load_queries(__package__, "cache.sql")


class Answer(Protocol):
    """An answer to store with the fields kept with it."""

    @property
    def key(self) -> str: ...
    @property
    def response(self) -> str: ...
    @property
    def cache_type(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def chunk_id(self) -> str | None: ...


class CacheStore:
    """``llm_cache`` on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def get(self, key: str) -> str | None:
        """The cached answer for ``key``, if any."""
        answer: str | None = await self.conn.fetchval(SQL["get"], key)
        return answer

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

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached answers for any of ``keys``, by key."""
        rows = await self.conn.fetch(SQL["get_many"], list(keys))
        return {r["id"]: r["response"] for r in rows}

    async def put_many(self, answers: Sequence[Answer]) -> None:
        """Store answers (distinct keys) in one statement."""
        if answers:
            await self.conn.execute(
                SQL["put_many"],
                [a.key for a in answers],
                [a.cache_type for a in answers],
                [a.mode for a in answers],
                [a.chunk_id for a in answers],
                [a.prompt for a in answers],
                [a.response for a in answers],
            )


class PoolCache:
    """``llm_cache`` through a pool: each read and write on its own connection, autocommit."""

    def __init__(self, pool: WorkspacePool) -> None:
        self.pool = pool

    async def get(self, key: str) -> str | None:
        """The cached answer for ``key``, if any."""
        async with self.pool.acquire() as conn:
            return await CacheStore(conn).get(key)

    async def put(self, key: str, response: str, **fields: Any) -> None:
        """Store an answer (the fields of :meth:`CacheStore.put`)."""
        async with self.pool.acquire() as conn:
            await CacheStore(conn).put(key, response, **fields)

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached answers for any of ``keys``, by key, in one statement."""
        async with self.pool.acquire() as conn:
            return await CacheStore(conn).get_many(keys)

    async def put_many(self, answers: Sequence[Answer]) -> None:
        """Store answers (distinct keys) in one statement."""
        if answers:
            async with self.pool.acquire() as conn:
                await CacheStore(conn).put_many(answers)
