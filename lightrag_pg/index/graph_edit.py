"""Editing the graph by hand: create, edit, rename, merge and delete entities and relations.

Every edit is one transaction, planned by the write protocol of the
writer and the deleter (:mod:`.rounds`): read the rows and their fragments
with no transaction open, compute the new rows (summaries and vectors
included), then write them in one transaction that first locks the rows it
planned on and checks their versions (and, when entities go, that the set
of relations touching them is the one planned on). If anything moved, the
transaction is rolled back and the edit is planned again from what is now
stored, so two concurrent edits of one entity both land.

A manual edit is a contribution of its own: a fragment with chunk id
:data:`~.merge.MANUAL_CHUNK_ID` in the reserved document
:data:`~.merge.MANUAL_DOC_ID`. By the merge rules it pins the fields it
sets, and a rebuild after a document delete keeps it. A relation given by
hand gives each endpoint an *anchor* (a manual fragment without a
description), so the endpoints outlive the documents that named them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..config import Settings
from ..db.pool import WorkspacePool
from ..errors import GraphItemExists, GraphItemNotFound, InvalidInput, ProvenanceMissing
from ..store.rows import (
    EntityFragmentRow,
    EntityRow,
    MergeState,
    RelationFragmentRow,
    RelationRow,
    TouchedRow,
    canonical_pair,
)
from ..store.uow import Stores, session, unit_of_work
from .merge import (
    MANUAL_CHUNK_ID,
    MANUAL_DOC_ID,
    build_entity,
    build_relation,
    group_by_name,
    group_by_pair,
    with_context_tokens,
)
from .rounds import Pair, expect_written, lock_for_edit, settle_one
from .writer import GraphWriter

EDIT_ROUNDS = 8
"""Plans tried before an edit gives up because its rows keep changing (each one
locks its rows before it writes)."""
ENTITY_FIELDS = frozenset({"entity_name", "entity_type", "description"})
RELATION_FIELDS = frozenset({"keywords", "description", "weight"})


@dataclass(frozen=True, slots=True)
class GraphItem:
    """An entity or relation as stored, with what each chunk (or a manual edit) said about it."""

    row: EntityRow | RelationRow
    fragments: list[EntityFragmentRow] | list[RelationFragmentRow]
    vector: tuple[str, list[float]] | None = None
    """The embedded text and its values, when asked for and stored."""


@dataclass
class Edit:
    """The writes of one edit, computed outside any transaction."""

    entities: dict[str, int] = field(default_factory=dict)
    """Entities to lock and their expected versions (0: must not exist)."""
    relations: dict[Pair, int] = field(default_factory=dict)
    """Relations to lock and their expected versions (0: must not exist)."""
    touching: list[str] = field(default_factory=list)
    """Entities whose every relation must be among ``relations``."""
    manual: bool = False
    clear_manual_entities: list[str] = field(default_factory=list)
    clear_manual_relations: list[Pair] = field(default_factory=list)
    put_entities: list[EntityRow] = field(default_factory=list)
    put_relations: list[RelationRow] = field(default_factory=list)
    entity_fragments: list[EntityFragmentRow] = field(default_factory=list)
    relation_fragments: list[RelationFragmentRow] = field(default_factory=list)
    entity_links: list[tuple[str, str]] = field(default_factory=list)
    relation_links: list[tuple[Pair, Pair]] = field(default_factory=list)
    drop_entities: list[EntityRow] = field(default_factory=list)
    entity_vectors: tuple[list[str], list[str], np.ndarray] | None = None
    relation_vectors: tuple[list[Pair], list[str], np.ndarray] | None = None
    before: Callable[[Stores], Awaitable[None]] | None = None
    """Writes to run first in the transaction (a custom graph's documents and chunks)."""
    after: Callable[[Stores], Awaitable[None]] | None = None
    """Writes to run last in the transaction (a custom graph's links and status)."""


def entity_name(value: Any, what: str = "entity name") -> str:
    """A valid entity name: a non-empty string without surrounding blanks."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string, got {value!r}")
    return value.strip()


def _check_fields(data: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{what} must be a mapping of field to value, got {type(data).__name__}")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(
            f"{what}: cannot set {', '.join(unknown)} (editable fields: {', '.join(sorted(allowed))})"
        )
    for key, value in data.items():
        if key == "weight":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InvalidInput(f"{what}: weight must be a finite number, got {value!r}")
        elif not isinstance(value, str):
            raise InvalidInput(f"{what}: {key} must be a string, got {value!r}")


def _renumber_entities(
    kept: list[EntityFragmentRow], moved: list[EntityFragmentRow], target: str
) -> list[EntityFragmentRow]:
    """``moved`` fragments re-keyed to ``target``, numbered after ``kept`` within each chunk."""
    used: dict[str, int] = defaultdict(int)
    for f in kept:
        used[f.chunk_id] = max(used[f.chunk_id], f.seq + 1)
    out = []
    for f in sorted(moved, key=lambda f: (f.chunk_id, f.entity_name, f.seq)):
        out.append(
            EntityFragmentRow(
                target, f.chunk_id, used[f.chunk_id], f.doc_id, f.entity_type, f.description, f.file_path
            )
        )
        used[f.chunk_id] += 1
    return out


def _renumber_relations(
    kept: list[RelationFragmentRow], moved: list[RelationFragmentRow], pair: Pair
) -> list[RelationFragmentRow]:
    """As :func:`_renumber_entities`, for relation fragments re-keyed to ``pair``."""
    used: dict[str, int] = defaultdict(int)
    for f in kept:
        used[f.chunk_id] = max(used[f.chunk_id], f.seq + 1)
    out = []
    for f in sorted(moved, key=lambda f: (f.chunk_id, f.src, f.tgt, f.seq)):
        out.append(
            RelationFragmentRow(
                pair[0],
                pair[1],
                f.chunk_id,
                used[f.chunk_id],
                f.doc_id,
                f.keywords,
                f.description,
                f.weight,
                f.file_path,
            )
        )
        used[f.chunk_id] += 1
    return out


def _refuse_unrecorded(names: Sequence[str]) -> None:
    if names:
        raise ProvenanceMissing(
            f"{', '.join(repr(n) for n in names[:5])} hold contributions indexed before provenance "
            "was recorded (migration 0006) and cannot be edited exactly; nothing was changed"
        )


class GraphEditor:
    """Manual edits of one workspace's graph, one transaction each."""

    def __init__(self, pool: WorkspacePool, writer: GraphWriter, settings: Settings) -> None:
        self.pool = pool
        self.writer = writer
        self.settings = settings

    # ------------------------------------------------------------ the loop

    async def run(self, plan: Callable[[], Awaitable[Edit]], what: str) -> None:
        """Plan and apply an edit until it lands on rows nobody changed meanwhile."""

        async def attempt() -> None:
            await self.apply(await plan())

        await settle_one(what, attempt, optimistic_rounds=0, locked_rounds=EDIT_ROUNDS)

    async def apply(self, edit: Edit) -> None:
        """Write ``edit`` in one transaction; raise :class:`~.rounds.RowsMoved` if a
        planned-on row moved."""
        async with unit_of_work(self.pool) as uow:
            g = uow.graph
            await lock_for_edit(g, edit.entities, edit.relations, edit.touching)
            if edit.before is not None:
                await edit.before(uow)
            if edit.manual:
                await g.prepare_manual_fragments(
                    MANUAL_DOC_ID, MANUAL_CHUNK_ID, edit.clear_manual_entities, edit.clear_manual_relations
                )
            edit.put_entities = with_context_tokens(edit.put_entities, self.writer.tokenizer)
            edit.put_relations = with_context_tokens(edit.put_relations, self.writer.tokenizer)
            expect_written(edit.put_entities, await g.upsert_entities_if_unchanged(edit.put_entities))
            expect_written(edit.put_relations, await g.upsert_relations_if_unchanged(edit.put_relations))
            await g.add_entity_fragments(edit.entity_fragments)
            await g.add_relation_fragments(edit.relation_fragments)
            await g.move_links(edit.entity_links, edit.relation_links)
            expect_written(edit.drop_entities, await g.delete_entities_if_unchanged(edit.drop_entities))
            if edit.entity_vectors is not None and edit.entity_vectors[0]:
                await uow.vectors.upsert_entities(*edit.entity_vectors)
            if edit.relation_vectors is not None and edit.relation_vectors[0]:
                await uow.vectors.upsert_relations(*edit.relation_vectors)
            if edit.after is not None:
                await edit.after(uow)

    # ------------------------------------------------------------ helpers

    async def describe_entities(self, rows: list[EntityRow], frags: list[list[str]]) -> list[EntityRow]:
        described = await self.writer.describe_all("entity", [r.name for r in rows], frags)
        return [replace(row, description=d) for row, d in zip(rows, described, strict=True)]

    async def describe_relations(self, rows: list[RelationRow], frags: list[list[str]]) -> list[RelationRow]:
        labels = [f"{r.src} - {r.tgt}" for r in rows]
        described = await self.writer.describe_all("relation", labels, frags)
        return [replace(row, description=d) for row, d in zip(rows, described, strict=True)]

    async def entity_vectors(
        self, rows: list[EntityRow], stored: Mapping[str, str | None]
    ) -> tuple[list[str], list[str], np.ndarray]:
        texts = self.writer.texts(self.writer.entity, rows)
        changed, vectors = await self.writer.changed_vectors(
            texts, [stored.get(r.name) for r in rows], [r.name for r in rows]
        )
        return [rows[i].name for i in changed], [texts[i] for i in changed], vectors

    async def relation_vectors(
        self,
        rows: list[RelationRow],
        stored: Mapping[Pair, str | None],
        chunks: Mapping[str, np.ndarray] | None = None,
    ) -> tuple[list[Pair], list[str], np.ndarray]:
        texts = self.writer.texts(self.writer.relation, rows)
        changed, vectors = await self.writer.changed_vectors(
            texts, [stored.get(r.pair) for r in rows], [r.pair for r in rows], chunks=chunks
        )
        return [rows[i].pair for i in changed], [texts[i] for i in changed], vectors

    @staticmethod
    def _manual_entity(name: str, entity_type: str, description: str) -> EntityFragmentRow:
        return EntityFragmentRow(
            name, MANUAL_CHUNK_ID, 0, MANUAL_DOC_ID, entity_type or "UNKNOWN", description, MANUAL_CHUNK_ID
        )

    # ------------------------------------------------------------ entities

    async def create_entity(self, name: str, data: Mapping[str, Any]) -> None:
        """Create entity ``name`` with ``entity_type`` and ``description`` from ``data``."""
        name = entity_name(name)
        _check_fields(data, ENTITY_FIELDS - {"entity_name"}, f"entity {name!r}")
        description = str(data.get("description", "")).strip()
        if not description:
            raise InvalidInput(f"entity {name!r}: a description is required")

        async def plan() -> Edit:
            async with session(self.pool) as s:
                state = (await s.graph.entity_states("", [name]))[name]
            if state.row is not None:
                raise GraphItemExists(f"entity {name!r} already exists; nothing was changed")
            fragment = self._manual_entity(name, str(data.get("entity_type", "")), description)
            row, frags = build_entity(name, [fragment], self.settings)
            [row] = await self.describe_entities([row], [frags])
            return Edit(
                entities={name: 0},
                manual=True,
                put_entities=[row],
                entity_fragments=[fragment],
                entity_vectors=await self.entity_vectors([row], {}),
            )

        await self.run(plan, f"create entity {name!r}")

    async def edit_entity(
        self, name: str, updated: Mapping[str, Any], *, allow_rename: bool = True, allow_merge: bool = False
    ) -> str:
        """Edit entity ``name``; return its name afterwards (``updated["entity_name"]`` renames it)."""
        name = entity_name(name)
        _check_fields(updated, ENTITY_FIELDS, f"entity {name!r}")
        fields = {k: str(v).strip() for k, v in updated.items() if k != "entity_name"}
        if "description" in fields and not fields["description"]:
            raise InvalidInput(f"entity {name!r}: the description cannot be empty")
        new_name = entity_name(updated.get("entity_name", name), "the new entity name")
        if new_name == name:
            if not fields:
                raise InvalidInput(f"entity {name!r}: nothing to change")
            await self.run(lambda: self._plan_merge([], name, fields, must_exist=True), f"edit of {name!r}")
            return name
        if not allow_rename:
            raise InvalidInput(f"entity {name!r}: renaming is not allowed (allow_rename=False)")

        async def plan() -> Edit:
            async with session(self.pool) as s:
                exists = (await s.graph.entity_states("", [new_name]))[new_name].row is not None
            if exists and not allow_merge:
                raise GraphItemExists(
                    f"cannot rename {name!r} to {new_name!r}: that entity exists (pass allow_merge=True "
                    "to merge into it); nothing was changed"
                )
            return await self._plan_merge([name], new_name, fields or None, must_exist=None)

        await self.run(plan, f"rename of {name!r}")
        return new_name

    async def fold_entities(
        self, sources: Sequence[str], target: str, target_data: Mapping[str, Any] | None = None
    ) -> None:
        """Merge ``sources`` into ``target`` (created if missing)."""
        target = entity_name(target, "target entity")
        if isinstance(sources, str) or not sources:
            raise InvalidInput("source_entities must be a non-empty list of entity names")
        names = sorted({entity_name(s, "source entity") for s in sources})
        if target in names:
            raise InvalidInput(
                f"cannot merge into {target!r}: it is one of its own sources (list only the others)"
            )
        fields = None
        if target_data:
            _check_fields(target_data, ENTITY_FIELDS - {"entity_name"}, f"target entity {target!r}")
            fields = {k: str(v).strip() for k, v in target_data.items()}
            if "description" in fields and not fields["description"]:
                raise InvalidInput(f"target entity {target!r}: the description cannot be empty")
        await self.run(
            lambda: self._plan_merge(names, target, fields, must_exist=None), f"merge into {target!r}"
        )

    async def _plan_merge(
        self, sources: list[str], target: str, fields: Mapping[str, str] | None, *, must_exist: bool | None
    ) -> Edit:
        """The edit folding ``sources`` into ``target`` and setting ``fields`` on it.

        With no sources this is an edit of ``target``'s fields. Relations are
        redirected to the target, those between merged entities dropped, and
        those landing on one pair merged from the union of their fragments.
        """
        everyone = [*sources, target]
        async with session(self.pool) as s:
            states = await s.graph.entity_states("", everyone)
            touched: list[TouchedRow[RelationRow]] = (
                await s.graph.relations_touching(everyone) if sources else []
            )
            e_frags = group_by_name(await s.graph.entity_fragments(everyone))
            pairs = [t.row.pair for t in touched]
            r_frags = group_by_pair(await s.graph.relation_fragments(pairs)) if pairs else {}
        missing = [n for n in sources if states[n].row is None]
        if must_exist and states[target].row is None:
            missing.append(target)
        if missing:
            raise GraphItemNotFound(
                f"no entity named {', '.join(repr(m) for m in missing)}; nothing was changed"
            )
        _refuse_unrecorded(
            [n for n in everyone if states[n].unrecorded]
            + [f"{t.row.src} - {t.row.tgt}" for t in touched if t.unrecorded]
        )
        current: MergeState[EntityRow] = states[target]
        version = current.row.version if current.row is not None else 0
        kept = list(e_frags.get(target, []))
        moved = [f for n in sources for f in e_frags.get(n, [])]
        if fields is not None:
            kept = [f for f in kept if f.chunk_id != MANUAL_CHUNK_ID]
            moved = [f for f in moved if f.chunk_id != MANUAL_CHUNK_ID]
        new_frags = _renumber_entities(kept, moved, target)
        source_rows = [row for n in sources if (row := states[n].row) is not None]
        edit = Edit(entities={r.name: r.version for r in source_rows})
        edit.entities[target] = version
        edit.touching = list(sources)
        if fields is not None:
            base = current.row if current.row is not None and not sources else None
            if base is None:
                merged, frags = build_entity(target, kept + new_frags, self.settings)
                [base] = await self.describe_entities([merged], [frags])
            manual = self._manual_entity(
                target,
                fields.get("entity_type", base.entity_type),
                fields.get("description", base.description),
            )
            if not manual.description.strip():
                raise InvalidInput(f"entity {target!r} has no description to keep; give one")
            new_frags.append(manual)
            edit.manual = True
            edit.clear_manual_entities = [target]
        row, frags = build_entity(target, kept + new_frags, self.settings, version)
        edit.put_entities = await self.describe_entities([row], [frags])
        edit.entity_fragments = new_frags
        edit.entity_vectors = await self.entity_vectors(edit.put_entities, {target: current.vector_content})
        edit.drop_entities = source_rows
        edit.entity_links = [(n, target) for n in sources]
        to_describe = self._plan_redirect(edit, sources, target, touched, r_frags)
        if edit.put_relations:
            described = await self.describe_relations(
                [edit.put_relations[i] for i, _ in to_describe], [f for _, f in to_describe]
            )
            for (i, _), described_row in zip(to_describe, described, strict=True):
                edit.put_relations[i] = described_row
            stored = {t.row.pair: t.vector_content for t in touched}
            edit.relation_vectors = await self.relation_vectors(edit.put_relations, stored)
        return edit

    def _plan_redirect(
        self,
        edit: Edit,
        sources: list[str],
        target: str,
        touched: list[TouchedRow[RelationRow]],
        r_frags: dict[Pair, list[RelationFragmentRow]],
    ) -> list[tuple[int, list[str]]]:
        """Relations of ``sources`` moved onto ``target`` (self-loops dropped, pairs merged)
        into ``edit``; the relations whose description must be made (their index in
        ``edit.put_relations``), with its fragments.

        A relation only moved (one old pair onto a new one, nothing merged) keeps its
        description, so renaming a hub calls no model for its edges.
        """
        if not sources:
            return []
        gone = set(sources)
        rename = {n: target for n in sources}
        by_pair = {t.row.pair: t.row for t in touched}
        incoming: dict[Pair, list[RelationFragmentRow]] = defaultdict(list)
        feeders: dict[Pair, list[Pair]] = defaultdict(list)
        for t in touched:
            edit.relations[t.row.pair] = t.row.version
            if not (gone & set(t.row.pair)):
                continue
            a, b = (rename.get(n, n) for n in t.row.pair)
            if a == b:
                continue  # a self-loop after the merge: dropped with its source
            new_pair = canonical_pair(a, b)
            incoming[new_pair].extend(r_frags.get(t.row.pair, []))
            feeders[new_pair].append(t.row.pair)
            edit.relation_links.append((t.row.pair, new_pair))
        rows: list[RelationRow] = []
        to_describe: list[tuple[int, list[str]]] = []
        for pair in sorted(incoming):
            existing = by_pair.get(pair)
            kept = r_frags.get(pair, []) if existing is not None else []
            moved = _renumber_relations(kept, incoming[pair], pair)
            row, frags = build_relation(
                pair, kept + moved, self.settings, existing.version if existing else 0
            )
            if existing is None and len(feeders[pair]) == 1:
                row = replace(row, description=by_pair[feeders[pair][0]].description)
            else:
                to_describe.append((len(rows), frags))
            rows.append(row)
            edit.relation_fragments.extend(moved)
        edit.put_relations = rows
        return to_describe

    # ------------------------------------------------------------ relations

    async def upsert_relation(self, src: str, tgt: str, data: Mapping[str, Any], *, create: bool) -> Pair:
        """Create (``create``) or edit the relation between ``src`` and ``tgt``; its pair."""
        src, tgt = entity_name(src, "source entity"), entity_name(tgt, "target entity")
        if src == tgt:
            raise InvalidInput(f"a relation needs two distinct entities, got {src!r} twice")
        what = f"relation {src!r} - {tgt!r}"
        _check_fields(data, RELATION_FIELDS, what)
        if create and not str(data.get("description", "")).strip():
            raise InvalidInput(f"{what}: a description is required")
        if not create and not data:
            raise InvalidInput(f"{what}: nothing to change")
        if "description" in data and not str(data["description"]).strip():
            raise InvalidInput(f"{what}: the description cannot be empty")
        pair = canonical_pair(src, tgt)

        async def plan() -> Edit:
            async with session(self.pool) as s:
                state = (await s.graph.relation_states("", [pair]))[pair]
                ends = await s.graph.entity_states("", list(pair))
                e_frags = group_by_name(await s.graph.entity_fragments(list(pair)))
                r_frags = await s.graph.relation_fragments([pair]) if state.row is not None else []
            missing = [n for n in pair if ends[n].row is None]
            if missing:
                raise GraphItemNotFound(
                    f"{what}: no entity named {', '.join(map(repr, missing))}; nothing was changed"
                )
            versions = {n: end.version for n in pair if (end := ends[n].row) is not None}
            if create and state.row is not None:
                raise GraphItemExists(f"{what} already exists; nothing was changed")
            if not create and state.row is None:
                raise GraphItemNotFound(f"no {what}; nothing was changed")
            _refuse_unrecorded([n for n in pair if ends[n].unrecorded] + ([what] if state.unrecorded else []))
            base = state.row or RelationRow(pair[0], pair[1], weight=1.0)
            manual = RelationFragmentRow(
                pair[0],
                pair[1],
                MANUAL_CHUNK_ID,
                0,
                MANUAL_DOC_ID,
                str(data.get("keywords", base.keywords)).strip(),
                str(data.get("description", base.description)).strip(),
                float(data.get("weight", base.weight)),
                MANUAL_CHUNK_ID,
            )
            kept = [f for f in r_frags if f.chunk_id != MANUAL_CHUNK_ID]
            version = state.row.version if state.row is not None else 0
            row, frags = build_relation(pair, [*kept, manual], self.settings, version)
            [row] = await self.describe_relations([row], [frags])
            edit = Edit(
                entities=dict(versions),
                relations={pair: version},
                manual=True,
                clear_manual_relations=[pair],
                put_relations=[row],
                relation_fragments=[manual],
            )
            anchors = [n for n in pair if not any(f.chunk_id == MANUAL_CHUNK_ID for f in e_frags.get(n, []))]
            for n in anchors:
                anchor = EntityFragmentRow(n, MANUAL_CHUNK_ID, 0, MANUAL_DOC_ID, "", "", MANUAL_CHUNK_ID)
                entity, e_desc = build_entity(n, [*e_frags.get(n, []), anchor], self.settings, versions[n])
                edit.put_entities += await self.describe_entities([entity], [e_desc])
                edit.entity_fragments.append(anchor)
            edit.entity_vectors = await self.entity_vectors(
                edit.put_entities, {n: ends[n].vector_content for n in pair}
            )
            edit.relation_vectors = await self.relation_vectors([row], {pair: state.vector_content})
            return edit

        await self.run(plan, what)
        return pair

    # ------------------------------------------------------------ deletes

    async def delete_entity(self, name: str) -> int:
        """Delete entity ``name`` with its relations; the number of relations deleted."""
        name = entity_name(name)
        async with unit_of_work(self.pool) as uow:
            relations = await uow.graph.delete_entity(name)
        if relations is None:
            raise GraphItemNotFound(f"no entity named {name!r}; nothing was changed")
        return relations

    async def delete_relation(self, src: str, tgt: str) -> None:
        """Delete the relation between ``src`` and ``tgt`` (either direction)."""
        src, tgt = entity_name(src, "source entity"), entity_name(tgt, "target entity")
        async with unit_of_work(self.pool) as uow:
            found = await uow.graph.delete_relation(src, tgt)
        if not found:
            raise GraphItemNotFound(f"no relation {src!r} - {tgt!r}; nothing was changed")

    # ------------------------------------------------------------ reads

    async def read_entity(self, name: str, include_vector: bool = False) -> GraphItem:
        """Entity ``name`` with its fragments (and its vector with ``include_vector``)."""
        name = entity_name(name)
        async with session(self.pool) as s:
            rows = await s.graph.get_entities([name])
            if not rows:
                raise GraphItemNotFound(f"no entity named {name!r}")
            fragments = await s.graph.entity_fragments([name])
            vector = await s.graph.entity_vector(name) if include_vector else None
        return GraphItem(rows[0], fragments, vector)

    async def read_relation(self, src: str, tgt: str, include_vector: bool = False) -> GraphItem:
        """The relation between ``src`` and ``tgt`` with its fragments (and its vector)."""
        src, tgt = entity_name(src, "source entity"), entity_name(tgt, "target entity")
        pair = canonical_pair(src, tgt)
        async with session(self.pool) as s:
            state = (await s.graph.relation_states("", [pair]))[pair]
            if state.row is None:
                raise GraphItemNotFound(f"no relation {src!r} - {tgt!r}")
            fragments = await s.graph.relation_fragments([pair])
            vector = await s.graph.relation_vector(*pair) if include_vector else None
        return GraphItem(state.row, fragments, vector)
