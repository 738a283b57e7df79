"""corpus_counts (migration 0016): the exact chunk and entity counts lexical ranking reads,
kept by triggers in the writing transaction, so answers never depend on planner statistics."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from bench.corpus import CorpusLLM, documents, questions, vocabulary
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.identifiers import search_path
from lightrag_pg.db.migrate import MigrationTarget, upgrade
from lightrag_pg.db.workspace import create_workspace, drop_workspace
from lightrag_pg.testing import hashed_embedding_func
from tests.test_lexical import alembic

DIM = 16
MODES = ("local", "global", "hybrid", "naive", "mix")
COUNTED = """
SELECT (SELECT coalesce(sum(chunks), 0) FROM corpus_counts) AS chunks,
       (SELECT coalesce(sum(entities), 0) FROM corpus_counts) AS entities,
       (SELECT count(*) FROM text_chunks) AS real_chunks,
       (SELECT count(*) FROM entities) AS real_entities,
       (SELECT count(*) FROM corpus_counts) AS rows
"""
JUNK = """
WITH doc AS (INSERT INTO full_docs (id, content) VALUES ($1, 'junk') RETURNING id)
INSERT INTO text_chunks (id, doc_id, chunk_order_index, tokens, content)
SELECT $1 || '-' || i, (SELECT id FROM doc), i, 12,
       'filler words about Paris Berlin Acme number ' || i || ' and the weather ' || (i % 7)
FROM generate_series(1, $2::int) i
"""
JUNK_ENTITIES = """
INSERT INTO entities (name, entity_type, description, source_ids, file_paths)
SELECT 'junk entity ' || i, 'concept', 'A junk entity near Paris and Berlin ' || i,
       ARRAY[$1 || '-1'], ARRAY['junk']
FROM generate_series(1, $2::int) i
"""


@pytest_asyncio.fixture
async def ws(dsn: str, workspace_name: str, conn: asyncpg.Connection) -> AsyncIterator[str]:
    """A tsvector workspace at head, the connection's search_path on it."""
    await create_workspace(conn, dsn, workspace_name, DIM, f"hashed-bow-{DIM}", lexical="tsvector")
    await conn.execute(f"SET search_path = {workspace_name}, public")
    yield workspace_name
    await conn.execute("RESET search_path")


async def counted(conn: asyncpg.Connection) -> dict[str, int]:
    return dict(await conn.fetchrow(COUNTED))


async def assert_exact(conn: asyncpg.Connection) -> dict[str, int]:
    found = await counted(conn)
    assert (found["chunks"], found["entities"]) == (found["real_chunks"], found["real_entities"]), found
    return found


async def test_the_counts_follow_every_kind_of_write(ws: str, conn: asyncpg.Connection) -> None:
    """Inserts, upserts, renames, deletes (cascades included) and TRUNCATE keep the sums
    equal to the rows, and each write folds the earlier deltas: the table stays one row."""
    assert await assert_exact(conn) == {
        "chunks": 0,
        "entities": 0,
        "real_chunks": 0,
        "real_entities": 0,
        "rows": 0,
    }
    await conn.execute(JUNK, "a", 50)
    await conn.execute(JUNK_ENTITIES, "a", 30)
    await conn.execute(JUNK, "b", 20)
    assert (await assert_exact(conn))["rows"] == 1
    await conn.execute(
        "INSERT INTO entities (name, entity_type, description) VALUES ('junk entity 1', 'x', 'y'), "
        "('fresh', 'x', 'y') ON CONFLICT (name) DO UPDATE SET description = excluded.description"
    )
    assert (await assert_exact(conn))["real_entities"] == 31
    await conn.execute("UPDATE entities SET name = 'renamed' WHERE name = 'fresh'")
    await conn.execute("UPDATE text_chunks SET content = content || ' more' WHERE doc_id = 'a'")
    await assert_exact(conn)
    await conn.execute("DELETE FROM full_docs WHERE id = 'a'")  # cascades to its chunks
    await conn.execute("DELETE FROM entities WHERE name LIKE 'junk entity 1%'")
    found = await assert_exact(conn)
    assert (found["real_chunks"], found["rows"]) == (20, 1)
    await conn.execute("TRUNCATE text_chunks CASCADE")
    assert (await assert_exact(conn))["entities"] > 0
    await conn.execute("TRUNCATE entities CASCADE")
    assert (await assert_exact(conn))["entities"] == 0
    async with conn.transaction(isolation="repeatable_read"):  # no fold there, still exact
        await conn.execute(JUNK, "c", 5)
    assert (await assert_exact(conn))["chunks"] == 5
    async with conn.transaction():
        await conn.execute(JUNK, "d", 5)
        assert (await assert_exact(conn))["chunks"] == 10
    with pytest.raises(asyncpg.DivisionByZeroError):
        async with conn.transaction():
            await conn.execute(JUNK, "e", 5)
            await conn.execute("SELECT 1/0")
    assert (await assert_exact(conn))["chunks"] == 10


