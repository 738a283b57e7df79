"""Transactional merges of a document's entities and relations into the graph.

Each round reads the stored rows without locks, computes the merged rows
(LLM summaries and embeddings included) with no transaction open, then
writes them in one statement (rows, vectors, fragments and document links
together, so one transaction) that only succeeds for rows nobody changed in
between (a version check under the row lock). The read is one statement too:
the rows' versions and the stored fragments they are rebuilt from come from
one snapshot. Rows that changed are merged again. A vector is recomputed
only when what the embedding model reads of its text changed: the text is cut
as the model cuts it (:attr:`EmbeddingFunc.truncate`, else at its
``max_token_size``) and compared with the cut text stored beside the vector,
so the stored vector is always the model's vector of the stored text (a short
relation text's: composed from its parts' vectors, :mod:`.composed`), whatever
the order the row's fragments came in. A document's contribution to a row is
recorded in the same transaction (``doc_entities``/``doc_relations``), so
re-running a document after a crash never merges it twice.

The rounds, the version checks and the lock order are the write protocol of
:mod:`.rounds`, shared with the deleter and the graph editor. Under
contention (popular entities named by many documents at once) rows can keep
changing. After :data:`~.rounds.OPTIMISTIC_ROUNDS` the rows still pending are
merged under their row locks, taken in name order in one statement. No model
is called while the locks are held: the descriptions are joined as text and
the vectors left as they were. Such a row is *due*: its stored vector text
differs from its text, or its description has enough fragments to need a
summary. Once the merge has committed, the writer refreshes its due rows in
one optimistic round (summary, vector, versioned write). If that round loses,
another writer changed the row after it and refreshes the row itself, so the
last write of every row leaves it refreshed. A crash between the two leaves
the row due; the document is then re-run, finds the row linked and due, and
refreshes it.

Entities and relations go through the same steps; what differs between them
(key, vector text, build rule, store calls, the endpoints a relation needs) is
held by their :class:`Kind`. Relations come after entities: a relation whose
endpoint is missing creates it (a placeholder entity) in its own write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Generic, Literal, TypeVar

import numpy as np

from ..config import Settings
from ..db.pool import WorkspacePool
from ..llm.embedding_func import EmbeddingFunc
from ..store.graph import GraphStore
from ..store.rows import EntityFragmentRow, EntityRow, MergeState, RelationFragmentRow, RelationRow
from ..store.uow import session, unit_of_work
from ..tasks import gather_all
from ..types import ExtractedEntity, ExtractedRelation
from .composed import Key, PartVectors, composed_parts
from .merge import (
    VectorTexts,
    build_entity,
    build_relation,
    document_fragments,
    entity_vector_text,
    group_by_name,
    group_by_pair,
    relation_vector_text,
    with_context_tokens,
)
from .rounds import Pair, lock_rows, settle, settle_one
from .summary import Summarizer, split_description

K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R", EntityRow, RelationRow)
F = TypeVar("F", EntityFragmentRow, RelationFragmentRow)

BATCH = 200


@dataclass
class MergeStats:
    """What one document's merge wrote, and the texts it sent to the embedding model
    (``embedded``; ``reembedded`` of them replaced a stored vector)."""

    entities: int = 0
    relations: int = 0
    rounds: int = 0
    locked_rounds: int = 0
    embedded: int = 0
    reembedded: int = 0


@dataclass
class Due:
    """Rows written without their summary or vector, to refresh after the merge."""

    entities: set[str] = field(default_factory=set)
    relations: set[Pair] = field(default_factory=set)


Vectors = Mapping[Any, tuple[str, np.ndarray]]


@dataclass(frozen=True)
class Kind(Generic[K, R, F]):
    """What the writer needs to know of one kind of graph row: its key, the label its
    summary is asked under, the text its vector is computed from, its build rule, the
    endpoints it needs, where its due keys and counts go, and the store calls that read,
    lock and write it."""

    name: Literal["entity", "relation"]
    key: Callable[[R], K]
    label: Callable[[R], str]
    vector_text: Callable[[R], str]
    build: Callable[[K, Sequence[F], Settings, int, R | None], tuple[R, list[str]]]
    endpoints: Callable[[R], tuple[str, ...]]
    states: Callable[[GraphStore, str, Sequence[K]], Awaitable[dict[K, MergeState[R]]]]
    states_and_fragments: Callable[
        [GraphStore, str, Sequence[K]], Awaitable[tuple[dict[K, MergeState[R]], dict[K, list[F]]]]
    ]
    lock: Callable[[GraphStore, Sequence[K]], Awaitable[None]]
    """Lock the stored rows a write of these keys changes (a relation's: its endpoints,
    whose degrees it moves, and itself), in the one lock order (:func:`.rounds.lock_rows`)."""
    write: Callable[..., Awaitable[tuple[set[K], set[str]]]]
    """``write(graph, rows, vectors, fragments, doc_id, endpoints, endpoint_vectors)``:
    the versioned write; returns the keys written and the endpoints created."""

    due: Callable[[Due], set[K]]
    """The keys of this kind in a :class:`Due`."""
    count: Callable[[MergeStats, int], None]
    """Add rows of this kind written to a :class:`MergeStats`."""
    model_reads: Callable[[R, str], bool]
    """Whether the embedding model reads a row's vector text (not: a vector composed
    from its parts' vectors, :mod:`.composed`)."""
    creates_endpoints: bool
    """Whether a write of this kind creates the entities its rows need."""


