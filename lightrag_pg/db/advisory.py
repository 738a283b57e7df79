"""Advisory locks: their keys and statements, the document locks and the re-embed lock.

Transaction locks (``XACT_LOCK``) are taken by the statements that need them.
Session locks are held on a dedicated connection outside the pool, so documents
in flight never starve the pool; if the process dies, PostgreSQL closes the
session and the locks are released (the next run picks the documents up).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import asyncpg

from ..errors import LightRAGError
from .connect import connect
from .identifiers import WorkspaceName
from .sqlfile import load_queries
from .translate import translated

SQL = load_queries(__package__, "advisory.sql")
XACT_LOCK = SQL["xact_lock"]
TRY_LOCK = SQL["try_lock"]
UNLOCK = SQL["unlock"]
TRY_LOCK_MANY = SQL["try_lock_many"]
UNLOCK_MANY = SQL["unlock_many"]

_PREFIX = "lightrag_pg"


def lock_key(kind: str, *parts: str) -> str:
    """The text key of one lock, e.g. ``lock_key("doc", workspace, doc_id)``.

    Kinds in use: ``extensions`` (creating extensions), ``workspace`` (creating,
    migrating or dropping one workspace), ``doc`` (processing one document),
    ``reembed`` (re-embedding one workspace).
    """
    return ":".join((_PREFIX, kind, *parts))


@asynccontextmanager
async def session_lock(
    dsn: str, key: str, refusal: LightRAGError, connect_timeout: float = 10.0
) -> AsyncIterator[None]:
    """Hold the session lock ``key`` (on a connection of its own) for the block, or raise
    ``refusal`` at once when another session holds it."""
    conn = await connect(dsn, timeout=connect_timeout)
    try:
        async with translated():
            taken = await conn.fetchval(TRY_LOCK, key)
        if not taken:
            raise refusal
        yield
    finally:
        await conn.close()


class DocumentLocks:
    """Try-locks on document ids of one workspace, shared by every insert of a LightRAG."""

    def __init__(self, dsn: str, workspace: WorkspaceName, connect_timeout: float = 10.0) -> None:
        self.dsn = dsn
        self.workspace = workspace
        self.connect_timeout = connect_timeout
        self._conn: asyncpg.Connection | None = None
        self._mutex = asyncio.Lock()
        self._held: set[str] = set()

    def _key(self, doc_id: str) -> str:
        return lock_key("doc", self.workspace, doc_id)

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is None or self._conn.is_closed():
            self._held.clear()
            self._conn = await connect(self.dsn, timeout=self.connect_timeout)
        return self._conn

    async def try_acquire(self, doc_id: str) -> bool:
        """Lock ``doc_id`` unless this process or another one already holds it."""
        async with self._mutex, translated():
            if doc_id in self._held:
                return False
            conn = await self._connection()
            if not await conn.fetchval(TRY_LOCK, self._key(doc_id)):
                return False
            self._held.add(doc_id)
            return True

    async def try_acquire_all(self, doc_ids: Sequence[str]) -> list[str]:
        """Lock every one of ``doc_ids``, or none: return those held elsewhere (empty when
        all were taken), in one statement (two when some were busy)."""
        async with self._mutex, translated():
            busy = sorted(set(doc_ids) & self._held)
            if busy:
                return busy
            conn = await self._connection()
            keys = {self._key(d): d for d in doc_ids}
            taken = {keys[r["k"]] for r in await conn.fetch(TRY_LOCK_MANY, list(keys))}
            if len(taken) < len(keys):
                await conn.fetchval(UNLOCK_MANY, [self._key(d) for d in taken])
                return sorted(set(doc_ids) - taken)
            self._held |= taken
            return []

    async def release_all(self, doc_ids: Sequence[str]) -> None:
        """Unlock ``doc_ids`` taken by :meth:`try_acquire_all`, in one statement."""
        async with self._mutex:
            mine = [d for d in doc_ids if d in self._held]
            self._held -= set(mine)
            if mine and self._conn is not None and not self._conn.is_closed():
                async with translated():
                    await self._conn.fetchval(UNLOCK_MANY, [self._key(d) for d in mine])

    async def release(self, doc_id: str) -> None:
        """Unlock ``doc_id`` (a lost connection has released it already)."""
        async with self._mutex:
            if doc_id not in self._held:
                return
            self._held.discard(doc_id)
            if self._conn is not None and not self._conn.is_closed():
                async with translated():
                    await self._conn.fetchval(UNLOCK, self._key(doc_id))

    async def close(self) -> None:
        """Close the lock connection, releasing every lock."""
        async with self._mutex:
            self._held.clear()
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