async def test_concurrent_writers_never_wait_on_the_counts_and_lose_none(
    dsn: str, ws: str, conn: asyncpg.Connection
) -> None:
    """Eight transactions insert chunks and entities at the same time and stay open (a
    wait on another's counter row would hit the lock timeout); some roll back. Then 200
    random inserts and deletes from eight connections at once: the sums stay exact and
    the table a few rows long."""
    writers = [
        await asyncpg.connect(dsn, server_settings={"search_path": search_path(ws), "lock_timeout": "2s"})
        for _ in range(8)
    ]
    try:
        opened = [w.transaction() for w in writers]
        for i, (writer, tx) in enumerate(zip(writers, opened, strict=True)):
            await tx.start()
            await writer.execute(JUNK, f"w{i}", 10 + i)
            await writer.execute(JUNK_ENTITIES.replace("'junk entity '", f"'w{i} entity '"), f"w{i}", 3)
        for i, tx in enumerate(opened):
            await (tx.rollback() if i % 3 == 0 else tx.commit())
        await assert_exact(conn)

        rng = random.Random(3)

        async def churn(writer: asyncpg.Connection, k: int) -> None:
            for n in range(25):
                doc = f"c{k}-{n}"
                await writer.execute(JUNK, doc, rng.randint(1, 6))
                if rng.random() < 0.5:
                    await writer.execute("DELETE FROM full_docs WHERE id = $1", doc)

        await asyncio.gather(*(churn(w, k) for k, w in enumerate(writers)))
        found = await assert_exact(conn)
        assert found["rows"] <= len(writers) + 1, found
    finally:
        for writer in writers:
            await writer.close()


async def answers(rag: LightRAG, asked: list[str]) -> dict[str, Any]:
    """What aquery_data returns for every question and mode: entities, relations, chunks."""
    found: dict[str, Any] = {}
    for question in asked:
        for mode in MODES:
            data = (await rag.aquery_data(question, QueryParam(mode=mode)))["data"]
            found[f"{mode}: {question}"] = (
                [e["entity_name"] for e in data["entities"]],
                [(r["src_id"], r["tgt_id"]) for r in data["relationships"]],
                [c["chunk_id"] for c in data["chunks"]],
            )
    return found


async def statistics_moved(rag: LightRAG) -> None:
    """What a large document indexed then deleted leaves: 3,000 more chunks and 1,000 more
    entities in the statistics (analyzed while they were there), none in the tables."""
    async with rag.session() as s:
        await s.conn.execute(JUNK, "bulk", 3000)
        await s.conn.execute(JUNK_ENTITIES, "bulk", 1000)
        await s.conn.execute("ANALYZE text_chunks, entities")
        await s.conn.execute("DELETE FROM entities WHERE name LIKE 'junk entity %'")
        await s.conn.execute("DELETE FROM full_docs WHERE id = 'bulk'")


