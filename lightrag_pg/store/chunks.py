"""Chunk store: ``text_chunks`` and ``chunk_vectors``."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import numpy as np

from ..db.dimensions import HalfvecCast
from ..db.sqlfile import load_vector_queries
from .rows import ChunkRow, columns, vectors, vectors_by_id


class ChunkStore:
    """Chunks and their vectors, on one connection."""

    def __init__(self, conn: asyncpg.Connection, halfvec: HalfvecCast) -> None:
        self.conn = conn
        self.sql = load_vector_queries(__package__, "chunks.sql", halfvec)

    async def upsert(self, chunks: Sequence[ChunkRow], embeddings: np.ndarray) -> None:
        """Store chunks with their embeddings (one row of ``embeddings`` per chunk)."""
        if not chunks:
            return
        await self.conn.execute(
            self.sql["upsert_chunks"], *columns((c.values() for c in chunks), 6), vectors(embeddings)
        )

    async def get(self, ids: Sequence[str]) -> list[ChunkRow]:
        """Chunks in the order given; unknown ids are skipped."""
        return [ChunkRow.from_record(r) for r in await self.conn.fetch(self.sql["chunks_by_ids"], list(ids))]

    async def any(self) -> bool:
        """Whether the workspace holds any chunk."""
        return bool(await self.conn.fetchval(self.sql["any_chunk"]))

    async def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of chunk ``ids`` by id; unknown ids are left out."""
        return vectors_by_id(await self.conn.fetch(self.sql["chunk_vectors_by_ids"], list(ids)), "chunk_id")

    async def with_similarity(self, ids: Sequence[str], query: np.ndarray) -> list[ChunkRow]:
        """Chunks by id (any order) with their cosine similarity to ``query``."""
        rows = await self.conn.fetch(self.sql["chunks_with_similarity"], list(ids), _query(query))
        return [ChunkRow.from_record(r) for r in rows]

    async def search(self, query: np.ndarray, threshold: float, top_k: int) -> list[ChunkRow]:
        """Chunks nearest to ``query`` with similarity > ``threshold``, best first."""
        rows = await self.conn.fetch(self.sql["search_chunks"], _query(query), threshold, top_k)
        return [ChunkRow.from_record(r) for r in rows]


def _query(query: np.ndarray) -> np.ndarray:
    return np.asarray(query, np.float32)
