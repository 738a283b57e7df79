"""Unit of work: one connection, one transaction, every store bound to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from ..db.translate import translated
from .cache import CacheStore
from .chunks import ChunkStore
from .documents import DocumentStore
from .graph import GraphStore
from .retrieval import RetrievalStore
from .vectors import VectorStore


class Stores:
    """Every store of a workspace, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.graph = GraphStore(conn)
        self.docs = DocumentStore(conn)
        self.chunks = ChunkStore(conn)
        self.vectors = VectorStore(conn)
        self.cache = CacheStore(conn)
        self.retrieval = RetrievalStore(conn)


@asynccontextmanager
async def unit_of_work(pool: asyncpg.Pool) -> AsyncIterator[Stores]:
    """Acquire one connection and run the block in one transaction.

    Commits when the block succeeds and rolls back when it raises; driver
    errors surface as :class:`~lightrag_pg.errors.StorageError` subclasses.
    """
    async with translated(), pool.acquire() as conn, conn.transaction():
        yield Stores(conn)


@asynccontextmanager
async def session(pool: asyncpg.Pool) -> AsyncIterator[Stores]:
    """Acquire one connection for reads, each statement in its own transaction."""
    async with translated(), pool.acquire() as conn:
        yield Stores(conn)
