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
so the stored vector is always the model's vector of the stored text, whatever
the order the row's fragments came in. A document's contribution to a row is
recorded in the same transaction (``doc_entities``/``doc_relations``), so
re-running a document after a crash never merges it twice.

Under contention (popular entities named by many documents at once) rows can
keep changing. After :data:`OPTIMISTIC_ROUNDS` the rows still pending are
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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import asyncpg
import numpy as np

from ..config import Settings
from ..errors import ConcurrentUpdate, ReferenceGone
from ..llm.embedding_func import EmbeddingFunc
from ..store.rows import EntityFragmentRow, EntityRow, MergeState, RelationFragmentRow, RelationRow
from ..store.uow import session, unit_of_work
from ..tasks import gather_all
from ..types import ExtractedEntity, ExtractedRelation
from .merge import (
    build_entity,
    build_relation,
    count_context_tokens,
    document_fragments,
    entity_vector_text,
    group_by_name,
    group_by_pair,
    relation_vector_text,
)
from .summary import Summarizer, split_description

K = TypeVar("K")
V = TypeVar("V")

OPTIMISTIC_ROUNDS = 3
"""Optimistic rounds before the rows still changing are merged under their locks."""
LOCKED_ROUNDS = 3
"""Locked rounds before giving up (a locked round only misses rows created or
deleted by someone else between its lock and its write)."""
BATCH = 200

Pair = tuple[str, str]


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


Round = Callable[[str, dict[K, V], Due, MergeStats], Awaitable[set[K]]]


