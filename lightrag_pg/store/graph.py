"""Graph store: entities and relations as typed tables (mirrored into AGE by triggers).

Every method is one SQL statement for the whole batch, whatever its size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import asyncpg
import numpy as np

from ..db.sqlfile import load_queries
from .rows import (
    EntityFragmentRow,
    EntityRow,
    MergeState,
    RelationFragmentRow,
    RelationRow,
    TouchedRow,
    canonical_pair,
    columns,
    pair_columns,
    vector_columns,
)

SQL = load_queries(__package__, "graph.sql")

EntityStatesAndFragments = tuple[dict[str, MergeState[EntityRow]], dict[str, list[EntityFragmentRow]]]
"""The merge states of entities, and the stored fragments of those a merge rebuilds."""
RelationStatesAndFragments = tuple[
    dict[tuple[str, str], MergeState[RelationRow]], dict[tuple[str, str], list[RelationFragmentRow]]
]
"""The merge states of relations, and the stored fragments of those a merge rebuilds."""


class GraphStore:
    """Entities and relations of one workspace, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def get_entities(self, names: Sequence[str]) -> list[EntityRow]:
        """Entities with their degrees, in the order given; unknown names are skipped."""
        rows = await self.conn.fetch(SQL["entities_by_names"], list(names))
        return [EntityRow.from_record(r) for r in rows]

    async def edges_of(self, names: Sequence[str]) -> list[RelationRow]:
        """Every relation touching any of ``names``, with edge degrees."""
        rows = await self.conn.fetch(SQL["edges_of"], list(names))
        return [RelationRow.from_record(r) for r in rows]

    async def upsert_entities_if_unchanged(self, rows: Sequence[EntityRow]) -> set[str]:
        """Write entities whose stored version still equals ``row.version`` (0: not stored yet);
        return the names written."""
        return await self.write_entities(rows)

    async def write_entities(
        self,
        rows: Sequence[EntityRow],
        vectors: Mapping[str, tuple[str, np.ndarray]] | None = None,
        fragments: Sequence[EntityFragmentRow] = (),
        doc_id: str | None = None,
    ) -> set[str]:
        """The versioned write of :meth:`upsert_entities_if_unchanged` and, for the rows
        written only, their new ``vectors`` (text and values, by name), their
        ``fragments`` and the link of ``doc_id`` (if given), in one statement.
        Return the names written."""
        if not rows:
            return set()
        texts, values = vector_columns([r.name for r in rows], vectors or {})
        written = await self.conn.fetch(
            SQL["write_entities"],
            *columns((r.values() for r in rows), 7),
            texts,
            values,
            *columns((f.values() for f in fragments), 7),
            doc_id,
        )
        return {r["name"] for r in written}

    async def upsert_relations_if_unchanged(self, rows: Sequence[RelationRow]) -> set[tuple[str, str]]:
        """Write relations whose stored version still equals ``row.version`` (0: not stored yet);
        both endpoints must exist. Return the pairs written."""
        written, _ = await self.write_relations(rows)
        return written

    async def write_relations(
        self,
        rows: Sequence[RelationRow],
        vectors: Mapping[tuple[str, str], tuple[str, np.ndarray]] | None = None,
        fragments: Sequence[RelationFragmentRow] = (),
        doc_id: str | None = None,
        endpoints: Sequence[EntityRow] = (),
        endpoint_vectors: Mapping[str, tuple[str, np.ndarray]] | None = None,
    ) -> tuple[set[tuple[str, str]], set[str]]:
        """Create the ``endpoints`` that do not exist yet (existing ones are untouched),
        with their ``endpoint_vectors``, then write ``rows`` like
        :meth:`write_entities` (both endpoints must exist by then); ``doc_id`` is
        linked to the relations written and the endpoints created. One statement;
        return the pairs written and the endpoints created."""
        if not rows and not endpoints:
            return set(), set()
        texts, values = vector_columns([r.pair for r in rows], vectors or {})
        end_texts, end_values = vector_columns([e.name for e in endpoints], endpoint_vectors or {})
        result = await self.conn.fetch(
            SQL["write_relations"],
            *columns((r.values() for r in rows), 9),
            texts,
            values,
            *columns((f.values() for f in fragments), 9),
            *columns((e.values() for e in endpoints), 7),
            end_texts,
            end_values,
            doc_id,
        )
        written = {(r["src"], r["tgt"]) for r in result if r["kind"] == "relation"}
        created = {r["src"] for r in result if r["kind"] == "entity"}
        return written, created

    async def lock_entities(self, names: Sequence[str]) -> None:
        """Lock the existing rows among ``names`` until the transaction ends, in name order."""
        await self.conn.execute(SQL["lock_entities"], list(names))

    async def lock_relations(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Lock the existing rows among ``pairs`` until the transaction ends, in pair order."""
        await self.conn.execute(SQL["lock_relations"], *pair_columns(pairs))

    async def entity_states(self, doc_id: str, names: Sequence[str]) -> dict[str, MergeState[EntityRow]]:
        """What a merge of ``doc_id`` into each name needs to know, in one statement."""
        states, _ = await self._entity_states(doc_id, names, False)
        return states

    async def entity_states_and_fragments(
        self, doc_id: str, names: Sequence[str]
    ) -> EntityStatesAndFragments:
        """:meth:`entity_states`, and the stored fragments of every row a merge
        rebuilds from them (stored, not linked to ``doc_id``, without contributions
        merged before fragments were recorded), read in the same statement."""
        return await self._entity_states(doc_id, names, True)

    async def _entity_states(
        self, doc_id: str, names: Sequence[str], with_fragments: bool
    ) -> EntityStatesAndFragments:
        rows = await self.conn.fetch(SQL["entity_states"], list(names), doc_id, with_fragments)
        states = {
            r["name"]: MergeState(
                EntityRow.from_record(r) if r["present"] else None,
                r["linked"],
                r["vector_content"],
                unrecorded=r["unrecorded"],
            )
            for r in rows
        }
        stored = {
            r["name"]: [EntityFragmentRow.from_record(f) for f in r["fragments"]]
            for r in rows
            if r["fragments"] is not None
        }
        return states, stored

    async def relation_states(
        self, doc_id: str, pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], MergeState[RelationRow]]:
        """What a merge of ``doc_id`` into each canonical pair needs to know, in one statement."""
        states, _ = await self._relation_states(doc_id, pairs, False)
        return states

    async def relation_states_and_fragments(
        self, doc_id: str, pairs: Sequence[tuple[str, str]]
    ) -> RelationStatesAndFragments:
        """:meth:`relation_states` and stored fragments; see :meth:`entity_states_and_fragments`."""
        return await self._relation_states(doc_id, pairs, True)

    async def _relation_states(
        self, doc_id: str, pairs: Sequence[tuple[str, str]], with_fragments: bool
    ) -> RelationStatesAndFragments:
        rows = await self.conn.fetch(SQL["relation_states"], *pair_columns(pairs), doc_id, with_fragments)
        states = {
            (r["src"], r["tgt"]): MergeState(
                RelationRow.from_record(r) if r["present"] else None,
                r["linked"],
                r["vector_content"],
                frozenset(n for n, ok in ((r["src"], r["src_exists"]), (r["tgt"], r["tgt_exists"])) if ok),
                r["unrecorded"],
            )
            for r in rows
        }
        stored = {
            (r["src"], r["tgt"]): [RelationFragmentRow.from_record(f) for f in r["fragments"]]
            for r in rows
            if r["fragments"] is not None
        }
        return states, stored

    async def unsummarized(self, fragments: int) -> tuple[set[str], set[tuple[str, str]]]:
        """The entities and relations described by their fragments joined although they
        have at least ``fragments`` distinct ones (their summary is due)."""
        rows = await self.conn.fetch(SQL["unsummarized"], fragments)
        names = {r["src"] for r in rows if r["tgt"] is None}
        return names, {(r["src"], r["tgt"]) for r in rows if r["tgt"] is not None}

    async def entity_fragments(
        self, names: Sequence[str], except_docs: Sequence[str] = ()
    ) -> list[EntityFragmentRow]:
        """Every fragment of ``names``, except those of the documents ``except_docs``."""
        rows = await self.conn.fetch(SQL["entity_fragments_of"], list(names), list(except_docs))
        return [EntityFragmentRow.from_record(r) for r in rows]

    async def relation_fragments(
        self, pairs: Sequence[tuple[str, str]], except_docs: Sequence[str] = ()
    ) -> list[RelationFragmentRow]:
        """Every fragment of the canonical ``pairs``, except those of the documents ``except_docs``."""
        rows = await self.conn.fetch(SQL["relation_fragments_of"], *pair_columns(pairs), list(except_docs))
        return [RelationFragmentRow.from_record(r) for r in rows]

    async def add_entity_fragments(self, fragments: Sequence[EntityFragmentRow]) -> None:
        """Record entity fragments (the entities and documents must exist)."""
        if fragments:
            await self.conn.execute(SQL["add_entity_fragments"], *columns((f.values() for f in fragments), 7))

    async def add_relation_fragments(self, fragments: Sequence[RelationFragmentRow]) -> None:
        """Record relation fragments (the relations and documents must exist)."""
        if fragments:
            await self.conn.execute(
                SQL["add_relation_fragments"], *columns((f.values() for f in fragments), 9)
            )

    async def entities_touched_by(self, doc_ids: Sequence[str]) -> list[TouchedRow[EntityRow]]:
        """The entities the documents contributed to, in name order."""
        rows = await self.conn.fetch(SQL["entities_touched_by_docs"], list(doc_ids))
        return [TouchedRow(EntityRow.from_record(r), r["vector_content"], r["unrecorded"]) for r in rows]

    async def relations_touched_by(self, doc_ids: Sequence[str]) -> list[TouchedRow[RelationRow]]:
        """The relations the documents contributed to, in pair order."""
        rows = await self.conn.fetch(SQL["relations_touched_by_docs"], list(doc_ids))
        return [TouchedRow(RelationRow.from_record(r), r["vector_content"], r["unrecorded"]) for r in rows]

    async def delete_entities_if_unchanged(self, rows: Sequence[EntityRow]) -> set[str]:
        """Delete the entities whose stored version equals ``row.version``; return the names deleted."""
        if not rows:
            return set()
        deleted = await self.conn.fetch(
            SQL["delete_entities_if_unchanged"], [r.name for r in rows], [r.version for r in rows]
        )
        return {r["name"] for r in deleted}

    async def delete_relations_if_unchanged(self, rows: Sequence[RelationRow]) -> set[tuple[str, str]]:
        """Delete the relations whose stored version equals ``row.version``; return the pairs deleted."""
        if not rows:
            return set()
        deleted = await self.conn.fetch(
            SQL["delete_relations_if_unchanged"],
            [r.src for r in rows],
            [r.tgt for r in rows],
            [r.version for r in rows],
        )
        return {(r["src"], r["tgt"]) for r in deleted}

    # ------------------------------------------------------------ graph edits

    async def lock_entities_for_edit(self, names: Sequence[str]) -> dict[str, int]:
        """Lock the existing rows among ``names`` (FOR UPDATE, in name order); their versions."""
        rows = await self.conn.fetch(SQL["lock_entities_for_edit"], list(names))
        return {r["name"]: r["version"] for r in rows}

    async def lock_relations_for_edit(
        self, pairs: Sequence[tuple[str, str]], touching: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        """Lock the relations among ``pairs`` and every relation touching ``touching``
        (FOR UPDATE, in pair order); their versions."""
        rows = await self.conn.fetch(SQL["lock_relations_for_edit"], *pair_columns(pairs), list(touching))
        return {(r["src"], r["tgt"]): r["version"] for r in rows}

    async def relations_touching(self, names: Sequence[str]) -> list[TouchedRow[RelationRow]]:
        """Every relation touching any of ``names``, with its stored vector text, in pair order."""
        rows = await self.conn.fetch(SQL["relations_touching"], list(names))
        return [TouchedRow(RelationRow.from_record(r), r["vector_content"], r["unrecorded"]) for r in rows]

    async def prepare_manual_fragments(
        self, doc_id: str, chunk_id: str, names: Sequence[str], pairs: Sequence[tuple[str, str]]
    ) -> None:
        """Create the document ``doc_id`` holding manual fragments if missing, and delete the
        manual fragments (``chunk_id``) of ``names`` and ``pairs`` an edit replaces."""
        await self.conn.execute(
            SQL["prepare_manual_fragments"], doc_id, chunk_id, list(names), *pair_columns(pairs)
        )

    async def move_links(
        self,
        entities: Sequence[tuple[str, str]],
        relations: Sequence[tuple[tuple[str, str], tuple[str, str]]],
    ) -> None:
        """Copy the document links of renamed entities (old, new) and relations (old pair,
        new pair) to their new keys."""
        if entities or relations:
            old_e, new_e = columns(entities, 2)
            old_r, new_r = columns(relations, 2)
            await self.conn.execute(
                SQL["move_links"], old_e, new_e, *pair_columns(old_r), *pair_columns(new_r)
            )

    async def delete_entity(self, name: str) -> int | None:
        """Delete one entity with its relations; the number of relations deleted, None if unknown."""
        row = await self.conn.fetchrow(SQL["delete_entity"], name)
        return None if row is None else int(row["relations"])

    async def delete_relation(self, src: str, tgt: str) -> bool:
        """Delete one relation (either direction); whether it existed."""
        row = await self.conn.fetchrow(SQL["delete_relation"], *canonical_pair(src, tgt))
        return row is not None

    async def entity_vector(self, name: str) -> tuple[str, list[float]] | None:
        """The stored vector of an entity: its text and values (None: no vector)."""
        row = await self.conn.fetchrow(SQL["entity_vector"], name)
        return None if row is None else (row["content"], [float(x) for x in row["embedding"]])

    async def relation_vector(self, src: str, tgt: str) -> tuple[str, list[float]] | None:
        """The stored vector of a relation: its text and values (None: no vector)."""
        row = await self.conn.fetchrow(SQL["relation_vector"], *canonical_pair(src, tgt))
        return None if row is None else (row["content"], [float(x) for x in row["embedding"]])
