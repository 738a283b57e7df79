"""Vector search per workspace: top_k rows when enough pass the threshold, beyond ef_search."""

from __future__ import annotations

import numpy as np
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.pool import HNSW_EF_SEARCH
from lightrag_pg.store.rows import EntityRow, vectors


@pytest.mark.slow
async def test_search_returns_top_k_rows_past_ef_search(rag: LightRAG) -> None:
    # deliberate difference: upstream 1.5.7 scans its HNSW index with pgvector's default
    # ef_search (40) and no iterative scan, so it can return fewer rows than top_k and skip
    # nearer ones (bench/differential.py shows them as "index-miss")
    n, dim = 600, 32
    rng = np.random.default_rng(7)
    base = np.zeros(dim, dtype=np.float32)
    base[0] = 1.0
    vectors = base + 0.3 * rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = [f"E{i:04d}" for i in range(n)]
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(name=x) for x in names])
        await uow.vectors.upsert_entities(names, names, vectors)
    top_k = HNSW_EF_SEARCH + 150
    passing = int(((vectors @ base) >= 0.2).sum())
    assert passing > top_k
    async with rag.session() as s:
        hits = await s.vectors.search_entities(base, 0.2, top_k)
        assert len(hits) == top_k
        sims = [h.similarity for h in hits]
        assert sims == sorted(sims, reverse=True) and min(sims) >= 0.2
        strict = await s.vectors.search_entities(base, 0.95, top_k)
        assert all(h.similarity > 0.95 for h in strict)
        assert len(strict) == int(((vectors @ base) > 0.95).sum())


async def test_the_threshold_is_exclusive_as_upstream_s(rag: LightRAG) -> None:
    """A row exactly at the threshold is not a hit: LightRAG keeps similarity strictly above
    ``cosine_better_than_threshold`` (1.5.7's PostgreSQL searches: distance < 1 - threshold)."""
    dim = rag.info.embedding_dim
    axes = np.eye(3, dim, dtype=np.float32)
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(name=n) for n in ("Same", "Across")])
        await uow.vectors.upsert_entities(["Same", "Across"], ["Same", "Across"], axes[:2])
    async with rag.session() as s:
        assert [h.name for h in await s.vectors.search_entities(axes[0], 0.0, 10)] == ["Same"]
        assert await s.vectors.search_entities(axes[2], 0.0, 10) == []


@pytest.mark.slow
async def test_workspaces_do_not_see_each_other(rag: LightRAG, dsn: str) -> None:
    from lightrag_pg.testing import hashed_embedding_func as embedding_func

    other = LightRAG(dsn=dsn, workspace=rag.workspace + "_other", embedding_func=embedding_func())
    await other.initialize()
    try:
        async with rag.unit_of_work() as uow:
            await uow.graph.upsert_entities_if_unchanged([EntityRow(name="Mine")])
            await uow.vectors.upsert_entities(["Mine"], ["Mine"], np.eye(32, dtype=np.float32)[:1])
        async with other.session() as s:
            assert await s.vectors.search_entities(np.eye(32, dtype=np.float32)[0], -1.0, 10) == []
    finally:
        await other.drop_workspace()


async def test_vectors_travel_as_binary_vector_arrays(rag: LightRAG) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((3, 32)).astype(np.float32) / 3
    names = ["V0", "V1", "V2"]
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(name=x) for x in names])
        await uow.vectors.upsert_entities(names, names, matrix)
    async with rag.session() as s:
        echoed = await s.conn.fetchval("SELECT $1::vector[]", vectors(matrix))
        stored = await s.conn.fetch("SELECT embedding FROM entity_vectors ORDER BY name")
    assert np.array_equal(np.stack([v.to_numpy() for v in echoed]), matrix)
    assert np.array_equal(np.stack([r["embedding"].to_numpy() for r in stored]), matrix)
