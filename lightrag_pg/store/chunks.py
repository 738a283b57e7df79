"""Chunk store: ``text_chunks`` and ``chunk_vectors``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import numpy as np

from ..db.sqlfile import load_queries
from ..db.translate import translating
from ..types import UNKNOWN_SOURCE
from .rows import vector_texts

SQL = load_queries(__package__, "chunks.sql")


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A chunk ready to be stored."""

    id: str
    doc_id: str
    chunk_order_index: int
    tokens: int
    content: str
    file_path: str = UNKNOWN_SOURCE


class ChunkStore:
    """Chunks and their vectors, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @translating
    async def upsert(self, chunks: Sequence[ChunkRow], embeddings: np.ndarray) -> None:
        """Store chunks with their embeddings (one row of ``embeddings`` per chunk)."""
        if not chunks:
            return
        await self.conn.execute(
            SQL["upsert_chunks"],
            [c.id for c in chunks],
            [c.doc_id for c in chunks],
            [c.chunk_order_index for c in chunks],
            [c.tokens for c in chunks],
            [c.content for c in chunks],
            [c.file_path for c in chunks],
            vector_texts(embeddings),
        )

    @translating
    async def get(self, ids: Sequence[str]) -> list[asyncpg.Record]:
        """Chunks in the order given; unknown ids are skipped."""
        return await self.conn.fetch(SQL["chunks_by_ids"], list(ids))

    @translating
    async def with_similarity(self, ids: Sequence[str], query: np.ndarray) -> list[asyncpg.Record]:
        """Chunks by id (any order) with their cosine similarity to ``query``."""
        return await self.conn.fetch(SQL["chunks_with_similarity"], list(ids), np.asarray(query, np.float32))

    @translating
    async def search(self, query: np.ndarray, threshold: float, top_k: int) -> list[asyncpg.Record]:
        """Chunks nearest to ``query`` with similarity >= ``threshold``, best first."""
        return await self.conn.fetch(SQL["search_chunks"], np.asarray(query, np.float32), threshold, top_k)