AnyKind = Kind[Any, Any, Any]


async def _write_entities(
    graph: GraphStore,
    rows: Sequence[EntityRow],
    vectors: Vectors | None = None,
    fragments: Sequence[EntityFragmentRow] = (),
    doc_id: str | None = None,
    endpoints: Sequence[EntityRow] = (),
    endpoint_vectors: Vectors | None = None,
) -> tuple[set[str], set[str]]:
    return await graph.write_entities(rows, vectors, fragments, doc_id), set()


ENTITY: Kind[str, EntityRow, EntityFragmentRow] = Kind(
    name="entity",
    due=lambda due: due.entities,
    count=lambda stats, n: setattr(stats, "entities", stats.entities + n),
    model_reads=lambda row, text: True,
    creates_endpoints=False,
    key=lambda row: row.name,
    label=lambda row: row.name,
    vector_text=entity_vector_text,
    build=build_entity,
    endpoints=lambda row: (),
    states=GraphStore.entity_states,
    states_and_fragments=GraphStore.entity_states_and_fragments,
    lock=lambda graph, names: lock_rows(graph, names, ()),
    write=_write_entities,
)
RELATION: Kind[Pair, RelationRow, RelationFragmentRow] = Kind(
    name="relation",
    due=lambda due: due.relations,
    count=lambda stats, n: setattr(stats, "relations", stats.relations + n),
    model_reads=lambda row, text: composed_parts(text, row.src, row.tgt) is None,
    creates_endpoints=True,
    key=lambda row: row.pair,
    label=lambda row: f"{row.src} - {row.tgt}",
    vector_text=relation_vector_text,
    build=build_relation,
    endpoints=lambda row: row.pair,
    states=GraphStore.relation_states,
    states_and_fragments=GraphStore.relation_states_and_fragments,
    lock=lambda graph, pairs: lock_rows(graph, sorted({n for p in pairs for n in p}), pairs),
    write=GraphStore.write_relations,
)


@dataclass
class Rebuilt(Generic[K, R]):
    """A round's rows: those ``doc_id`` is already linked to, the merged rows (description
    still to decide) with their description fragments, and placeholder rows for missing
    endpoints."""

    already: set[K]
    rows: list[R]
    fragments: list[list[str]]
    endpoints: dict[str, EntityRow]


