"""Graph store: entities and relations as typed tables (mirrored into AGE by triggers).

Every method is one SQL statement for the whole batch, whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg

from ..db.sqlfile import load_queries
from ..db.translate import translating
from .rows import EntityRow, MergeState, RelationRow, canonical_pair

SQL = load_queries(__package__, "graph.sql")


def _pair_arrays(pairs: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    canonical = [canonical_pair(a, b) for a, b in pairs]
    return [p[0] for p in canonical], [p[1] for p in canonical]


class GraphStore:
    """Entities and relations of one workspace, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @translating
    async def get_entities(self, names: Sequence[str]) -> list[EntityRow]:
        """Entities with their degrees, in the order given; unknown names are skipped."""
        rows = await self.conn.fetch(SQL["entities_by_names"], list(names))
        return [EntityRow.from_record(r) for r in rows]

    @translating
    async def node_degrees(self, names: Sequence[str]) -> dict[str, int]:
        """Degree of each name (0 when the entity does not exist)."""
        rows = await self.conn.fetch(SQL["node_degrees"], list(names))
        return {r["name"]: r["degree"] for r in rows}

    @translating
    async def get_relations(self, pairs: Sequence[tuple[str, str]]) -> list[RelationRow]:
        """Relations with their edge degrees, in the order given; pairs in either order."""
        rows = await self.conn.fetch(SQL["relations_by_pairs"], *_pair_arrays(pairs))
        return [RelationRow.from_record(r) for r in rows]

    @translating
    async def edge_degrees(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Sum of the endpoint degrees of each pair, keyed by the canonical pair."""
        rows = await self.conn.fetch(SQL["edge_degrees"], *_pair_arrays(pairs))
        return {(r["src"], r["tgt"]): r["degree"] for r in rows}

    @translating
    async def edges_of(self, names: Sequence[str]) -> list[RelationRow]:
        """Every relation touching any of ``names``, with edge degrees."""
        rows = await self.conn.fetch(SQL["edges_of"], list(names))
        return [RelationRow.from_record(r) for r in rows]

    @translating
    async def upsert_entities(self, rows: Sequence[EntityRow]) -> None:
        """Insert or replace entities."""
        if rows:
            await self.conn.fetch(SQL["upsert_entities"], [r.as_json() for r in rows])

    @translating
    async def upsert_entities_if_unchanged(self, rows: Sequence[EntityRow]) -> set[str]:
        """Write entities whose stored version still equals ``row.version``; return those written."""
        if not rows:
            return set()
        written = await self.conn.fetch(SQL["upsert_entities_if_unchanged"], [r.as_json() for r in rows])
        return {r["name"] for r in written}

    @translating
    async def ensure_entities(self, rows: Sequence[EntityRow]) -> set[str]:
        """Create the entities that do not exist yet; return the names created."""
        if not rows:
            return set()
        created = await self.conn.fetch(SQL["ensure_entities"], [r.as_json() for r in rows])
        return {r["name"] for r in created}

    @translating
    async def lock_entities(self, names: Sequence[str]) -> dict[str, EntityRow]:
        """Lock existing entities (in a fixed order) for a read-modify-write."""
        rows = await self.conn.fetch(SQL["lock_entities"], list(names))
        return {r["name"]: EntityRow.from_record(r) for r in rows}

    @translating
    async def upsert_relations(self, rows: Sequence[RelationRow]) -> None:
        """Insert or replace relations; both endpoints must exist."""
        if rows:
            await self.conn.fetch(SQL["upsert_relations"], [r.as_json() for r in rows])

    @translating
    async def upsert_relations_if_unchanged(self, rows: Sequence[RelationRow]) -> set[tuple[str, str]]:
        """Write relations whose stored version still equals ``row.version``; return those written."""
        if not rows:
            return set()
        written = await self.conn.fetch(SQL["upsert_relations_if_unchanged"], [r.as_json() for r in rows])
        return {(r["src"], r["tgt"]) for r in written}

    @translating
    async def delete_entities(self, names: Sequence[str]) -> set[str]:
        """Delete entities with their relations, vectors and document links."""
        rows = await self.conn.fetch(SQL["delete_entities"], list(names))
        return {r["name"] for r in rows}

    @translating
    async def delete_relations(self, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
        """Delete relations (pairs in either order) with their vectors and document links."""
        rows = await self.conn.fetch(SQL["delete_relations"], *_pair_arrays(pairs))
        return {(r["src"], r["tgt"]) for r in rows}

    @translating
    async def entities_for_merge(self, doc_id: str, names: Sequence[str]) -> dict[str, MergeState[EntityRow]]:
        """What a merge of ``doc_id`` into each name needs to know, in one statement."""
        rows = await self.conn.fetch(SQL["entities_for_merge"], list(names), doc_id)
        return {
            r["name"]: MergeState(
                EntityRow.from_record(r) if r["present"] else None, r["linked"], r["vector_content"]
            )
            for r in rows
        }

    @translating
    async def relations_for_merge(
        self, doc_id: str, pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], MergeState[RelationRow]]:
        """What a merge of ``doc_id`` into each canonical pair needs to know, in one statement."""
        rows = await self.conn.fetch(SQL["relations_for_merge"], *_pair_arrays(pairs), doc_id)
        return {
            (r["src"], r["tgt"]): MergeState(
                RelationRow.from_record(r) if r["present"] else None,
                r["linked"],
                r["vector_content"],
                frozenset(n for n, ok in ((r["src"], r["src_exists"]), (r["tgt"], r["tgt_exists"])) if ok),
            )
            for r in rows
        }

    @translating
    async def counts(self) -> tuple[int, int]:
        """Number of entities and of relations."""
        row = await self.conn.fetchrow(SQL["counts"])
        return row["entities"], row["relations"]
