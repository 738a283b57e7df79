"""Staging vectors of a new embedding model beside the live ones, and swapping them in.

The shadow tables (``<table>_next``) have the live vector tables' columns at
the new width; ``reembed_state`` names the model they are staged for. Which
rows still need a vector is a query, not a bookmark: a live row is pending
while no staged row carries the same text (see ``reembed.sql``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import asyncpg
import numpy as np

from ..db.dimensions import VECTOR_HNSW_MAX_DIM
from ..db.identifiers import relation_of
from ..db.sqlfile import load_queries, render, statements
from .rows import vectors, vectors_by_id

SQL = load_queries(__package__, "reembed.sql")

Kind = Literal["entities", "relations", "chunks"]
KINDS: tuple[Kind, ...] = ("entities", "chunks", "relations")
"""The kinds in the order they are staged: chunks before relations, whose
composed vectors take in the staged chunk vectors."""
SHADOWS: dict[Kind, str] = {
    "entities": "entity_vectors_next",
    "relations": "relation_vectors_next",
    "chunks": "chunk_vectors_next",
}
FIRST_KEY = ("", "")
"""The keyset position before every row."""


@dataclass(frozen=True, slots=True)
class ReembedState:
    """The re-embed in progress: the model its vectors are staged for."""

    embedding_model: str
    embedding_dim: int
    started_at: datetime


@dataclass(frozen=True, slots=True)
class PendingVector:
    """A live vector row without a current staged vector: its key and the text to embed.

    ``key`` is ``(name, "")`` for entities, ``(src, tgt)`` for relations and
    ``(chunk id, "")`` for chunks.
    """

    key: tuple[str, str]
    content: str


@dataclass(frozen=True, slots=True)
class StagingCounts:
    """Rows of each live vector table, and how many of them are not staged (or stale)."""

    total: dict[Kind, int]
    pending: dict[Kind, int]

    @property
    def all_pending(self) -> int:
        return sum(self.pending.values())


class ReembedStore:
    """``reembed_state`` and the shadow vector tables, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def state(self) -> ReembedState | None:
        """The re-embed in progress, or None."""
        row = await self.conn.fetchrow(SQL["read_state"])
        return None if row is None else ReembedState(row[0], row[1], row[2])

    async def begin(self, model: str, dim: int) -> None:
        """Record a re-embed to ``model`` and create its empty shadow tables (call in a transaction)."""
        await self.conn.execute(SQL["insert_state"], model, dim)
        for statement in statements(render(SQL["create_shadows"], dim=dim)):
            await self.conn.execute(statement)

    async def discard(self) -> None:
        """Drop the shadow tables and the state of the re-embed in progress (if any)."""
        for statement in statements(SQL["discard"]):
            await self.conn.execute(statement)

    async def counts(self) -> StagingCounts:
        """Total and pending rows per kind, in one statement."""
        row = await self.conn.fetchrow(SQL["counts"])
        return StagingCounts(
            total={k: row[f"{k}_total"] for k in KINDS},
            pending={k: row[f"{k}_pending"] for k in KINDS},
        )

    async def pending(self, kind: Kind, after: tuple[str, str], limit: int) -> list[PendingVector]:
        """Up to ``limit`` pending rows of ``kind`` after key ``after``, in key order."""
        if kind == "relations":
            rows = await self.conn.fetch(SQL["pending_relations"], after[0], after[1], limit)
        else:
            rows = await self.conn.fetch(SQL[f"pending_{kind}"], after[0], limit)
        return [PendingVector((r["k1"], r["k2"]), r["content"]) for r in rows]

    async def stage(self, kind: Kind, rows: Sequence[PendingVector], embeddings: np.ndarray) -> None:
        """Store the new vectors of ``rows`` (one row of ``embeddings`` each) in the shadow table."""
        if not rows:
            return
        contents = [r.content for r in rows]
        if kind == "relations":
            params: list[object] = [[r.key[0] for r in rows], [r.key[1] for r in rows]]
        else:
            params = [[r.key[0] for r in rows]]
        await self.conn.execute(SQL[f"stage_{kind}"], *params, contents, vectors(embeddings))

    async def staged_chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The staged vectors of chunk ``ids`` by id; ids not staged are left out."""
        return vectors_by_id(await self.conn.fetch(SQL["staged_chunk_vectors"], list(ids)), "chunk_id")

    async def build_indexes(self, dim: int) -> None:
        """Build the shadow tables' HNSW indexes (halfvec above 2,000 dimensions) unless built."""
        block = "hnsw_vector" if dim <= VECTOR_HNSW_MAX_DIM else "hnsw_halfvec"
        for shadow in SHADOWS.values():
            table, index = relation_of(shadow), relation_of(f"{shadow}_hnsw")
            assert table is not None and index is not None
            await self.conn.execute(render(SQL[block], table=table, index=index, dim=dim))

    async def lock_for_swap(self) -> None:
        """Block writers of the vector tables and their parents until the transaction ends."""
        await self.conn.execute(SQL["lock_for_swap"])

    async def swap(self) -> None:
        """Put the shadow tables in place of the live ones (call in a transaction, after
        :meth:`lock_for_swap` and a check that nothing is pending)."""
        for statement in statements(SQL["swap"]):
            await self.conn.execute(statement)
