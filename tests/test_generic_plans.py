"""Generic plans: the pool's sessions plan each prepared statement once
(``plan_cache_mode=force_generic_plan``), which saves planning the large retrieval
statement on every query, and the generic plans of the retrieval statements keep
their HNSW index scans (they do not assume the ``LIMIT $n`` rows make a sort of the
whole table cheaper)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.sqlfile import positional
from lightrag_pg.index.merge import with_context_tokens
from lightrag_pg.store.retrieval import with_limits
from lightrag_pg.store.rows import ChunkRow, DocumentRow, EntityRow, RelationRow

pytestmark = pytest.mark.slow


async def seed(rag: LightRAG, rows: int = 12_000) -> None:
    """A workspace large enough that a custom plan would use every HNSW index (``rows``
    entities, relations and chunks)."""
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(11)
    names = [f"entity {i}" for i in range(rows)]
    chunk_ids = [f"chunk-{i}" for i in range(rows)]
    entities = [
        EntityRow(n, "Thing", f"about {n}", source_ids=[chunk_ids[i % rows]]) for i, n in enumerate(names)
    ]
    ends = vec.integers(0, rows, size=(rows * 2, 2))
    pairs = sorted({(names[a], names[b]) if a < b else (names[b], names[a]) for a, b in ends if a != b})[
        :rows
    ]
    relations = [
        RelationRow(a, b, keywords="k", description=f"{a} and {b}", source_ids=[chunk_ids[0]])
        for a, b in pairs
    ]
    entities = with_context_tokens(entities, rag.tokenizer)
    relations = with_context_tokens(relations, rag.tokenizer)
    async with rag.unit_of_work() as uow:
        # loaded fast: without the graph mirror's triggers, the HNSW indexes built after the rows
        await uow.conn.execute("SET LOCAL session_replication_role = replica")
        hnsw = await uow.conn.fetch(
            "SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS ddl "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE a.amname = 'hnsw' AND c.relnamespace = current_schema()::regnamespace"
        )
        assert len(hnsw) == 3
        for index in hnsw:
            await uow.conn.execute(f"DROP INDEX {index['name']}")
        await uow.docs.insert([DocumentRow("doc-1", "x")])
        await uow.chunks.upsert(
            [ChunkRow(c, "doc-1", i, 5, f"text of {c}", "f.txt") for i, c in enumerate(chunk_ids)],
            vec.normal(size=(rows, dim)),
        )
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged(relations)
        await uow.vectors.upsert_entities(names, names, vec.normal(size=(rows, dim)))
        await uow.vectors.upsert_relations(pairs, [a for a, _ in pairs], vec.normal(size=(len(pairs), dim)))
        for index in hnsw:
            await uow.conn.execute(index["ddl"])
    async with rag.session() as s:
        await s.statistics.analyze_grown()


SEARCHES = {
    "context": {
        "local": "entity_vectors_embedding_hnsw",
        "global": "relation_vectors_embedding_hnsw",
        "vector": "chunk_vectors_embedding_hnsw",
    },
    "naive": {"vector": "chunk_vectors_embedding_hnsw"},
}
"""Each statement's vector searches: the nearest rows (``{side}_nearest``) and, should the
threshold leave fewer than the limit, the search with the threshold inside (``{side}_hits``)."""


def first_scan(plan: str, cte: str) -> str:
    """The first scan node of a CTE in an EXPLAIN text."""
    below = plan.split(f"CTE {cte}\n", 1)[1]
    match = re.search(r"(Index Scan using \w+|Index Only Scan using \w+|Seq Scan on \w+)", below)
    assert match, plan
    return match.group(1)


async def generic_plan(rag: LightRAG, statement: str) -> str:
    """The EXPLAIN text of ``statement``'s generic plan on a pooled session."""
    async with rag.session() as s:
        assert await s.conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
        sql, _ = positional(with_limits(s.retrieval.sql[statement], 40, 20))
        await s.conn.execute(f"PREPARE generic_check AS {sql}")
        try:
            params = await s.conn.fetchval(
                "SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = 'generic_check'"
            )
            nulls = ", ".join(["NULL"] * params)
            plan = "\n".join(r[0] for r in await s.conn.fetch(f"EXPLAIN EXECUTE generic_check({nulls})"))
        finally:
            await s.conn.execute("DEALLOCATE generic_check")
    return plan


@pytest.mark.parametrize("statement", ["context", "naive"])
async def test_generic_plans_keep_the_hnsw_index_scans(rag: LightRAG, statement: str) -> None:
    # 12k rows per table: a custom plan takes each HNSW scan; with LIMIT $n a generic one did not
    await seed(rag)
    plan = await generic_plan(rag, statement)
    for side, index in SEARCHES[statement].items():
        for cte in (f"{side}_nearest", f"{side}_hits"):
            assert first_scan(plan, cte) == f"Index Scan using {index}", plan


async def test_the_cosine_threshold_does_not_cost_a_mid_size_table_its_hnsw_scan(rag: LightRAG) -> None:
    # 6k rows, 40 nearest entities and relations: with the threshold inside the search, the
    # planner guessed a third of the rows pass and scanned and sorted the whole table
    # instead (20 or 40 nearest of 6k chunks are about even for it, by either form)
    await seed(rag, 6_000)
    plan = await generic_plan(rag, "context")
    for side in ("local", "global"):
        assert first_scan(plan, f"{side}_nearest") == f"Index Scan using {SEARCHES['context'][side]}", plan


async def test_queries_run_on_generic_plans(rag: LightRAG) -> None:
    await seed(rag)
    for mode in ("mix", "naive", "mix", "naive"):
        await rag.aquery_data("entity 7 and entity 9", QueryParam(mode=mode, top_k=5))  # type: ignore[arg-type]
    async with rag.session() as s:
        plans = await s.conn.fetch(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%FROM chunk_vectors%'"
        )
    assert plans, "the retrieval statements were not prepared on this connection"
    assert all(p["custom_plans"] == 0 and p["generic_plans"] >= 1 for p in plans), plans


async def test_the_retrieval_statements_are_prepared_once_however_long_their_comments(rag: LightRAG) -> None:
    # the commented context statement is longer than asyncpg's default cacheable size
    # (15 KiB): uncached, it was parsed and planned again on every query
    async with rag.session() as s:
        assert len(s.retrieval.sql["context"]) > 15 * 1024
    for _ in range(3):
        await rag.aquery_data("entity 7 and entity 9", QueryParam(mode="mix", top_k=5))
    async with rag.session() as s:
        runs = await s.conn.fetchval(
            "SELECT max(generic_plans + custom_plans) FROM pg_prepared_statements "
            "WHERE statement LIKE '%local_nearest%'"
        )
    assert runs == 3
