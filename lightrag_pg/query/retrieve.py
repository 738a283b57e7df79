"""Retrieval: one statement for a graph query, on one connection.

:meth:`~lightrag_pg.store.retrieval.RetrievalStore.context` searches both sides
of the graph, merges, ranks and cuts the entities and relations to their token
budgets, then runs the chunk vector search and the VECTOR pick of the kept
rows' chunks and merges them, so only the rows that can be used leave the
database. The WEIGHT method (asked for, or the VECTOR pick finding no chunk
with a vector) takes the Python pick of :mod:`.chunk_pick` over every candidate
chunk: up to two statements more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..store.retrieval import Bridge, Walk
from ..store.rows import ChunkRow, EntityRow, RelationRow
from ..store.uow import Stores
from .chunk_pick import chunk_candidates, select_chunk_ids
from .keyword_plan import KeywordPlan
from .param import QueryParam
from .ranking import merge_chunks

WALK = Walk()
"""The personalized PageRank of ``QueryParam.pagerank``."""
BRIDGE = Bridge()
"""The second hop of ``QueryParam.bridge``."""


@dataclass
class Retrieved:
    """What one query keeps: entities and relations after the budget cut, the merged
    chunks (cut to ``chunk_top_k`` unless they are to be reranked), and the counts
    before the cuts."""

    entities: list[EntityRow] = field(default_factory=list)
    relations: list[RelationRow] = field(default_factory=list)
    chunks: list[ChunkRow] = field(default_factory=list)
    found_entities: int = 0
    found_relations: int = 0
    merged_chunks: int = 0


async def retrieve_all(
    s: Stores,
    plan: KeywordPlan,
    vectors: np.ndarray,
    param: QueryParam,
    threshold: float,
    *,
    rerank: bool = False,
    query: str | None = None,
) -> Retrieved:
    """Run the searches of ``plan`` (``vectors``: low-level, high-level and query
    embeddings) on one connection: one statement (more for the WEIGHT chunk pick).

    With ``param.lexical``, ``query`` (the first words of the text whose embedding is
    ``vectors[2]``, :func:`~.bounds.leading_words`) is also searched lexically for chunks
    and for the entities it names, and the low-level keywords for entities; the matches
    are fused with the vector results."""
    lexical = query if param.lexical else None
    if param.mode == "naive":
        chunks = await s.retrieval.naive(vectors[2], threshold, param.chunk_top_k, lexical)
        return Retrieved(chunks=chunks, merged_chunks=len(chunks))
    vector_top_k = param.chunk_top_k if plan.use_vector else 0
    bridged = param.uses_bridge() and vector_top_k > 0
    by_weight = param.kg_chunk_pick_method == "WEIGHT" and not (param.pagerank or bridged)
    got = await s.retrieval.context(
        vectors[0] if plan.use_local else None,
        vectors[1] if plan.use_global else None,
        vectors[2],
        threshold=threshold,
        top_k=param.top_k,
        max_entity_tokens=param.max_entity_tokens,
        max_relation_tokens=param.max_relation_tokens,
        vector_top_k=0 if by_weight else vector_top_k,
        related_chunks=param.related_chunk_number or 5,
        chunk_limit=None if rerank else param.chunk_top_k,
        lexical_chunks=lexical,
        lexical_entities=plan.ll_query if lexical and plan.ll_keywords else None,
        question=lexical,
        walk=WALK if param.pagerank and plan.use_local else None,
        bridge=BRIDGE if bridged else None,
    )
    found = Retrieved(got.entities, got.relations, [], got.found_entities, got.found_relations)
    if not (by_weight or got.needs_weight):
        found.chunks, found.merged_chunks = got.chunks, got.merged_chunks
        return found
    vector_chunks = (
        await s.retrieval.naive(vectors[2], threshold, vector_top_k, lexical) if vector_top_k else []
    )
    merged = await graph_chunks(s, found.entities, found.relations, vector_chunks, vectors[2], param)
    found.chunks = merged if rerank else merged[: param.chunk_top_k]
    found.merged_chunks = len(merged)
    return found


async def graph_chunks(
    s: Stores,
    entities: Sequence[EntityRow],
    relations: Sequence[RelationRow],
    vector_chunks: Sequence[ChunkRow],
    query_vector: np.ndarray,
    param: QueryParam,
) -> list[ChunkRow]:
    """Chunks behind the kept entities and relations, picked in Python by WEIGHT or
    VECTOR (with WEIGHT as the fallback), merged round-robin with the vector-search
    chunks. One statement for all candidates."""
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
