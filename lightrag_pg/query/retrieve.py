"""Retrieval stages: each reads the database in one statement for its whole batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..store.rows import ChunkRow, EntityRow, RelationRow
from ..store.uow import Stores
from .chunk_pick import chunk_candidates, select_chunk_ids
from .param import QueryParam
from .ranking import endpoint_names, merge_chunks, rank_local_relations


@dataclass
class Retrieved:
    """What the searches found, before merging and truncation."""

    local_entities: list[EntityRow] = field(default_factory=list)
    local_relations: list[RelationRow] = field(default_factory=list)
    global_entities: list[EntityRow] = field(default_factory=list)
    global_relations: list[RelationRow] = field(default_factory=list)
    vector_chunks: list[ChunkRow] = field(default_factory=list)


async def local_search(
    s: Stores, ll_vector: np.ndarray, param: QueryParam, threshold: float
) -> tuple[list[EntityRow], list[RelationRow]]:
    """Entities near the low-level keywords, then all their edges ranked by (edge degree, weight)."""
    entities = await s.vectors.search_entities(ll_vector, threshold, param.top_k)
    if not entities:
        return [], []
    edges = await s.graph.edges_of([e.name for e in entities])
    return entities, rank_local_relations(edges)


async def global_search(
    s: Stores, hl_vector: np.ndarray, param: QueryParam, threshold: float
) -> tuple[list[EntityRow], list[RelationRow]]:
    """Relations near the high-level keywords, then their endpoint entities in order."""
    relations = await s.vectors.search_relations(hl_vector, threshold, param.top_k)
    if not relations:
        return [], []
    return await s.graph.get_entities(endpoint_names(relations)), relations


async def vector_search(
    s: Stores, query_vector: np.ndarray, param: QueryParam, threshold: float
) -> list[ChunkRow]:
    """Chunks nearest to the query."""
    return await s.chunks.search(query_vector, threshold, param.chunk_top_k)


async def graph_chunks(
    s: Stores,
    entities: Sequence[EntityRow],
    relations: Sequence[RelationRow],
    vector_chunks: Sequence[ChunkRow],
    query_vector: np.ndarray,
    param: QueryParam,
) -> list[ChunkRow]:
    """Chunks behind the kept entities and relations, picked by WEIGHT or VECTOR, merged
    round-robin with the vector-search chunks. One statement for all candidates."""
    entity_candidates = chunk_candidates([e.source_ids for e in entities])
    relation_candidates_all = chunk_candidates([r.source_ids for r in relations])
    wanted = {c for group in (*entity_candidates, *relation_candidates_all) for c in group}
    rows = await s.chunks.with_similarity(sorted(wanted), query_vector) if wanted else []
    by_id = {c.id: c for c in rows}
    similarities = {i: c.similarity for i, c in by_id.items() if c.similarity is not None}
    method = param.kg_chunk_pick_method or "VECTOR"
    related = param.related_chunk_number or 5

    def pick(candidates: list[list[str]]) -> list[ChunkRow]:
        present = [[i for i in group if i in by_id] for group in candidates]
        ids, _ = select_chunk_ids(
            present, method=method, max_related_chunks=related, similarities=similarities
        )
        return [by_id[i] for i in ids]

    entity_chunks = pick(entity_candidates)
    taken = {c.id for c in entity_chunks}
    relation_chunks = pick(
        chunk_candidates([r.source_ids for r in relations], exclude=taken, drop_empty=True)
    )
    return merge_chunks(vector_chunks, entity_chunks, relation_chunks)
