"""chunk_terms (migration 0012): the inverted table of chunk lexemes that lexical_chunks reads
on the tsvector backend, kept by triggers on text_chunks."""

from __future__ import annotations

import math
import random
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG
from lightrag_pg.db.migrate import MigrationTarget, migration_queries, migrations_dir, upgrade
from lightrag_pg.db.workspace import create_workspace, drop_workspace
from lightrag_pg.store.rows import ChunkRow, DocumentRow
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors
from tests.test_lexical import alembic

DIM = 16
WORDS = [
    "river", "stone", "ledger", "quantum", "harbour", "meadow", "lantern", "copper", "orchard",
    "valley", "network", "machine", "configure", "XK7Q", "pinning", "priority", "running", "runs",
]  # fmt: skip
STOP = ["the", "and", "of", "is", "a"]
SQL_0009 = migration_queries(str(migrations_dir() / "versions" / "0009_chunk_term_counts.py"))
PREVIOUS = SQL_0009["fts_chunks"].replace(
    "FUNCTION lexical_chunks(query text", "FUNCTION lexical_chunks_0009(query text"
)
DERIVED = """
SELECT t.lexeme, c.id AS chunk_id, cardinality(t.positions) AS tf, c.tokens
FROM text_chunks c CROSS JOIN LATERAL unnest(c.lexemes) t
"""


@pytest_asyncio.fixture
async def ws(dsn: str, workspace_name: str, conn: asyncpg.Connection) -> AsyncIterator[str]:
    """A tsvector workspace at head, the connection's search_path on it."""
    await create_workspace(conn, dsn, workspace_name, DIM, f"hashed-bow-{DIM}", lexical="tsvector")
    await conn.execute(f"SET search_path = {workspace_name}, public")
    yield workspace_name
    await conn.execute("RESET search_path")


def random_text(rng: random.Random) -> str:
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    words = rng.choices(WORDS, weights, k=rng.randint(1, 40)) + rng.choices(STOP, k=rng.randint(0, 5))
    rng.shuffle(words)
    return " ".join(words)


async def insert_chunks(
    conn: asyncpg.Connection, texts: list[str], rng: random.Random, doc: str = "doc-1"
) -> None:
    await conn.execute("INSERT INTO full_docs (id, content) VALUES ($1, 'x') ON CONFLICT DO NOTHING", doc)
    ids = [f"chunk-{doc}-{i:05d}" for i in range(len(texts))]
    tokens = [len(t.split()) + rng.randint(0, 20) for t in texts]
    await conn.execute(
        "INSERT INTO text_chunks (id, doc_id, chunk_order_index, tokens, content) "
        "SELECT u.id, $1, u.ord::int - 1, u.tokens, u.content "
        "FROM unnest($2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS u(id, tokens, content, ord)",
        doc, ids, tokens, texts,
    )  # fmt: skip


async def in_sync(conn: asyncpg.Connection) -> bool:
    """Whether chunk_terms holds exactly the rows derived from text_chunks' lexemes."""
    sql = f"SELECT NOT EXISTS (({DERIVED}) EXCEPT ALL (SELECT lexeme, chunk_id, tf, tokens FROM chunk_terms)) AND NOT EXISTS ((SELECT lexeme, chunk_id, tf, tokens FROM chunk_terms) EXCEPT ALL ({DERIVED}))"  # noqa: E501
    return bool(await conn.fetchval(sql))


async def ranking(conn: asyncpg.Connection, function: str, query: str, k: int) -> list[tuple[str, float]]:
    rows = await conn.fetch(f"SELECT id, score FROM {function}($1, $2)", query, k)
    return [(r["id"], r["score"]) for r in rows]