async def reltuples(rag: LightRAG) -> tuple[float, float]:
    async with rag.session() as s:
        row = await s.conn.fetchrow(
            "SELECT (SELECT reltuples FROM pg_class WHERE oid = 'text_chunks'::regclass) AS chunks, "
            "(SELECT reltuples FROM pg_class WHERE oid = 'entities'::regclass) AS entities"
        )
    return row["chunks"], row["entities"]


async def test_answers_are_the_same_whatever_the_statistics_say(dsn: str, workspace_name: str) -> None:
    """The same data gives the same entities, relations and chunks in every mode before
    and after a bulk insert and delete analyzed in between (the statistics then count
    3,000 chunks and 1,000 entities that are gone), and after VACUUM ANALYZE. (Read from
    the statistics, the counts changed 13 of these 30 answers.)"""
    vocab = vocabulary(size=60, seed=1)
    texts = documents(6, words=250, seed=1, vocab=vocab)
    asked = questions(8, texts, vocab, seed=1)
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=CorpusLLM(vocab),
        embedding_func=hashed_embedding_func(),
    )
    await rag.initialize()
    try:
        result = await rag.ainsert(texts)
        assert result.progress.docs_failed == 0
        before = await answers(rag, asked)
        assert all(chunks for _, _, chunks in before.values())
        await statistics_moved(rag)
        assert (await reltuples(rag))[0] > 3000
        assert await answers(rag, asked) == before
        async with rag.session() as s:
            await s.conn.execute("VACUUM ANALYZE text_chunks, entities, chunk_terms, corpus_counts")
        assert (await reltuples(rag))[0] < 100
        assert await answers(rag, asked) == before
    finally:
        await rag.finalize()


@pytest.mark.slow
async def test_an_upgrade_from_0015_counts_the_rows_and_the_downgrade_restores_it(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    """0016 back-fills the counts of the rows there are (once, also when run again) and
    adds its table, triggers and functions; the downgrade removes them and restores 0015's
    statistics-based ranking. A bm25 workspace gets none of it."""
    ws = workspace_name

    async def objects() -> set[str]:
        rows = await conn.fetch(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 "
            "UNION ALL SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE c.relnamespace = $1::regnamespace AND NOT t.tgisinternal "
            "UNION ALL SELECT p.proname FROM pg_proc p WHERE p.pronamespace = $1::regnamespace",
            ws,
        )
        return {r["name"] for r in rows}

    await upgrade(dsn, MigrationTarget(ws, DIM, lexical="tsvector"), "0015")
    await conn.execute(f"SET search_path = {ws}, public")
    try:
        await conn.execute(JUNK, "a", 40)
        await conn.execute(JUNK_ENTITIES, "a", 7)
        at_0015 = await objects()
        await upgrade(dsn, MigrationTarget(ws, DIM, lexical="tsvector"), "0016")
        assert await objects() - at_0015 == {
            "corpus_counts", "corpus_count", "entities_count", "entities_count_truncate",
            "entities_count_insert", "entities_count_delete", "lexical_entity_total",
        }  # fmt: skip
        assert (await assert_exact(conn))["chunks"] == 40
        await alembic(dsn, ws, "stamp", "0015")
        await alembic(dsn, ws, "upgrade", "0016")
        found = await assert_exact(conn)
        assert (found["chunks"], found["entities"], found["rows"]) == (40, 7, 1)
        assert await conn.fetchval("SELECT lexical_chunk_total()") == 40
        assert await conn.fetchval("SELECT lexical_entity_total()") == 7
        await alembic(dsn, ws, "downgrade", "0015")
        assert await objects() == at_0015
        source = await conn.fetchval("SELECT prosrc FROM pg_proc WHERE proname = 'lexical_chunk_total'")
        assert "reltuples" in source
    finally:
        await conn.execute("RESET search_path")
        await drop_workspace(conn, ws)
    await upgrade(dsn, MigrationTarget(ws, DIM, lexical="bm25"))
    try:
        assert await conn.fetchval("SELECT to_regclass($1)", f"{ws}.corpus_counts") is None
    finally:
        await drop_workspace(conn, ws)
