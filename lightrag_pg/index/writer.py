"""Transactional merges of a document's entities and relations into the graph.

Each round reads the stored rows without locks, computes the merged rows
(LLM summaries and embeddings included) with no transaction open, then
writes them in one transaction that only succeeds for rows nobody changed
in between (a version check under the row lock). Rows that changed are
merged again. A vector is recomputed only when the text it is embedded from
changed (that text is cut at the embedding model's input limit). A
document's contribution to a row is recorded in the same transaction
(``doc_entities``/``doc_relations``), so re-running a document after a crash
never merges it twice.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import asyncpg
import numpy as np

from ..config import Settings
from ..errors import ConcurrentUpdate
from ..llm.embedding_func import EmbeddingFunc
from ..store.rows import EntityRow, RelationRow, canonical_pair
from ..store.uow import session, unit_of_work
from ..types import ExtractedEntity, ExtractedRelation
from .merge import (
    count_context_tokens,
    entity_vector_text,
    merge_entity,
    merge_relation,
    relation_vector_text,
)
from .summary import Summarizer, split_description

K = TypeVar("K")
V = TypeVar("V")

MAX_ROUNDS = 8
BATCH = 200


@dataclass
class MergeStats:
    """What one document's merge wrote."""

    entities: int = 0
    relations: int = 0
    rounds: int = 0


