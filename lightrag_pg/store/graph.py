"""Graph store: entities and relations as typed tables (mirrored into AGE by triggers).

Every method is one SQL statement for the whole batch, whatever its size.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from ..db.sqlfile import load_queries
from ..db.translate import translating
from .rows import EntityRow, MergeState, RelationRow, columns, pair_columns

SQL = load_queries(__package__, "graph.sql")


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
    async def edges_of(self, names: Sequence[str]) -> list[RelationRow]:
        """Every relation touching any of ``names``, with edge degrees."""
        rows = await self.conn.fetch(SQL["edges_of"], list(names))
        return [RelationRow.from_record(r) for r in rows]

    @translating
    async def upsert_entities_if_unchanged(self, rows: Sequence[EntityRow]) -> set[str]:
        """Write entities whose stored version still equals ``row.version`` (0: not stored yet);
        return the names written."""
        if not rows:
            return set()
        written = await self.conn.fetch(
            SQL["upsert_entities_if_unchanged"], *columns((r.values() for r in rows), 7)
        )
        return {r["name"] for r in written}

    @translating
    async def ensure_entities(self, rows: Sequence[EntityRow]) -> set[str]:
        """Create the entities that do not exist yet; return the names created."""
        if not rows:
            return set()
        created = await self.conn.fetch(SQL["ensure_entities"], *columns((r.values() for r in rows), 7))
        return {r["name"] for r in created}

    @translating
    async def upsert_relations_if_unchanged(self, rows: Sequence[RelationRow]) -> set[tuple[str, str]]:
        """Write relations whose stored version still equals ``row.version`` (0: not stored yet);
        both endpoints must exist. Return the pairs written."""
        if not rows:
            return set()
        written = await self.conn.fetch(
            SQL["upsert_relations_if_unchanged"], *columns((r.values() for r in rows), 9)
        )
        return {(r["src"], r["tgt"]) for r in written}

    @translating
    async def lock_entities(self, names: Sequence[str]) -> None:
        """Lock the existing rows among ``names`` until the transaction ends, in name order."""
        await self.conn.execute(SQL["lock_entities"], list(names))

    @translating
    async def lock_relations(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Lock the existing rows among ``pairs`` until the transaction ends, in pair order."""
        await self.conn.execute(SQL["lock_relations"], *pair_columns(pairs))

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
        rows = await self.conn.fetch(SQL["relations_for_merge"], *pair_columns(pairs), doc_id)
        return {
            (r["src"], r["tgt"]): MergeState(
                RelationRow.from_record(r) if r["present"] else None,
                r["linked"],
                r["vector_content"],
                frozenset(n for n, ok in ((r["src"], r["src_exists"]), (r["tgt"], r["tgt_exists"])) if ok),
            )
            for r in rows
        }
