"""Vector searches of a wide workspace order by the halfvec expression its HNSW indexes are on."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import numpy as np
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG
from lightrag_pg.db.dimensions import HalfvecCast
from lightrag_pg.db.sqlfile import bind, load_queries, load_vector_queries, positional, render
from lightrag_pg.store.retrieval import with_limits
from lightrag_pg.store.uow import Stores
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors, scripted_llm

WIDE = 3072
DOCS = [
    "Alice works at Acme in Paris. Bob visits Berlin often.",
    "Carol founded Globex. Quantum Lab hired Carol in Berlin.",
    "Paris is where Alice met Bob for the first time.",
]
SEARCH_FILES = ("vectors.sql", "chunks.sql", "retrieval.sql")


@pytest_asyncio.fixture
async def wide_rag(dsn: str, workspace_name: str) -> AsyncIterator[LightRAG]:
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(WIDE),
    )
    await rag.initialize()
    await rag.ainsert(DOCS)
    yield rag
    await rag.finalize()


def _query(text: str) -> np.ndarray:
    return hashed_vectors([text], WIDE)[0].astype(np.float32)


def _context(s: Stores, query: np.ndarray, **texts: str) -> tuple[str, str, tuple[object, ...]]:
    """The retrieval statement (its named parameters numbered) and its arguments."""
    sql, names = positional(with_limits(s.retrieval.sql["context"], 3, 3))
    values: dict[str, object] = {
        "local_query": query,
        "global_query": query,
        "threshold": 0.0,
        "top_k": 3,
        "max_entity_tokens": 4000,
        "max_relation_tokens": 4000,
        "chunk_query": query,
        "vector_top_k": 3,
        "related_chunks": 2,
        "chunk_limit": None,
        "lexical_chunks": None,
        "lexical_entities": None,
        "question": None,
        "walk_damping": None,
        "walk_chunk_weight": None,
        "bridge_keep": None,
        "bridge_keep_home": None,
        "bridge_lead": None,
        "bridge_heading": 0.0,
    }
    return sql, "chunk_vectors_embedding_hnsw", bind(names, {**values, **texts})


def _statements(s: Stores, query: np.ndarray) -> dict[str, tuple[str, str, tuple[object, ...]]]:
    """Each search statement: (its SQL, the index it must use, its arguments)."""
    return {
        "entities": (s.vectors.sql["search_entities"], "entity_vectors_embedding_hnsw", (query, 0.0, 3)),
        "relations": (s.vectors.sql["search_relations"], "relation_vectors_embedding_hnsw", (query, 0.0, 3)),
        "chunks": (s.chunks.sql["search_chunks"], "chunk_vectors_embedding_hnsw", (query, 0.0, 3)),
        "retrieval": _context(s, query),
        "retrieval with lexical search": _context(
            s, query, lexical_chunks="Alice Paris", lexical_entities="Alice", question="Alice Paris"
        ),
        "naive": (
            with_limits(s.retrieval.sql["naive"], 3),
            "chunk_vectors_embedding_hnsw",
            (query, 0.0, 3, "Alice Paris"),
        ),
    }


async def test_every_search_of_a_3072_dimension_workspace_scans_its_hnsw_index(wide_rag: LightRAG) -> None:
    query = _query("Alice Paris")
    async with wide_rag.session() as s, s.conn.transaction():
        await s.conn.execute("SET LOCAL enable_seqscan = off")
        for what, (sql, index, args) in _statements(s, query).items():
            plan = "\n".join(r[0] for r in await s.conn.fetch(f"EXPLAIN {sql}", *args))
            assert index in plan, (what, plan)
            for table in ("entity_vectors", "relation_vectors", "chunk_vectors"):
                assert f"Seq Scan on {table}" not in plan, (what, plan)
                if what.startswith("retrieval"):
                    assert f"Index Scan using {table}_embedding_hnsw" in plan, plan


async def test_wide_searches_find_what_an_exact_scan_finds(wide_rag: LightRAG) -> None:
    query, carol = _query("Alice Paris"), _query("Quantum Lab hired Carol")
    async with wide_rag.session() as s:
        entities = await s.vectors.search_entities(query, 0.0, 3)
        chunks = await s.chunks.search(carol, 0.0, 3)
        relations = await s.vectors.search_relations(query, 0.0, 3)
        exact_entities = await s.conn.fetch(
            "SELECT name, 1 - (embedding <=> $1::vector) AS similarity FROM entity_vectors "
            "WHERE embedding <=> $1::vector < 1 ORDER BY embedding <=> $1::vector, name LIMIT 3",
            query,
        )
        exact_chunks = await s.conn.fetch(
            "SELECT chunk_id, 1 - (embedding <=> $1::vector) AS similarity FROM chunk_vectors "
            "WHERE embedding <=> $1::vector < 1 ORDER BY embedding <=> $1::vector LIMIT 3",
            carol,
        )
        relation_count = await s.conn.fetchval("SELECT count(*) FROM relation_vectors")
    assert entities[0].name == exact_entities[0]["name"]
    assert {e.name for e in entities} & {"Alice", "Paris"}
    for row, exact in zip(entities, exact_entities, strict=True):
        assert row.similarity == pytest.approx(exact["similarity"], abs=1e-2)
    assert {c.id for c in chunks} == {r["chunk_id"] for r in exact_chunks}
    assert chunks[0].id == exact_chunks[0]["chunk_id"] and chunks[0].content == DOCS[1]
    assert chunks[0].similarity == pytest.approx(exact_chunks[0]["similarity"], abs=1e-2)
    assert len(relations) == min(3, relation_count)
    assert [r.similarity for r in relations] == sorted((r.similarity for r in relations), reverse=True)


@pytest.mark.parametrize("filename", SEARCH_FILES)
@pytest.mark.parametrize("dim", [384, 1024, 2000])
def test_narrow_workspaces_search_with_the_plain_vector_sql(filename: str, dim: int) -> None:
    raw = load_queries("lightrag_pg.store", filename)
    rendered = load_vector_queries("lightrag_pg.store", filename, HalfvecCast(dim))
    assert rendered == {name: sql.replace("{halfvec}", "") for name, sql in raw.items()}
    assert all("halfvec" not in sql for sql in rendered.values())


@pytest.mark.parametrize("filename", SEARCH_FILES)
def test_wide_workspaces_search_on_the_indexed_expression(filename: str) -> None:
    rendered = load_vector_queries("lightrag_pg.store", filename, HalfvecCast(WIDE))
    searches = [sql for sql in rendered.values() if "<=>" in sql]
    assert searches
    for sql in searches:
        assert "{halfvec}" not in sql
        assert sql.count("<=>") == len(re.findall(rf"embedding::halfvec\({WIDE}\) <=> [$:]", sql))
        assert sql.count("<=>") == sql.count(f"::vector::halfvec({WIDE})")


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3072", True])
def test_a_halfvec_cast_is_built_only_from_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        HalfvecCast(bad)  # type: ignore[arg-type]


def test_render_refuses_a_string_for_the_halfvec_placeholder() -> None:
    with pytest.raises(TypeError, match="halfvec casts"):
        render("SELECT embedding{halfvec}", halfvec="::halfvec(3072); DROP TABLE x")  # type: ignore[arg-type]