class GraphWriter:
    """Merges extracted mentions into the workspace graph, one transaction per batch."""

    def __init__(
        self, pool: asyncpg.Pool, embed: EmbeddingFunc, summarizer: Summarizer, settings: Settings
    ) -> None:
        self.pool = pool
        self.embed = embed
        self.summarizer = summarizer
        self.tokenizer = summarizer.tokenizer
        self.settings = settings

    async def merge(
        self, doc_id: str, entities: Sequence[ExtractedEntity], relations: Sequence[ExtractedRelation]
    ) -> MergeStats:
        """Merge all of a document's mentions: entities first, then relations."""
        stats = MergeStats()
        by_name: dict[str, list[ExtractedEntity]] = defaultdict(list)
        for e in entities:
            by_name[e.name].append(e)
        by_pair: dict[tuple[str, str], list[ExtractedRelation]] = defaultdict(list)
        for r in relations:
            by_pair[canonical_pair(r.src, r.tgt)].append(r)
        names = sorted(by_name)
        for i in range(0, len(names), BATCH):
            batch = {n: by_name[n] for n in names[i : i + BATCH]}
            stats.entities += await self._until_done(self._entity_round, doc_id, batch, stats)
        pairs = sorted(by_pair)
        for i in range(0, len(pairs), BATCH):
            batch_r = {p: by_pair[p] for p in pairs[i : i + BATCH]}
            stats.relations += await self._until_done(self._relation_round, doc_id, batch_r, stats)
        return stats

    async def _until_done(
        self,
        round_fn: Callable[[str, dict[K, V]], Awaitable[set[K]]],
        doc_id: str,
        pending: dict[K, V],
        stats: MergeStats,
    ) -> int:
        written = 0
        for _ in range(MAX_ROUNDS):
            if not pending:
                return written
            stats.rounds += 1
            done = await round_fn(doc_id, pending)
            written += len(done)
            pending = {k: v for k, v in pending.items() if k not in done}
        raise ConcurrentUpdate(
            f"document {doc_id}: {len(pending)} rows kept changing under concurrent merges"
        )

    def _vector_text(self, text: str) -> str:
        """``text`` cut to what the embedding model reads (its ``max_token_size``), so a
        description that only grows past that point does not need a new vector."""
        limit = self.embed.max_token_size
        if limit is None or self.tokenizer.count(text) <= limit:
            return text
        return self.tokenizer.decode(self.tokenizer.encode(text)[:limit])

    async def _changed_vectors(
        self, texts: list[str], stored: list[str | None]
    ) -> tuple[list[int], np.ndarray]:
        """Indexes of the texts whose vector must be (re)computed, and those vectors."""
        changed = [i for i, (t, old) in enumerate(zip(texts, stored, strict=True)) if t != old]
        return changed, await self.embed([texts[i] for i in changed])

    async def _entity_round(self, doc_id: str, pending: dict[str, list[ExtractedEntity]]) -> set[str]:
        async with session(self.pool) as s:
            current = await s.graph.entities_for_merge(doc_id, list(pending))
        already = {n for n, state in current.items() if state.linked}
        todo = [n for n in pending if n not in already]
        merged: list[EntityRow] = []
        fragments: list[list[str]] = []
        for name in todo:
            row, frags = merge_entity(name, current[name].row, pending[name], self.settings)
            merged.append(row)
            fragments.append(frags)
        descriptions = await asyncio.gather(
            *(self.summarizer.describe("entity", r.name, f) for r, f in zip(merged, fragments, strict=True))
        )
        for row, description in zip(merged, descriptions, strict=True):
            row.description = description
        count_context_tokens(merged, self.tokenizer)
        if not merged:
            return already
        texts = [self._vector_text(entity_vector_text(r)) for r in merged]
        changed, vectors = await self._changed_vectors(
            texts, [current[r.name].vector_content for r in merged]
        )
        async with unit_of_work(self.pool) as uow:
            written = await uow.graph.upsert_entities_if_unchanged(merged)
            keep = [k for k, i in enumerate(changed) if merged[i].name in written]
            await uow.vectors.upsert_entities(
                [merged[changed[k]].name for k in keep], [texts[changed[k]] for k in keep], vectors[keep]
            )
            await uow.docs.link_entities(doc_id, sorted(written))
        return written | already

    async def _relation_round(
        self, doc_id: str, pending: dict[tuple[str, str], list[ExtractedRelation]]
    ) -> set[tuple[str, str]]:
        async with session(self.pool) as s:
            current = await s.graph.relations_for_merge(doc_id, list(pending))
        already = {p for p, state in current.items() if state.linked}
        todo = [p for p in pending if p not in already]
        merged: list[RelationRow] = []
        fragments: list[list[str]] = []
        endpoints: dict[str, EntityRow] = {}
        for pair in todo:
            state = current[pair]
            row, frags = merge_relation(pair, state.row, pending[pair], self.settings)
            merged.append(row)
            fragments.append(frags)
            for name in pair:
                if name not in state.existing_endpoints and name not in endpoints:
                    endpoints[name] = EntityRow(
                        name=name, source_ids=list(row.source_ids), file_paths=list(row.file_paths)
                    )
        descriptions = await asyncio.gather(
            *(
                self.summarizer.describe("relation", f"{r.src} - {r.tgt}", f)
                for r, f in zip(merged, fragments, strict=True)
            )
        )
        for row, description in zip(merged, descriptions, strict=True):
            row.description = description
            for name in row.pair:
                if name in endpoints and not endpoints[name].description:
                    endpoints[name].description = split_description(description)[0] if description else ""
        if not merged:
            return already
        new_entities = sorted(endpoints.values(), key=lambda e: e.name)
        count_context_tokens([*merged, *new_entities], self.tokenizer)
        texts = [self._vector_text(relation_vector_text(r)) for r in merged]
        texts += [self._vector_text(entity_vector_text(e)) for e in new_entities]
        stored = [current[r.pair].vector_content for r in merged] + [None] * len(new_entities)
        changed, vectors = await self._changed_vectors(texts, stored)
        n = len(merged)
        async with unit_of_work(self.pool) as uow:
            created = await uow.graph.ensure_entities(new_entities)
            written = await uow.graph.upsert_relations_if_unchanged(merged)
            rel = [k for k, i in enumerate(changed) if i < n and merged[i].pair in written]
            await uow.vectors.upsert_relations(
                [merged[changed[k]].pair for k in rel], [texts[changed[k]] for k in rel], vectors[rel]
            )
            ent = [k for k, i in enumerate(changed) if i >= n and new_entities[i - n].name in created]
            await uow.vectors.upsert_entities(
                [new_entities[changed[k] - n].name for k in ent],
                [texts[changed[k]] for k in ent],
                vectors[ent],
            )
            await uow.docs.link_relations(doc_id, sorted(written))
            await uow.docs.link_entities(doc_id, sorted(created))
        return written | already