class GraphWriter:
    """Merges extracted mentions into the workspace graph, one transaction per batch."""

    def __init__(
        self,
        pool: WorkspacePool,
        embed: EmbeddingFunc,
        summarizer: Summarizer,
        settings: Settings,
        *,
        vector_texts: VectorTexts = "full",
    ) -> None:
        self.pool = pool
        self.embed = embed
        self.parts = PartVectors(embed)
        self.summarizer = summarizer
        self.tokenizer = summarizer.tokenizer
        self.settings = settings
        self.entity = replace(ENTITY, vector_text=partial(entity_vector_text, rule=vector_texts))
        self.relation = replace(RELATION, vector_text=partial(relation_vector_text, rule=vector_texts))
        self.composes = vector_texts == "short"

    async def merge(
        self,
        doc_id: str,
        entities: Sequence[ExtractedEntity],
        relations: Sequence[ExtractedRelation],
        on_batch: Callable[[int, int], None] | None = None,
        due: Due | None = None,
    ) -> MergeStats:
        """Merge all of a document's mentions: entities first, then relations.

        Each merged row is rebuilt from all its fragments (those stored and the
        document's), so it does not depend on the order documents arrive in.
        ``on_batch(done, total)`` is called once the batches are known and after
        each batch of :data:`BATCH` names or pairs is written.

        With ``due`` (an indexing run's), a row whose many fragments need a summary
        is written with them joined (and its vector of that text) and added to
        ``due``: the run summarises it once, after all its merges (:meth:`refresh`),
        so a popular row costs one summary per run, not one per document. Without,
        rows are summarised as they are merged and the due rows refreshed before
        this returns.
        """
        stats = MergeStats()
        deferred = due is not None
        due = due if due is not None else Due()
        entity_fragments, relation_fragments = document_fragments(doc_id, entities, relations)
        batches: list[tuple[AnyKind, dict[Any, Any]]] = []
        groups: list[tuple[AnyKind, dict[Any, Any]]] = [
            (self.entity, group_by_name(entity_fragments)),
            (self.relation, group_by_pair(relation_fragments)),
        ]
        for kind, grouped in groups:
            keys = sorted(grouped)
            batches += [
                (kind, {k: grouped[k] for k in keys[i : i + BATCH]}) for i in range(0, len(keys), BATCH)
            ]
        report = on_batch or (lambda done, total: None)
        report(0, len(batches))
        for done, (kind, batch) in enumerate(batches, 1):
            written = await settle(
                f"document {doc_id}",
                batch,
                partial(self._round, kind, doc_id, due, stats, deferred),
                partial(self._locked_round, kind, doc_id, due, stats),
                stats,
            )
            kind.count(stats, written)
            report(done, len(batches))
        if not deferred:
            await self.refresh(doc_id, due, stats)
        return stats

    def vector_texts(self, texts: list[str]) -> list[str]:
        """``texts`` cut to what the embedding model reads (:attr:`EmbeddingFunc.truncate`,
        else its ``max_token_size`` tokens), so a description that only grows past that
        point does not need a new vector."""
        if self.embed.truncate is not None:
            return self.embed.truncate(texts)
        limit = self.embed.max_token_size
        if limit is None:
            return texts
        return [
            t if self.tokenizer.count(t) <= limit else self.tokenizer.decode(self.tokenizer.encode(t)[:limit])
            for t in texts
        ]

    def texts(self, kind: Kind[Any, R, Any], rows: Sequence[R]) -> list[str]:
        """What the model reads of each row: the kind's vector text cut by :meth:`vector_texts`
        (a composed relation's text whole: the model never reads it)."""
        texts = [kind.vector_text(r) for r in rows]
        read = [
            i for i, (r, t) in enumerate(zip(rows, texts, strict=True))
            if kind.model_reads(r, t)
        ]  # fmt: skip
        for i, t in zip(read, self.vector_texts([texts[i] for i in read]), strict=True):
            texts[i] = t
        return texts

    async def chunk_vectors(
        self, ids: Sequence[str], known: Mapping[str, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """The vectors of chunk ``ids``: those ``known`` (chunks not stored yet), the
        others stored (one statement)."""
        known = known or {}
        found = {i: known[i] for i in ids if i in known}
        rest = [i for i in ids if i not in known]
        if rest:
            async with session(self.pool) as s:
                found |= await s.chunks.vectors(rest)
        return found

    def _is_due(self, kind: Kind[Any, R, Any], state: MergeState[R]) -> bool:
        row = state.row
        return row is not None and (
            self.texts(kind, [row])[0] != state.vector_content
            or self.summarizer.needs_llm(split_description(row.description))
        )

    async def changed_vectors(
        self,
        texts: list[str],
        stored: list[str | None],
        keys: Sequence[Key],
        stats: MergeStats | None = None,
        chunks: Mapping[str, np.ndarray] | None = None,
    ) -> tuple[list[int], np.ndarray]:
        """Indexes of the texts whose vector must be (re)computed (the model reads
        them differently from the stored text), and those vectors (``keys[i]`` is the
        row of ``texts[i]``; :meth:`PartVectors.embed_rows`, source chunks not stored
        yet in ``chunks``); the texts sent to the model are counted in ``stats``."""
        changed = [i for i, (t, old) in enumerate(zip(texts, stored, strict=True)) if t != old]
        vectors, sent = await self.parts.embed_rows(
            [keys[i] for i in changed], [texts[i] for i in changed], partial(self.chunk_vectors, known=chunks)
        )
        if stats is not None:
            stats.embedded += sent
            stats.reembedded += sum(stored[i] is not None for i in changed)
        return changed, vectors

    async def describe_all(
        self, kind: Literal["entity", "relation"], labels: list[str], fragments: list[list[str]]
    ) -> list[str]:
        pairs = zip(labels, fragments, strict=True)
        return await gather_all(*(self.summarizer.describe(kind, lab, f) for lab, f in pairs))

    async def _summarized(
        self, kind: Kind[Any, R, Any], rows: list[R], fragments: list[list[str]], skip: Collection[Any] = ()
    ) -> list[R]:
        """``rows`` with the descriptions the summarizer makes of their ``fragments`` (those
        whose key is in ``skip``: joined, no model call)."""
        asked = [i for i, r in enumerate(rows) if kind.key(r) not in skip]
        described = await self.describe_all(
            kind.name, [kind.label(rows[i]) for i in asked], [fragments[i] for i in asked]
        )
        descriptions = [self.summarizer.join(f) for f in fragments]
        for i, d in zip(asked, described, strict=True):
            descriptions[i] = d
        return [replace(r, description=d) for r, d in zip(rows, descriptions, strict=True)]

    def _joined(self, rows: list[R], fragments: list[list[str]]) -> list[R]:
        """``rows`` with their ``fragments`` joined as text (no model call)."""
        return [replace(r, description=self.summarizer.join(f)) for r, f in zip(rows, fragments, strict=True)]

    def _rebuild(
        self,
        kind: Kind[K, R, F],
        pending: dict[K, list[F]],
        current: dict[K, MergeState[R]],
        stored: dict[K, list[F]],
    ) -> Rebuilt[K, R]:
        already = {k for k, state in current.items() if state.linked}
        out: Rebuilt[K, R] = Rebuilt(already, [], [], {})
        for key in pending:
            if key in already:
                continue
            state = current[key]
            version = state.row.version if state.row is not None else 0
            if state.unrecorded:
                row, frags = kind.build(key, pending[key], self.settings, version, state.row)
            else:
                row, frags = kind.build(key, stored.get(key, []) + pending[key], self.settings, version, None)
            out.rows.append(row)
            out.fragments.append(frags)
            for name in kind.endpoints(row):
                if name not in state.existing_endpoints and name not in out.endpoints:
                    out.endpoints[name] = EntityRow(
                        name=name, source_ids=list(row.source_ids), file_paths=list(row.file_paths)
                    )
        return out

    @staticmethod
    def _described_endpoints(
        kind: Kind[Any, R, Any], merged: Sequence[R], endpoints: dict[str, EntityRow]
    ) -> list[EntityRow]:
        """The placeholder ``endpoints``, each described by the first of the ``merged``
        rows naming it that has a description, in name order."""
        described: dict[str, str] = {}
        for row in merged:
            for name in kind.endpoints(row):
                if name in endpoints and not described.get(name):
                    described[name] = split_description(row.description)[0] if row.description else ""
        rows = (replace(e, description=described.get(e.name, e.description)) for e in endpoints.values())
        return sorted(rows, key=lambda e: e.name)

    async def _round(
        self,
        kind: AnyKind,
        doc_id: str,
        due: Due,
        stats: MergeStats,
        defer: bool,
        pending: dict[Any, list[Any]],
    ) -> set[Any]:
        async with session(self.pool) as s:
            current, stored = await kind.states_and_fragments(s.graph, doc_id, list(pending))
        rebuilt = self._rebuild(kind, pending, current, stored)
        already = rebuilt.already
        kind.due(due).update(k for k in already if self._is_due(kind, current[k]))
        if not rebuilt.rows:
            return already
        deferred = {
            kind.key(r)
            for r, f in zip(rebuilt.rows, rebuilt.fragments, strict=True)
            if defer and self.summarizer.many(f)
        }
        merged = await self._summarized(kind, rebuilt.rows, rebuilt.fragments, skip=deferred)
        new_entities = self._described_endpoints(kind, merged, rebuilt.endpoints)
        merged = with_context_tokens(merged, self.tokenizer)
        new_entities = with_context_tokens(new_entities, self.tokenizer)
        texts = self.texts(kind, merged)
        end_texts = self.texts(self.entity, new_entities)
        old_texts = [current[kind.key(r)].vector_content for r in merged] + [None] * len(new_entities)
        keys = [kind.key(r) for r in merged] + [e.name for e in new_entities]
        changed, vectors = await self.changed_vectors(texts + end_texts, old_texts, keys, stats)
        n = len(merged)
        own = [k for k, i in enumerate(changed) if i < n]
        ends = [k for k, i in enumerate(changed) if i >= n]
        async with unit_of_work(self.pool) as uow:
            await kind.lock(uow.graph, [kind.key(r) for r in merged])
            written, _ = await kind.write(
                uow.graph,
                merged,
                by_key([kind.key(r) for r in merged], texts, [changed[k] for k in own], vectors[own]),
                [f for r in merged for f in pending[kind.key(r)]],
                doc_id,
                new_entities,
                by_key(
                    [e.name for e in new_entities], end_texts, [changed[k] - n for k in ends], vectors[ends]
                ),
            )
        kind.due(due).update(written & deferred)
        return written | already

    async def _locked_round(
        self, kind: AnyKind, doc_id: str, due: Due, stats: MergeStats, pending: dict[Any, list[Any]]
    ) -> set[Any]:
        new_entities: list[EntityRow] = []
        if kind.creates_endpoints:
            async with session(self.pool) as s:
                before = await kind.states(s.graph, doc_id, list(pending))
            rebuilt = self._rebuild(kind, pending, before, {})
            merged = self._joined(rebuilt.rows, rebuilt.fragments)
            new_entities = with_context_tokens(
                self._described_endpoints(kind, merged, rebuilt.endpoints), self.tokenizer
            )
        async with unit_of_work(self.pool) as uow:
            await kind.lock(uow.graph, sorted(pending))
            _, created = await kind.write(uow.graph, [], None, (), doc_id, new_entities)
            current, stored = await kind.states_and_fragments(uow.graph, doc_id, list(pending))
            rebuilt = self._rebuild(kind, pending, current, stored)
            merged = with_context_tokens(self._joined(rebuilt.rows, rebuilt.fragments), self.tokenizer)
            written, _ = await kind.write(
                uow.graph, merged, None, [f for r in merged for f in pending[kind.key(r)]], doc_id
            )
        already = rebuilt.already
        due.entities |= created
        kind.due(due).update(written | {k for k in already if self._is_due(kind, current[k])})
        return written | already

    async def refresh(self, doc_id: str, due: Due, stats: MergeStats | None = None) -> None:
        """Summaries and vectors for the due rows, in one optimistic round per batch, run
        again if a deadlock rolled it back (``doc_id`` only tells which document's links
        the reads report; the texts embedded are counted in ``stats``)."""
        kinds: tuple[AnyKind, ...] = (self.entity, self.relation)
        for kind in kinds:
            keys = sorted(kind.due(due))
            for i in range(0, len(keys), BATCH):
                await settle_one(
                    f"summaries of document {doc_id}",
                    partial(self._refresh, kind, doc_id, keys[i : i + BATCH], stats),
                )

    async def _refresh(self, kind: AnyKind, doc_id: str, keys: list[Any], stats: MergeStats | None) -> None:
        """One optimistic round over due rows: each is described again from its stored
        fragments (as a merge would; a row without any, from its stored description) and
        written, with a new vector if its text changed, only if it changed. A row that
        moved meanwhile was written by another writer, which refreshes it itself."""
        async with session(self.pool) as s:
            current, stored = await kind.states_and_fragments(s.graph, "", keys)
        from_fragments = {
            k for k, state in current.items() if state.row is not None and (k in stored or state.unrecorded)
        }
        rebuilt = self._rebuild(kind, {k: [] for k in sorted(from_fragments)}, current, stored)
        rows = list(rebuilt.rows)
        fragments = list(rebuilt.fragments)
        for k in keys:
            row = current[k].row
            if row is not None and k not in from_fragments and self._is_due(kind, current[k]):
                rows.append(row)
                fragments.append(split_description(row.description))
        if not rows:
            return
        rows = await self._summarized(kind, rows, fragments)
        texts = self.texts(kind, rows)
        stored_texts = [current[kind.key(r)].vector_content for r in rows]
        stored_rows = [current[kind.key(r)].row for r in rows]
        stored_descriptions = [o.description if o is not None else None for o in stored_rows]
        differ = [
            i for i, (r, t, old, old_description) in enumerate(
                zip(rows, texts, stored_texts, stored_descriptions, strict=True))
            if t != old or r.description != old_description
        ]  # fmt: skip
        if not differ:
            return
        rows = [rows[i] for i in differ]
        texts = [texts[i] for i in differ]
        stored_texts = [stored_texts[i] for i in differ]
        keys = [kind.key(r) for r in rows]
        changed, vectors = await self.changed_vectors(texts, stored_texts, keys, stats)
        rows = with_context_tokens(rows, self.tokenizer)
        async with unit_of_work(self.pool) as uow:
            await kind.lock(uow.graph, keys)
            await kind.write(uow.graph, rows, by_key(keys, texts, changed, vectors))


def by_key(
    keys: Sequence[K], texts: Sequence[str], changed: Sequence[int], vectors: np.ndarray
) -> dict[K, tuple[str, np.ndarray]]:
    """The text and new vector of each ``changed`` index, by its key (``vectors[k]`` is
    the vector of ``changed[k]``)."""
    return {keys[i]: (texts[i], vectors[k]) for k, i in enumerate(changed)}