class GraphWriter:
    """Merges extracted mentions into the workspace graph, one transaction per batch."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        embed: EmbeddingFunc,
        summarizer: Summarizer,
        settings: Settings,
        *,
        entity_names_only: bool = False,
    ) -> None:
        self.pool = pool
        self.embed = embed
        self.summarizer = summarizer
        self.tokenizer = summarizer.tokenizer
        self.settings = settings
        self.entity_names_only = entity_names_only

    async def merge(
        self,
        doc_id: str,
        entities: Sequence[ExtractedEntity],
        relations: Sequence[ExtractedRelation],
        on_batch: Callable[[int, int], None] | None = None,
    ) -> MergeStats:
        """Merge all of a document's mentions: entities first, then relations.

        Each merged row is rebuilt from all its fragments (those stored and the
        document's), so it does not depend on the order documents arrive in.
        ``on_batch(done, total)`` is called once the batches are known and after
        each batch of :data:`BATCH` names or pairs is written.
        """
        stats = MergeStats()
        due = Due()
        entity_fragments, relation_fragments = document_fragments(doc_id, entities, relations)
        by_name = group_by_name(entity_fragments)
        by_pair = group_by_pair(relation_fragments)
        names = sorted(by_name)
        pairs = sorted(by_pair)
        total = -(-len(names) // BATCH) + -(-len(pairs) // BATCH)
        report = on_batch or (lambda done, total: None)
        report(0, total)
        for i in range(0, len(names), BATCH):
            batch = {n: by_name[n] for n in names[i : i + BATCH]}
            stats.entities += await self.until_done(
                self._entity_round, self._locked_entity_round, doc_id, batch, stats, due
            )
            report(i // BATCH + 1, total)
        done = -(-len(names) // BATCH)
        for i in range(0, len(pairs), BATCH):
            batch_r = {p: by_pair[p] for p in pairs[i : i + BATCH]}
            stats.relations += await self.until_done(
                self._relation_round, self._locked_relation_round, doc_id, batch_r, stats, due
            )
            report(done + i // BATCH + 1, total)
        await self.refresh(doc_id, due, stats)
        return stats

    async def until_done(
        self,
        optimistic: Round[K, V],
        locked: Round[K, V],
        doc_id: str,
        pending: dict[K, V],
        stats: MergeStats,
        due: Due,
    ) -> int:
        """Run ``optimistic`` rounds, then ``locked`` ones, until every key of ``pending``
        is done (a round returns the keys it finished); return how many were done.

        A round rolled back by a deadlock or serialization failure finishes nothing,
        as does one whose relation lost an endpoint that a graph edit removed after
        the round read it (the next round reads it missing and creates it again).
        """
        written = 0
        for attempt in range(OPTIMISTIC_ROUNDS + LOCKED_ROUNDS):
            if not pending:
                break
            stats.rounds += 1
            round_fn = optimistic if attempt < OPTIMISTIC_ROUNDS else locked
            if round_fn is locked:
                stats.locked_rounds += 1
            try:
                done = await round_fn(doc_id, pending, due, stats)
            except (ConcurrentUpdate, ReferenceGone):  # the round was rolled back
                done = set()
            written += len(done)
            pending = {k: v for k, v in pending.items() if k not in done}
        if pending:
            raise ConcurrentUpdate(
                f"document {doc_id}: {len(pending)} rows kept changing under concurrent merges"
            )
        return written

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

    def entity_texts(self, rows: Sequence[EntityRow]) -> list[str]:
        """What the model reads of each entity: :func:`entity_vector_text` (names only when
        ``entity_names_only``) cut by :meth:`vector_texts`."""
        return self.vector_texts([entity_vector_text(r, names_only=self.entity_names_only) for r in rows])

    def _entity_due(self, state: MergeState[EntityRow]) -> bool:
        row = state.row
        return row is not None and (
            self.entity_texts([row])[0] != state.vector_content
            or self.summarizer.needs_llm(split_description(row.description))
        )

    def _relation_due(self, state: MergeState[RelationRow]) -> bool:
        row = state.row
        return row is not None and (
            self.vector_texts([relation_vector_text(row)])[0] != state.vector_content
            or self.summarizer.needs_llm(split_description(row.description))
        )

    async def changed_vectors(
        self, texts: list[str], stored: list[str | None], stats: MergeStats | None = None
    ) -> tuple[list[int], np.ndarray]:
        """Indexes of the texts whose vector must be (re)computed (the model reads
        them differently from the stored text), and those vectors; counted in ``stats``."""
        changed = [i for i, (t, old) in enumerate(zip(texts, stored, strict=True)) if t != old]
        if stats is not None:
            stats.embedded += len(changed)
            stats.reembedded += sum(stored[i] is not None for i in changed)
        return changed, await self.embed([texts[i] for i in changed])

    async def describe_all(
        self, kind: Literal["entity", "relation"], labels: list[str], fragments: list[list[str]]
    ) -> list[str]:
        pairs = zip(labels, fragments, strict=True)
        return await gather_all(*(self.summarizer.describe(kind, lab, f) for lab, f in pairs))

    # ------------------------------------------------------------------ entities

    def _merge_entities(
        self,
        pending: dict[str, list[EntityFragmentRow]],
        current: dict[str, MergeState[EntityRow]],
        stored: dict[str, list[EntityFragmentRow]],
    ) -> tuple[set[str], list[EntityRow], list[list[str]]]:
        already = {n for n, state in current.items() if state.linked}
        merged: list[EntityRow] = []
        fragments: list[list[str]] = []
        for name in pending:
            if name in already:
                continue
            state = current[name]
            version = state.row.version if state.row is not None else 0
            if state.unrecorded:
                row, frags = build_entity(name, pending[name], self.settings, version, legacy=state.row)
            else:
                row, frags = build_entity(name, stored.get(name, []) + pending[name], self.settings, version)
            merged.append(row)
            fragments.append(frags)
        return already, merged, fragments

    async def _entity_round(
        self, doc_id: str, pending: dict[str, list[EntityFragmentRow]], due: Due, stats: MergeStats
    ) -> set[str]:
        async with session(self.pool) as s:
            current, stored = await s.graph.entities_to_merge(doc_id, list(pending))
        already, merged, fragments = self._merge_entities(pending, current, stored)
        due.entities |= {n for n in already if self._entity_due(current[n])}
        if not merged:
            return already
        descriptions = await self.describe_all("entity", [r.name for r in merged], fragments)
        for row, description in zip(merged, descriptions, strict=True):
            row.description = description
        texts = self.entity_texts(merged)
        stored_texts = [current[r.name].vector_content for r in merged]
        changed, vectors = await self.changed_vectors(texts, stored_texts, stats)
        count_context_tokens(merged, self.tokenizer)
        new_vectors = by_key([r.name for r in merged], texts, changed, vectors)
        async with session(self.pool) as s:  # one statement, one transaction
            written = await s.graph.merge_entities(
                merged, new_vectors, [f for r in merged for f in pending[r.name]], doc_id
            )
        return written | already

    async def _locked_entity_round(
        self, doc_id: str, pending: dict[str, list[EntityFragmentRow]], due: Due, stats: MergeStats
    ) -> set[str]:
        async with unit_of_work(self.pool) as uow:
            await uow.graph.lock_entities(sorted(pending))
            current, stored = await uow.graph.entities_to_merge(doc_id, list(pending))
            already, merged, fragments = self._merge_entities(pending, current, stored)
            for row, frags in zip(merged, fragments, strict=True):
                row.description = self.summarizer.join(frags)
            count_context_tokens(merged, self.tokenizer)
            written = await uow.graph.merge_entities(
                merged, None, [f for r in merged for f in pending[r.name]], doc_id
            )
        due.entities |= written | {n for n in already if self._entity_due(current[n])}
        return written | already

    # ----------------------------------------------------------------- relations

    def _merge_relations(
        self,
        pending: dict[Pair, list[RelationFragmentRow]],
        current: dict[Pair, MergeState[RelationRow]],
        stored: dict[Pair, list[RelationFragmentRow]],
    ) -> tuple[set[Pair], list[RelationRow], list[list[str]], dict[str, EntityRow]]:
        """Merged relations, their fragments, and placeholder rows for missing endpoints."""
        already = {p for p, state in current.items() if state.linked}
        merged: list[RelationRow] = []
        fragments: list[list[str]] = []
        endpoints: dict[str, EntityRow] = {}
        for pair in pending:
            if pair in already:
                continue
            state = current[pair]
            version = state.row.version if state.row is not None else 0
            if state.unrecorded:
                row, frags = build_relation(pair, pending[pair], self.settings, version, legacy=state.row)
            else:
                known = stored.get(pair, []) + pending[pair]
                row, frags = build_relation(pair, known, self.settings, version)
            merged.append(row)
            fragments.append(frags)
            for name in pair:
                if name not in state.existing_endpoints and name not in endpoints:
                    endpoints[name] = EntityRow(
                        name=name, source_ids=list(row.source_ids), file_paths=list(row.file_paths)
                    )
        return already, merged, fragments, endpoints

    @staticmethod
    def _describe_endpoints(merged: list[RelationRow], endpoints: dict[str, EntityRow]) -> list[EntityRow]:
        for row in merged:
            for name in row.pair:
                if name in endpoints and not endpoints[name].description:
                    endpoints[name].description = (
                        split_description(row.description)[0] if row.description else ""
                    )
        return sorted(endpoints.values(), key=lambda e: e.name)

    async def _relation_round(
        self, doc_id: str, pending: dict[Pair, list[RelationFragmentRow]], due: Due, stats: MergeStats
    ) -> set[Pair]:
        async with session(self.pool) as s:
            current, stored = await s.graph.relations_to_merge(doc_id, list(pending))
        already, merged, fragments, endpoints = self._merge_relations(pending, current, stored)
        due.relations |= {p for p in already if self._relation_due(current[p])}
        if not merged:
            return already
        descriptions = await self.describe_all("relation", [f"{r.src} - {r.tgt}" for r in merged], fragments)
        for row, description in zip(merged, descriptions, strict=True):
            row.description = description
        new_entities = self._describe_endpoints(merged, endpoints)
        count_context_tokens([*merged, *new_entities], self.tokenizer)
        texts = self.vector_texts([relation_vector_text(r) for r in merged])
        end_texts = self.entity_texts(new_entities)
        old_texts = [current[r.pair].vector_content for r in merged] + [None] * len(new_entities)
        changed, vectors = await self.changed_vectors(texts + end_texts, old_texts, stats)
        n = len(merged)
        rel = [k for k, i in enumerate(changed) if i < n]
        ent = [k for k, i in enumerate(changed) if i >= n]
        async with session(self.pool) as s:  # one statement, one transaction
            written, _ = await s.graph.merge_relations(
                merged,
                by_key([r.pair for r in merged], texts, [changed[k] for k in rel], vectors[rel]),
                [f for r in merged for f in pending[r.pair]],
                doc_id,
                new_entities,
                by_key(
                    [e.name for e in new_entities], end_texts, [changed[k] - n for k in ent], vectors[ent]
                ),
            )
        return written | already

    async def _locked_relation_round(
        self, doc_id: str, pending: dict[Pair, list[RelationFragmentRow]], due: Due, stats: MergeStats
    ) -> set[Pair]:
        # Missing endpoints are created before the relations are locked: every writer
        # takes entity rows before relation rows, so lockers cannot deadlock.
        async with session(self.pool) as s:
            before = await s.graph.relations_for_merge(doc_id, list(pending))
        _, merged, fragments, endpoints = self._merge_relations(pending, before, {})
        for row, frags in zip(merged, fragments, strict=True):
            row.description = self.summarizer.join(frags)
        new_entities = self._describe_endpoints(merged, endpoints)
        count_context_tokens(new_entities, self.tokenizer)
        async with unit_of_work(self.pool) as uow:
            _, created = await uow.graph.merge_relations([], doc_id=doc_id, endpoints=new_entities)
            await uow.graph.lock_relations(sorted(pending))
            current, stored = await uow.graph.relations_to_merge(doc_id, list(pending))
            already, merged, fragments, _ = self._merge_relations(pending, current, stored)
            for row, frags in zip(merged, fragments, strict=True):
                row.description = self.summarizer.join(frags)
            count_context_tokens(merged, self.tokenizer)
            written, _ = await uow.graph.merge_relations(
                merged, None, [f for r in merged for f in pending[r.pair]], doc_id
            )
        due.entities |= created
        due.relations |= written | {p for p in already if self._relation_due(current[p])}
        return written | already

    # ------------------------------------------------------------------- refresh

    async def refresh(self, doc_id: str, due: Due, stats: MergeStats | None = None) -> None:
        """Summaries and vectors for the due rows, in one optimistic round per batch
        (``doc_id`` only tells which document's links the reads report; the texts
        embedded are counted in ``stats``)."""
        names = sorted(due.entities)
        for i in range(0, len(names), BATCH):
            await self._refresh_entities(doc_id, names[i : i + BATCH], stats)
        pairs = sorted(due.relations)
        for i in range(0, len(pairs), BATCH):
            await self._refresh_relations(doc_id, pairs[i : i + BATCH], stats)

    async def _refresh_entities(self, doc_id: str, names: list[str], stats: MergeStats | None) -> None:
        async with session(self.pool) as s:
            current = await s.graph.entities_for_merge(doc_id, names)
        rows = [state.row for state in current.values() if state.row is not None and self._entity_due(state)]
        if not rows:
            return
        descriptions = await self.describe_all(
            "entity", [r.name for r in rows], [split_description(r.description) for r in rows]
        )
        for row, description in zip(rows, descriptions, strict=True):
            row.description = description
        texts = self.entity_texts(rows)
        stored_texts = [current[r.name].vector_content for r in rows]
        changed, vectors = await self.changed_vectors(texts, stored_texts, stats)
        count_context_tokens(rows, self.tokenizer)
        async with session(self.pool) as s:
            await s.graph.merge_entities(rows, by_key([r.name for r in rows], texts, changed, vectors))

    async def _refresh_relations(self, doc_id: str, pairs: list[Pair], stats: MergeStats | None) -> None:
        async with session(self.pool) as s:
            current = await s.graph.relations_for_merge(doc_id, pairs)
        rows = [
            state.row for state in current.values() if state.row is not None and self._relation_due(state)
        ]
        if not rows:
            return
        descriptions = await self.describe_all(
            "relation", [f"{r.src} - {r.tgt}" for r in rows], [split_description(r.description) for r in rows]
        )
        for row, description in zip(rows, descriptions, strict=True):
            row.description = description
        texts = self.vector_texts([relation_vector_text(r) for r in rows])
        stored_texts = [current[r.pair].vector_content for r in rows]
        changed, vectors = await self.changed_vectors(texts, stored_texts, stats)
        count_context_tokens(rows, self.tokenizer)
        async with session(self.pool) as s:
            await s.graph.merge_relations(rows, by_key([r.pair for r in rows], texts, changed, vectors))


def by_key(
    keys: Sequence[K], texts: Sequence[str], changed: Sequence[int], vectors: np.ndarray
) -> dict[K, tuple[str, np.ndarray]]:
    """The text and new vector of each ``changed`` index, by its key (``vectors[k]`` is
    the vector of ``changed[k]``)."""
    return {keys[i]: (texts[i], vectors[k]) for k, i in enumerate(changed)}
