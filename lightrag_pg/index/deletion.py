"""Deleting documents: their rows go, and what they touched is rebuilt from what remains.

One call deletes any number of documents in one transaction: the documents,
their status, chunks, chunk vectors, graph links, fragments and (unless the
cache is kept) the cached extraction answers of their chunks. Every entity
and relation they contributed to is rebuilt once from its remaining
fragments, by the insert's rules (:mod:`.merge`), or deleted with its vector
when no fragment remains; the AGE mirror follows through its triggers.

The protocol is the writer's (:mod:`.rounds`): read the rows and the
remaining fragments, compute the rebuilt rows (summaries and vectors, only
for changed text) with no transaction open, then write everything in one
transaction that checks no rebuilt row moved meanwhile; if one did, nothing
is written and the round runs again. After
:data:`~.rounds.OPTIMISTIC_ROUNDS` lost rounds, a round takes the row locks
and writes joined descriptions without calling a model, and the rows are
refreshed after the commit, as the writer does.

The documents are locked like the pipeline locks them (:mod:`.locks`): a
document another process is indexing is waited for up to ``wait`` seconds,
then refused with :class:`~lightrag_pg.errors.DocumentBusy`.

Workspaces indexed before migration 0006 have no fragments for their
earlier documents. A row holding such a contribution cannot be rebuilt
exactly, so a delete touching one is refused with
:class:`~lightrag_pg.errors.ProvenanceMissing` before anything changes;
re-indexing the documents into a new workspace records their fragments.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..config import Settings
from ..db.advisory import DocumentLocks
from ..db.pool import WorkspacePool
from ..errors import DocumentBusy, DocumentNotFound, InvalidInput, ProvenanceMissing
from ..store.rows import DocumentRow, EntityRow, RelationRow, TouchedRow
from ..store.uow import Stores, session, unit_of_work
from .merge import (
    build_entity,
    build_relation,
    group_by_name,
    group_by_pair,
    with_context_tokens,
)
from .rounds import expect_written, lock_rows, settle_one
from .writer import Due, GraphWriter, MergeStats


@dataclass(frozen=True, slots=True)
class DeletionResult:
    """What a delete did."""

    deleted_ids: list[str]
    """The documents deleted, in id order."""
    entities_rebuilt: int = 0
    entities_deleted: int = 0
    relations_rebuilt: int = 0
    relations_deleted: int = 0
    rounds: int = 0
    """Transactions tried (1 unless concurrent merges moved rows in between)."""


@dataclass
class _Plan:
    """The rebuilt rows and the rows to delete, computed outside any transaction."""

    entities: list[EntityRow] = field(default_factory=list)
    relations: list[RelationRow] = field(default_factory=list)
    dead_entities: list[EntityRow] = field(default_factory=list)
    dead_relations: list[RelationRow] = field(default_factory=list)
    entity_texts: list[str] = field(default_factory=list)
    relation_texts: list[str] = field(default_factory=list)
    entity_changed: list[int] = field(default_factory=list)
    relation_changed: list[int] = field(default_factory=list)
    entity_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    relation_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))


class DocumentDeleter:
    """Deletes and replaces documents of one workspace."""

    def __init__(
        self, pool: WorkspacePool, writer: GraphWriter, locks: DocumentLocks, settings: Settings
    ) -> None:
        self.pool = pool
        self.writer = writer
        self.locks = locks
        self.settings = settings

    async def resolve(self, ids: Sequence[str] = (), file_paths: Sequence[str] = ()) -> list[str]:
        """The ids of the documents named by id or file path; every name must match one.

        Raises :class:`DocumentNotFound` naming those that match nothing.
        """
        ids, file_paths = _names("ids", ids), _names("file_paths", file_paths)
        async with session(self.pool) as s:
            found = await s.docs.find(ids, file_paths)
        missing = sorted(set(ids) - {i for i, _ in found}) + sorted(set(file_paths) - {p for _, p in found})
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise DocumentNotFound(f"no document with id or file path {shown}{more}; nothing was deleted")
        return sorted({i for i, _ in found})

    async def delete_ids(
        self, doc_ids: str | Sequence[str], *, keep_cache: bool, wait: float
    ) -> DeletionResult:
        """Delete the documents of ``doc_ids`` (:meth:`resolve`, then :meth:`delete`)."""
        ids = _given(doc_ids, "no document ids given")
        return await self.delete(await self.resolve(ids=ids), keep_cache=keep_cache, wait=wait)

    async def delete_files(
        self, file_paths: str | Sequence[str], *, keep_cache: bool, wait: float
    ) -> DeletionResult:
        """Delete every document stored with one of ``file_paths`` (:meth:`resolve`, :meth:`delete`)."""
        paths = _given(file_paths, "no file paths given")
        return await self.delete(await self.resolve(file_paths=paths), keep_cache=keep_cache, wait=wait)

    async def replace_changed(self, docs: Sequence[DocumentRow]) -> list[str]:
        """Replace the stored documents among ``docs`` whose content differs (one
        :meth:`delete` keeping the cached extraction answers, the new versions stored as
        pending in its transaction); the ids replaced, in order."""
        async with session(self.pool) as s:
            stored = {d.id: d.content for d in await s.docs.get([d.id for d in docs])}
        changed = [d for d in docs if d.id in stored and stored[d.id] != d.content]
        if changed:
            await self.delete([d.id for d in changed], keep_cache=True, replacements=changed)
        return sorted(d.id for d in changed)

    async def delete(
        self,
        doc_ids: Sequence[str],
        *,
        keep_cache: bool = False,
        replacements: Sequence[DocumentRow] = (),
        wait: float = 0.0,
    ) -> DeletionResult:
        """Delete ``doc_ids`` (existing documents) and rebuild what they touched, in one
        transaction; ``replacements`` are stored as pending documents in that same
        transaction (an update: the new versions of deleted documents)."""
        ids = sorted(set(doc_ids))
        await self._lock(ids, wait)
        try:
            stats = MergeStats()
            due = Due()
            outcome: list[DeletionResult] = []

            async def optimistic() -> None:
                outcome[:] = [await self._optimistic_round(ids, replacements, keep_cache)]

            async def locked() -> None:
                outcome[:] = [await self._locked_round(ids, replacements, keep_cache, due)]

            await settle_one(f"delete of {len(ids)} documents", optimistic, locked, stats)
            await self.writer.refresh("", due)
        finally:
            await self.locks.release_all(ids)
        result = outcome[0]
        return DeletionResult(
            deleted_ids=result.deleted_ids,
            entities_rebuilt=result.entities_rebuilt,
            entities_deleted=result.entities_deleted,
            relations_rebuilt=result.relations_rebuilt,
            relations_deleted=result.relations_deleted,
            rounds=stats.rounds,
        )

    async def _lock(self, ids: list[str], wait: float) -> None:
        deadline = time.monotonic() + wait
        delay = 0.05
        while True:
            busy = await self.locks.try_acquire_all(ids)
            if not busy:
                return
            if time.monotonic() + delay > deadline:
                shown = ", ".join(repr(b) for b in busy[:10])
                raise DocumentBusy(
                    f"document(s) {shown} are being indexed by another process; nothing was changed "
                    "(retry when indexing has finished, or pass a longer wait)"
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    # ------------------------------------------------------------------ rounds

    async def _read(
        self, stores: Stores, ids: list[str]
    ) -> tuple[
        list[TouchedRow[EntityRow]], list[TouchedRow[RelationRow]], _Plan, list[list[str]], list[list[str]]
    ]:
        """The touched rows (versions first, then fragments) and the rows they rebuild into."""
        entities = await stores.graph.entities_touched_by(ids)
        relations = await stores.graph.relations_touched_by(ids)
        _refuse_unrecorded(entities, relations)
        names = [t.row.name for t in entities]
        pairs = [t.row.pair for t in relations]
        e_frags = group_by_name(await stores.graph.entity_fragments(names, ids)) if names else {}
        r_frags = group_by_pair(await stores.graph.relation_fragments(pairs, ids)) if pairs else {}
        plan = _Plan()
        e_descriptions: list[list[str]] = []
        r_descriptions: list[list[str]] = []
        for t in entities:
            if t.row.name not in e_frags:
                plan.dead_entities.append(t.row)
                continue
            row, frags = build_entity(t.row.name, e_frags[t.row.name], self.settings, t.row.version)
            plan.entities.append(row)
            e_descriptions.append(frags)
        for tr in relations:
            if tr.row.pair not in r_frags:
                plan.dead_relations.append(tr.row)
                continue
            rel, frags = build_relation(tr.row.pair, r_frags[tr.row.pair], self.settings, tr.row.version)
            plan.relations.append(rel)
            r_descriptions.append(frags)
        return entities, relations, plan, e_descriptions, r_descriptions

    async def _optimistic_round(
        self, ids: list[str], replacements: Sequence[DocumentRow], keep_cache: bool
    ) -> DeletionResult:
        async with session(self.pool) as s:
            entities, relations, plan, e_desc, r_desc = await self._read(s, ids)
        w = self.writer
        described = await w.describe_all("entity", [r.name for r in plan.entities], e_desc)
        plan.entities = [replace(r, description=d) for r, d in zip(plan.entities, described, strict=True)]
        described = await w.describe_all("relation", [f"{r.src} - {r.tgt}" for r in plan.relations], r_desc)
        plan.relations = [replace(r, description=d) for r, d in zip(plan.relations, described, strict=True)]
        stored_e = {t.row.name: t.vector_content for t in entities}
        stored_r = {t.row.pair: t.vector_content for t in relations}
        plan.entity_texts = w.texts(w.entity, plan.entities)
        plan.relation_texts = w.texts(w.relation, plan.relations)
        plan.entity_changed, plan.entity_vectors = await w.changed_vectors(
            plan.entity_texts, [stored_e[r.name] for r in plan.entities], [r.name for r in plan.entities]
        )
        plan.relation_changed, plan.relation_vectors = await w.changed_vectors(
            plan.relation_texts, [stored_r[r.pair] for r in plan.relations], [r.pair for r in plan.relations]
        )
        async with unit_of_work(self.pool) as uow:
            deleted = await self._write(uow, ids, replacements, keep_cache, plan)
            await uow.vectors.upsert_entities(
                [plan.entities[i].name for i in plan.entity_changed],
                [plan.entity_texts[i] for i in plan.entity_changed],
                plan.entity_vectors,
            )
            await uow.vectors.upsert_relations(
                [plan.relations[i].pair for i in plan.relation_changed],
                [plan.relation_texts[i] for i in plan.relation_changed],
                plan.relation_vectors,
            )
        return _result(deleted, plan)

    async def _locked_round(
        self, ids: list[str], replacements: Sequence[DocumentRow], keep_cache: bool, due: Due
    ) -> DeletionResult:
        """Under the row locks (entities before relations, as every writer takes them):
        descriptions joined without a model; summaries and vectors follow in the refresh."""
        async with unit_of_work(self.pool) as uow:
            entities = await uow.graph.entities_touched_by(ids)
            relations = await uow.graph.relations_touched_by(ids)
            await lock_rows(uow.graph, [t.row.name for t in entities], [t.row.pair for t in relations])
            _, _, plan, e_desc, r_desc = await self._read(uow, ids)
            join = self.writer.summarizer.join
            plan.entities = [
                replace(r, description=join(f)) for r, f in zip(plan.entities, e_desc, strict=True)
            ]
            plan.relations = [
                replace(r, description=join(f)) for r, f in zip(plan.relations, r_desc, strict=True)
            ]
            deleted = await self._write(uow, ids, replacements, keep_cache, plan)
        due.entities |= {r.name for r in plan.entities}
        due.relations |= {r.pair for r in plan.relations}
        return _result(deleted, plan)

    async def _write(
        self, uow: Stores, ids: list[str], replacements: Sequence[DocumentRow], keep_cache: bool, plan: _Plan
    ) -> list[str]:
        """The one transaction's writes; raises :class:`~.rounds.RowsMoved` if a row moved since it
        was read."""
        plan.entities = with_context_tokens(plan.entities, self.writer.tokenizer)
        plan.relations = with_context_tokens(plan.relations, self.writer.tokenizer)
        deleted = await uow.docs.delete(ids, keep_cache=keep_cache)
        await uow.docs.insert(replacements)
        expect_written(plan.entities, await uow.graph.upsert_entities_if_unchanged(plan.entities))
        expect_written(plan.relations, await uow.graph.upsert_relations_if_unchanged(plan.relations))
        expect_written(
            plan.dead_relations, await uow.graph.delete_relations_if_unchanged(plan.dead_relations)
        )
        expect_written(plan.dead_entities, await uow.graph.delete_entities_if_unchanged(plan.dead_entities))
        return sorted(deleted)


def _result(deleted: list[str], plan: _Plan) -> DeletionResult:
    return DeletionResult(
        deleted_ids=deleted,
        entities_rebuilt=len(plan.entities),
        entities_deleted=len(plan.dead_entities),
        relations_rebuilt=len(plan.relations),
        relations_deleted=len(plan.dead_relations),
    )


def _refuse_unrecorded(
    entities: list[TouchedRow[EntityRow]], relations: list[TouchedRow[RelationRow]]
) -> None:
    names = [t.row.name for t in entities if t.unrecorded]
    names += [f"{t.row.src} - {t.row.tgt}" for t in relations if t.unrecorded]
    if names:
        shown = ", ".join(repr(n) for n in names[:5])
        raise ProvenanceMissing(
            f"{len(names)} entities or relations touched by these documents ({shown}, ...) hold "
            "contributions indexed before provenance was recorded (migration 0006), so they cannot "
            "be rebuilt exactly; nothing was deleted. Re-index the documents into a new workspace "
            "to record their provenance, then delete there"
        )


def _names(what: str, values: Sequence[str]) -> list[str]:
    values = [values] if isinstance(values, str) else list(values)
    for v in values:
        if not isinstance(v, str) or not v.strip():
            raise InvalidInput(f"every entry of {what} must be a non-empty string, got {v!r}")
    return values


def _given(values: str | Sequence[str], empty: str) -> list[str]:
    listed = [values] if isinstance(values, str) else list(values)
    if not listed:
        raise InvalidInput(empty)
    return listed