def assert_same_ranking(new: list[tuple[str, float]], old: list[tuple[str, float]]) -> None:
    """Equal up to rounding: the same scores in order, the same chunk at each score (chunks
    whose scores differ by rounding alone may swap places). 0016 sums each word's share
    rounded to 1e-12, hence the absolute tolerance."""
    assert len(new) == len(old)
    for (_, a), (_, b) in zip(new, old, strict=True):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-10)
    old_score = dict(old)
    for cid, score in new:
        if cid in old_score:
            assert math.isclose(score, old_score[cid], rel_tol=1e-12, abs_tol=1e-10)
        else:
            assert any(math.isclose(score, s, rel_tol=1e-12, abs_tol=1e-10) for _, s in old[-3:])


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_lexical_chunks_ranks_as_the_term_counts_of_0009(
    ws: str, conn: asyncpg.Connection, seed: int
) -> None:
    """On random corpora and queries, the inverted table gives the ranking 0009's function
    gives from the stored tsvectors: the same chunks, scores and order, for any k (0009
    read the chunk count from the statistics, exact once ANALYZE has read a table this
    small; 0016 keeps it exact)."""
    rng = random.Random(seed)
    await conn.execute(PREVIOUS)
    await insert_chunks(conn, [random_text(rng) for _ in range(rng.randint(20, 200))], rng)
    await conn.execute("ANALYZE text_chunks")
    assert await in_sync(conn)
    for _ in range(40):
        words = rng.choices(WORDS + STOP + ["absent", "XK7Q's"], k=rng.randint(1, 6))
        query = " ".join(words)
        for k in (1, 3, 10, 1000):
            new = await ranking(conn, "lexical_chunks", query, k)
            old = await ranking(conn, "lexical_chunks_0009", query, k)
            assert_same_ranking(new, old)
    assert await ranking(conn, "lexical_chunks", "the and absent", 10) == []


async def test_words_at_the_frequency_cap_are_left_out_as_before(ws: str, conn: asyncpg.Connection) -> None:
    """A word in 10,000 chunks or more counts only when the query has no rarer word."""
    rng = random.Random(7)
    await conn.execute(PREVIOUS)
    texts = ["meadow river" if i % 2 else "meadow" for i in range(10_001)] + ["meadow lantern lantern"]
    await insert_chunks(conn, texts, rng)
    await conn.execute("ANALYZE text_chunks")  # 0009's chunk count
    for query in ("meadow lantern", "meadow", "meadow river", "lantern river meadow"):
        for k in (2, 20):
            new = await ranking(conn, "lexical_chunks", query, k)
            assert new
            assert_same_ranking(new, await ranking(conn, "lexical_chunks_0009", query, k))
    found = await ranking(conn, "lexical_chunks", "meadow lantern", 5)
    assert [cid for cid, _ in found] == ["chunk-doc-1-10001"]


async def test_the_table_follows_inserts_updates_and_deletes(
    dsn: str, ws: str, conn: asyncpg.Connection
) -> None:
    """Upserts (new chunks, changed text, changed token counts), plain updates, document
    deletes (cascade), chunk deletes and TRUNCATE keep chunk_terms equal to the rows
    derived from text_chunks; an update that changes neither lexemes nor tokens leaves
    the chunk's rows untouched."""
    rag = LightRAG(dsn=dsn, workspace=ws, embedding_func=hashed_embedding_func(DIM))
    await rag.initialize()
    rng = random.Random(11)
    try:

        async def store(doc: str, texts: dict[str, str], tokens: int = 0) -> None:
            async with rag.unit_of_work() as uow:
                await uow.docs.insert([DocumentRow(doc, "x")])
                rows = [
                    ChunkRow(cid, doc, i, len(t.split()) + tokens, t, f"{cid}.txt")
                    for i, (cid, t) in enumerate(texts.items())
                ]
                await uow.chunks.upsert(rows, hashed_vectors(list(texts.values()), DIM))

        first = {f"chunk-a{i}": random_text(rng) for i in range(12)}
        second = {f"chunk-b{i}": random_text(rng) for i in range(7)}
        second["chunk-b7"] = "x" * 2000 + " é" * 500  # the longest word a tsvector keeps
        await store("doc-a", first)
        await store("doc-b", second)
        assert await in_sync(conn)
        assert await conn.fetchval("SELECT count(DISTINCT chunk_id) FROM chunk_terms") == 20
        assert await conn.fetchval("SELECT max(octet_length(lexeme)) FROM chunk_terms") == 2000
        changed = {**first, "chunk-a0": "copper copper copper lantern", "chunk-a1": "brand new words here"}
        await store("doc-a", changed)
        assert await in_sync(conn)
        assert (await ranking(conn, "lexical_chunks", "brand", 5))[0][0] == "chunk-a1"
        await store("doc-a", changed, tokens=5)
        assert await in_sync(conn)
        assert await conn.fetchval("SELECT min(tokens) FROM chunk_terms WHERE chunk_id = 'chunk-a1'") == 9
        versions = "SELECT xmin::text, ctid::text FROM chunk_terms ORDER BY lexeme, chunk_id"
        untouched = await conn.fetch(versions)
        await conn.execute("UPDATE text_chunks SET file_path = 'moved.txt'")
        assert await conn.fetch(versions) == untouched
        await conn.execute("UPDATE text_chunks SET content = content || ' orchard' WHERE id LIKE 'chunk-b%'")
        assert await in_sync(conn)
        await rag.adelete_by_doc_id("doc-b")
        assert await in_sync(conn)
        assert await conn.fetchval("SELECT count(*) FROM chunk_terms WHERE chunk_id LIKE 'chunk-b%'") == 0
        await conn.execute("DELETE FROM text_chunks WHERE id IN ('chunk-a2', 'chunk-a3')")
        assert await in_sync(conn)
        assert await conn.fetchval("SELECT count(DISTINCT chunk_id) FROM chunk_terms") == 10
        await conn.execute("TRUNCATE text_chunks CASCADE")
        assert await conn.fetchval("SELECT count(*) FROM chunk_terms") == 0
    finally:
        await rag.finalize()


