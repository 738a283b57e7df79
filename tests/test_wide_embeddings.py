"""Embeddings over 2,000 dimensions: vector columns indexed as halfvec up to 4,000; wider refused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import numpy as np
import pytest
import pytest_asyncio
from pgvector import HalfVector

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.workspace import workspace_exists
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors, scripted_llm

from .migration_drift import drift_of

WIDE = 3072
VECTOR_TABLES = ("entity_vectors", "relation_vectors", "chunk_vectors")
DOCS = [
    "Alice works at Acme in Paris. Bob visits Berlin often.",
    "Carol founded Globex. Quantum Lab hired Carol in Berlin.",
    "Paris is where Alice met Bob for the first time.",
]


@pytest_asyncio.fixture
async def wide_rag(dsn: str, workspace_name: str) -> AsyncIterator[LightRAG]:
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(WIDE),
    )
    await rag.initialize()
    yield rag
    await rag.finalize()


@pytest.mark.slow
async def test_wide_vectors_stay_vector_columns_with_halfvec_hnsw_indexes(
    wide_rag: LightRAG, conn: asyncpg.Connection
) -> None:
    ws = wide_rag.workspace
    types = await conn.fetch(
        "SELECT c.relname, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = $1 AND a.attname = 'embedding' AND c.relkind = 'r'",
        ws,
    )
    assert {r["relname"]: r["type"] for r in types} == {t: f"vector({WIDE})" for t in VECTOR_TABLES}
    indexes = await conn.fetch(
        "SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%hnsw'", ws
    )
    assert {r["tablename"] for r in indexes} == set(VECTOR_TABLES)
    for r in indexes:
        assert "USING hnsw" in r["indexdef"]
        assert f"halfvec({WIDE})" in r["indexdef"] and "halfvec_cosine_ops" in r["indexdef"]


async def test_a_3072_dimension_workspace_indexes_and_answers(wide_rag: LightRAG) -> None:
    result = await wide_rag.ainsert(DOCS)
    assert result.progress.docs_done == 3 and result.progress.docs_failed == 0
    local = await wide_rag.aquery_data("Where does Alice work?", QueryParam(mode="local"))
    names = [e["entity_name"] for e in local["data"]["entities"]]
    assert "Alice" in names
    naive = await wide_rag.aquery_data("Quantum Lab hired Carol", QueryParam(mode="naive", chunk_top_k=1))
    assert [c["content"] for c in naive["data"]["chunks"]] == [DOCS[1]]


async def test_a_search_on_the_halfvec_expression_uses_the_index(
    wide_rag: LightRAG, conn: asyncpg.Connection
) -> None:
    await wide_rag.ainsert(DOCS)
    ws = wide_rag.workspace
    query = HalfVector(hashed_vectors(["Alice Paris"], WIDE)[0].astype(np.float16))
    sql = (
        f"SELECT name FROM {ws}.entity_vectors "
        f"ORDER BY embedding::halfvec({WIDE}) <=> $1::halfvec({WIDE}) LIMIT 3"
    )
    async with conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN {sql}", query.to_text()))
        nearest = await conn.fetch(sql, query.to_text())
    assert "entity_vectors_embedding_hnsw" in plan, plan
    assert {r["name"] for r in nearest} & {"Alice", "Paris"}


@pytest.mark.parametrize("dim", [4001, 16000])
async def test_more_than_4000_dimensions_are_refused_at_creation(
    dsn: str, workspace_name: str, conn: asyncpg.Connection, dim: int
) -> None:
    rag = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=hashed_embedding_func(dim))
    with pytest.raises(ConfigurationError, match="at most 4000 dimensions"):
        await rag.initialize()
    assert not await workspace_exists(conn, workspace_name)


async def test_4000_dimensions_is_the_widest_workspace(dsn: str, workspace_name: str) -> None:
    rag = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=hashed_embedding_func(4000))
    await rag.initialize()
    try:
        assert rag.info is not None and rag.info.embedding_dim == 4000
    finally:
        await rag.drop_workspace()


async def test_wide_metadata_and_migrations_do_not_drift(wide_rag: LightRAG) -> None:
    assert await drift_of(wide_rag.dsn, wide_rag.workspace, WIDE) == []
