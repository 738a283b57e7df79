"""Transactional merges of a document's entities and relations into the graph.

Each round reads the stored rows without locks, computes the merged rows
(LLM summaries and embeddings included) with no transaction open, then
writes them in one transaction that only succeeds for rows nobody changed
in between (a version check under the row lock). Rows that changed are
merged again. A document's contribution to a row is recorded in the same
transaction (``doc_entities``/``doc_relations``), so re-running a document
after a crash never merges it twice.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from ..config import Settings
from ..errors import ConcurrentUpdate
from ..llm.embedding import EmbeddingFunc
from ..store.records import EntityRow, RelationRow, canonical_pair
from ..store.uow import session, unit_of_work
from ..types import ExtractedEntity, ExtractedRelation
from .merge import entity_vector_text, merge_entity, merge_relation, relation_vector_text
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

    async def _entity_round(self, doc_id: str, pending: dict[str, list[ExtractedEntity]]) -> set[str]:
        async with session(self.pool) as s:
            current = await s.graph.entities_for_merge(doc_id, list(pending))
        already = {n for n, (_, linked) in current.items() if linked}
        todo = [n for n in pending if n not in already]
        merged: list[EntityRow] = []
        fragments: list[list[str]] = []
        for name in todo:
            row, frags = merge_entity(name, current[name][0], pending[name], self.settings)
            merged.append(row)
            fragments.append(frags)
        descriptions = await asyncio.gather(
            *(self.summarizer.describe("entity", r.name, f) for r, f in zip(merged, fragments, strict=True))
        )
        for row, description in zip(merged, descriptions, strict=True):
            row.description = description
        vectors = await self.embed([entity_vector_text(r) for r in merged])
        if not merged:
            return already
        async with unit_of_work(self.pool) as uow:
            written = await uow.graph.upsert_entities_if_unchanged(merged)
            keep = [i for i, r in enumerate(merged) if r.name in written]
            await uow.vectors.upsert_entities(
                [merged[i].name for i in keep],
                [entity_vector_text(merged[i]) for i in keep],
                vectors[keep],
            )
            await uow.docs.link_entities(doc_id, sorted(written))
        return written | already

    async def _relation_round(
        self, doc_id: str, pending: dict[tuple[str, str], list[ExtractedRelation]]
    ) -> set[tuple[str, str]]:
        async with session(self.pool) as s:
            current = await s.graph.relations_for_merge(doc_id, list(pending))
        already = {p for p, (_, linked, _) in current.items() if linked}
        todo = [p for p in pending if p not in already]
        merged: list[RelationRow] = []
        fragments: list[list[str]] = []
        endpoints: dict[str, EntityRow] = {}
        for pair in todo:
            stored, _, existing = current[pair]
            row, frags = merge_relation(pair, stored, pending[pair], self.settings)
            merged.append(row)
            fragments.append(frags)
            for name in pair:
                if name not in existing and name not in endpoints:
                    endpoints[name] = EntityRow(
                        name=name,
                        description="",
                        source_ids=list(row.source_ids),
                        file_paths=list(row.file_paths),
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
        new_entities = sorted(endpoints.values(), key=lambda e: e.name)
        vectors = await self.embed(
            [relation_vector_text(r) for r in merged] + [entity_vector_text(e) for e in new_entities]
        )
        if not merged:
            return already
        rel_vectors, ent_vectors = vectors[: len(merged)], vectors[len(merged) :]
        async with unit_of_work(self.pool) as uow:
            created = await uow.graph.ensure_entities(new_entities)
            written = await uow.graph.upsert_relations_if_unchanged(merged)
            keep = [i for i, r in enumerate(merged) if r.pair in written]
            await uow.vectors.upsert_relations(
                [merged[i].pair for i in keep],
                [relation_vector_text(merged[i]) for i in keep],
                rel_vectors[keep],
            )
            fresh = [i for i, e in enumerate(new_entities) if e.name in created]
            await uow.vectors.upsert_entities(
                [new_entities[i].name for i in fresh],
                [entity_vector_text(new_entities[i]) for i in fresh],
                ent_vectors[fresh],
            )
            await uow.docs.link_relations(doc_id, sorted(written))
            await uow.docs.link_entities(doc_id, sorted(created))
        return written | already
