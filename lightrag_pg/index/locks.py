"""Per-document locks that other processes see and that die with this one.

Session advisory locks, all held on one dedicated connection (outside the
pool, so documents in flight never starve the pool). If the process dies,
PostgreSQL closes the session and the locks are released; the next run
picks the documents up.
"""

from __future__ import annotations

import asyncio

import asyncpg

from ..db.advisory import TRY_LOCK, UNLOCK, lock_key
from ..db.connect import connect
from ..db.translate import translated


class DocumentLocks:
    """Try-locks on document ids of one workspace, shared by every insert of a LightRAG."""

    def __init__(self, dsn: str, workspace: str, connect_timeout: float = 10.0) -> None:
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
