"""Entity and relation vector tables, and similarity search over them."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import numpy as np

from ..db.dimensions import HalfvecCast
from ..db.sqlfile import load_vector_queries
from .rows import EntityRow, RelationRow, pair_columns, vectors


class VectorStore:
    """``entity_vectors`` and ``relation_vectors``, on one connection."""

    def __init__(self, conn: asyncpg.Connection, halfvec: HalfvecCast) -> None:
        self.conn = conn
        self.sql = load_vector_queries(__package__, "vectors.sql", halfvec)

    async def upsert_entities(
        self, names: Sequence[str], contents: Sequence[str], embeddings: np.ndarray
    ) -> None:
        """Store one vector per entity (the entities must exist)."""
        if names:
            await self.conn.execute(
                self.sql["upsert_entity_vectors"], list(names), list(contents), vectors(embeddings)
            )

    async def upsert_relations(
        self, pairs: Sequence[tuple[str, str]], contents: Sequence[str], embeddings: np.ndarray
    ) -> None:
        """Store one vector per relation (the relations must exist)."""
        if pairs:
            await self.conn.execute(
                self.sql["upsert_relation_vectors"], *pair_columns(pairs), list(contents), vectors(embeddings)
            )

    async def search_entities(self, query: np.ndarray, threshold: float, top_k: int) -> list[EntityRow]:
        """Entities nearest to ``query`` (similarity > threshold), with degrees and
        similarities, best first."""
        rows = await self.conn.fetch(self.sql["search_entities"], _query(query), threshold, top_k)
        return [EntityRow.from_record(r) for r in rows]

    async def search_relations(self, query: np.ndarray, threshold: float, top_k: int) -> list[RelationRow]:
        """Relations nearest to ``query`` (similarity > threshold), with edge degrees and
        similarities, best first."""
        rows = await self.conn.fetch(self.sql["search_relations"], _query(query), threshold, top_k)
        return [RelationRow.from_record(r) for r in rows]


def _query(query: np.ndarray) -> np.ndarray:
    return np.asarray(query, np.float32)
