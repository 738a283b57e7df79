"""Chunk store: ``text_chunks`` and ``chunk_vectors``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import numpy as np

from ..db.sqlfile import load_queries
from ..db.translate import translating
from .rows import ChunkRow, columns, vectors

SQL = load_queries(__package__, "chunks.sql")


@dataclass(frozen=True, slots=True)
class PickedChunks:
    """The merged chunks of a query (vector search, then the VECTOR picks behind the
    kept entities and relations), how many were merged before the cut, and whether
    a side needs the WEIGHT pick instead."""

    chunks: list[ChunkRow]
    merged_count: int
    needs_weight: bool


def _flat_source_ids(source_ids: Sequence[Sequence[str]]) -> tuple[list[int], list[str]]:
    """Item ranks and chunk ids, one pair per listed id, for ``unnest($n::int[], $m::text[])``."""
    items = [rank for rank, ids in enumerate(source_ids) for _ in ids]
    return items, [cid for ids in source_ids for cid in ids]


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
            SQL["upsert_chunks"], *columns((c.values() for c in chunks), 6), vectors(embeddings)
        )

    @translating
    async def get(self, ids: Sequence[str]) -> list[ChunkRow]:
        """Chunks in the order given; unknown ids are skipped."""
        return [ChunkRow.from_record(r) for r in await self.conn.fetch(SQL["chunks_by_ids"], list(ids))]

    @translating
    async def with_similarity(self, ids: Sequence[str], query: np.ndarray) -> list[ChunkRow]:
        """Chunks by id (any order) with their cosine similarity to ``query``."""
        rows = await self.conn.fetch(SQL["chunks_with_similarity"], list(ids), np.asarray(query, np.float32))
        return [ChunkRow.from_record(r) for r in rows]

    @translating
    async def search(self, query: np.ndarray, threshold: float, top_k: int) -> list[ChunkRow]:
        """Chunks nearest to ``query`` with similarity >= ``threshold``, best first."""
        rows = await self.conn.fetch(SQL["search_chunks"], np.asarray(query, np.float32), threshold, top_k)
        return [ChunkRow.from_record(r) for r in rows]

    @translating
    async def picked(
        self,
        query: np.ndarray,
        *,
        threshold: float,
        vector_top_k: int,
        entity_sources: Sequence[Sequence[str]],
        relation_sources: Sequence[Sequence[str]],
        related_chunks: int,
        limit: int | None,
    ) -> PickedChunks:
        """Vector-search chunks merged with the VECTOR-picked chunks of the kept entities and
        relations (``*_sources``: each one's source chunk ids, in rank order), cut to ``limit``
        (None: all), in one statement."""
        rows = await self.conn.fetch(
            SQL["picked_chunks"],
            np.asarray(query, np.float32),
            threshold,
            vector_top_k,
            *_flat_source_ids(entity_sources),
            *_flat_source_ids(relation_sources),
            related_chunks,
            limit,
        )
        chunks = [ChunkRow.from_record(r) for r in rows if r["id"] is not None]
        return PickedChunks(chunks, rows[0]["merged_count"] or 0, rows[0]["needs_weight"])