@pytest.mark.slow
async def test_an_upgrade_from_0011_back_fills_and_the_downgrade_restores_0009(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    """0012 fills chunk_terms from the existing chunks in one statement, drops the GIN index
    on lexemes and ranks as before; the downgrade drops the table, its triggers and
    functions and restores 0009's index and function. A bm25 workspace gets none of it."""
    ws = workspace_name
    rng = random.Random(5)
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(10)]

    async def objects() -> set[str]:
        rows = await conn.fetch(
            "SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 "
            "UNION ALL SELECT tablename FROM pg_tables WHERE schemaname = $1 "
            "UNION ALL SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE c.relnamespace = $1::regnamespace AND NOT t.tgisinternal "
            "UNION ALL SELECT p.proname FROM pg_proc p WHERE p.pronamespace = $1::regnamespace",
            ws,
        )
        return {r["name"] for r in rows}

    async def rankings() -> list[list[tuple[str, float]]]:
        return [await ranking(conn, "lexical_chunks", q, 5) for q in queries]

    await upgrade(dsn, MigrationTarget(ws, DIM, lexical="tsvector"), "0011")
    await conn.execute(f"SET search_path = {ws}, public")
    try:
        await insert_chunks(conn, [random_text(rng) for _ in range(60)], rng)
        await conn.execute("ANALYZE text_chunks")  # the chunk count every ranking below reads
        before, at_0011 = await rankings(), await objects()
        assert "chunk_terms" not in at_0011 and "text_chunks_lexemes_fts" in at_0011
        await upgrade(dsn, MigrationTarget(ws, DIM, lexical="tsvector"), "0012")
        added = await objects() - at_0011
        assert added == {
            "chunk_terms", "chunk_terms_pkey", "chunk_terms_insert", "chunk_terms_update",
            "chunk_terms_delete", "chunk_terms_truncate", "text_chunks_terms_insert",
            "text_chunks_terms_update", "text_chunks_terms_delete", "text_chunks_terms_truncate",
        }  # fmt: skip
        assert at_0011 - await objects() == {"text_chunks_lexemes_fts"}
        assert await in_sync(conn)
        for new, old in zip(await rankings(), before, strict=True):
            assert_same_ranking(new, old)
        source = await conn.fetchval("SELECT prosrc FROM pg_proc WHERE proname = 'lexical_chunks'")
        assert "chunk_terms" in source and "lexemes" not in source
        await alembic(dsn, ws, "downgrade", "0011")
        assert await objects() == at_0011
        assert await rankings() == before
    finally:
        await conn.execute("RESET search_path")
        await drop_workspace(conn, ws)
    await upgrade(dsn, MigrationTarget(ws, DIM, lexical="bm25"))
    try:
        assert await conn.fetchval("SELECT to_regclass($1)", f"{ws}.chunk_terms") is None
    finally:
        await drop_workspace(conn, ws)
