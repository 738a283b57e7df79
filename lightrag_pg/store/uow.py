"""Unit of work: one connection, one transaction, every store bound to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from ..db.dimensions import HalfvecCast
from ..db.identifiers import WorkspaceName
from ..db.pool import WorkspacePool
from .cache import CacheStore
from .chunks import ChunkStore
from .documents import DocumentStore
from .graph import GraphStore
from .pipeline_state import PipelineStateStore
from .retrieval import RetrievalStore
from .statistics import StatisticsStore
from .subgraph import SubgraphStore
from .usage import UsageStore
from .vectors import VectorStore
from .workspace import WorkspaceStore


class Stores:
    """Every store of a workspace, bound to one connection; vector searches are written
    for the workspace's ``embedding_dim`` so that they use its HNSW indexes."""

    def __init__(self, conn: asyncpg.Connection, embedding_dim: int, workspace: WorkspaceName) -> None:
        halfvec = HalfvecCast(embedding_dim)
        self.conn = conn
        self.graph = GraphStore(conn)
        self.docs = DocumentStore(conn)
        self.chunks = ChunkStore(conn, halfvec)
        self.vectors = VectorStore(conn, halfvec)
        self.cache = CacheStore(conn)
        self.retrieval = RetrievalStore(conn, halfvec)
        self.statistics = StatisticsStore(conn)
        self.usage = UsageStore(conn)
        self.subgraph = SubgraphStore(conn)
        self.status = PipelineStateStore(conn)
        self.workspace = WorkspaceStore(conn, workspace)


@asynccontextmanager
async def unit_of_work(pool: WorkspacePool) -> AsyncIterator[Stores]:
    """Acquire one connection and run the block in one transaction.

    Commits when the block succeeds and rolls back when it raises; driver
    errors surface as :class:`~lightrag_pg.errors.StorageError` subclasses
    (translated by the pool's ``acquire``).
    """
    async with pool.acquire() as conn, conn.transaction():
        yield Stores(conn, pool.embedding_dim, pool.workspace)


@asynccontextmanager
async def session(pool: WorkspacePool) -> AsyncIterator[Stores]:
    """Acquire one connection for reads, each statement in its own transaction."""
    async with pool.acquire() as conn:
        yield Stores(conn, pool.embedding_dim, pool.workspace)
