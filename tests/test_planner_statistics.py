"""Planner statistics after a batch: an insert analyzes the retrieval tables it grew a lot
(so the next query is not planned on the figures of the workspace's former size), and
only those, and moves the full text indexes' pending lists into the indexes."""

from __future__ import annotations

import asyncio
import random

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.identifiers import search_path
from lightrag_pg.testing import KNOWN, StatementCounter, hashed_embedding_func, scripted_llm

RETRIEVAL_TABLES = (
    "entities",
    "relations",
    "entity_vectors",
    "relation_vectors",
    "text_chunks",
    "chunk_vectors",
    "chunk_terms",
)


def document(rng: random.Random, sentences: int) -> str:
    names = sorted(KNOWN)
    return " ".join(
        f"{rng.choice(names)} met {rng.choice(names)} near {rng.choice(names)} on day {rng.randint(1, 999)}."
        for _ in range(sentences)
    )


async def analyses(conn: asyncpg.Connection, workspace: str) -> dict[str, int]:
    rows = await conn.fetch(
        "SELECT relname, analyze_count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = ANY($2)",
        workspace,
        list(RETRIEVAL_TABLES),
    )
    return {r["relname"]: r["analyze_count"] for r in rows}


async def insert_rag(dsn: str, workspace: str) -> LightRAG:
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace,
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(),
        chunk_token_size=60,
        chunk_overlap_token_size=10,
    )
    await rag.initialize()
    return rag


async def test_a_first_insert_analyzes_the_retrieval_tables_and_empties_the_gin_pending_lists(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    rag = await insert_rag(dsn, workspace_name)
    try:
        assert await analyses(conn, workspace_name) == dict.fromkeys(RETRIEVAL_TABLES, 0)
        rng = random.Random(3)
        result = await rag.ainsert([document(rng, 12), document(rng, 12)])
        assert result.progress.docs_done == 2
        assert await analyses(conn, workspace_name) == dict.fromkeys(RETRIEVAL_TABLES, 1)
        tuples = await conn.fetch(
            "SELECT relname, reltuples FROM pg_class "
            "WHERE relnamespace = $1::regnamespace AND relname = ANY($2)",
            workspace_name,
            list(RETRIEVAL_TABLES),
        )
        assert all(r["reltuples"] > 0 for r in tuples), tuples
        # the full text indexes hold the batch in their trees, not in pending lists that every
        # lexical search would read entry by entry (a manual ANALYZE does not move them)
        pending = await conn.fetch(
            "SELECT i.indexrelid::regclass::text AS name, "
            "gin_clean_pending_list(i.indexrelid::regclass) AS pages "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE a.amname = 'gin' AND c.relnamespace = $1::regnamespace",
            workspace_name,
        )
        assert len(pending) == 1 and all(p["pages"] == 0 for p in pending), pending
    finally:
        await rag.finalize()


async def flushed_changes(dsn: str, workspace: str, statement: str) -> None:
    """Run ``statement`` in the workspace and wait until the statistics views count its changes."""
    writer = await asyncpg.connect(dsn, server_settings={"search_path": search_path(workspace)})
    try:
        before = await writer.fetchval(
            "SELECT sum(n_mod_since_analyze) FROM pg_stat_user_tables WHERE schemaname = $1", workspace
        )
        changed = int((await writer.execute(statement)).split()[-1])
        await writer.execute("SELECT pg_stat_force_next_flush()")
        for _ in range(100):
            now = await writer.fetchval(
                "SELECT sum(n_mod_since_analyze) FROM pg_stat_user_tables WHERE schemaname = $1", workspace
            )
            if now >= before + changed:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the statistics views never counted the changes")
    finally:
        await writer.close()


@pytest.mark.slow
async def test_only_tables_changed_by_more_than_a_tenth_are_analyzed_again(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    rag = await insert_rag(dsn, workspace_name)
    try:
        rng = random.Random(4)
        await rag.ainsert([document(rng, 20) for _ in range(4)])
        first = await analyses(conn, workspace_name)
        async with rag.session() as s:
            relations = await s.conn.fetchval("SELECT count(*) FROM relations")
        assert 2 * relations > 0.1 * relations + 50  # rewritten twice: more than the threshold

        for _ in range(2):
            await flushed_changes(dsn, workspace_name, "UPDATE relations SET weight = weight + 1")
        async with rag.session() as s:
            with StatementCounter() as counter:
                await s.statistics.analyze_grown()
        assert counter.total == 1
        second = await analyses(conn, workspace_name)
        assert second["relations"] == first["relations"] + 1
        assert {t: second[t] for t in RETRIEVAL_TABLES if t != "relations"} == {
            t: first[t] for t in RETRIEVAL_TABLES if t != "relations"
        }

        # a few changed rows stay below the threshold
        await flushed_changes(
            dsn, workspace_name, "UPDATE relations SET weight = weight + 1 WHERE ctid IN "
            "(SELECT ctid FROM relations LIMIT 5)",
        )  # fmt: skip
        async with rag.session() as s:
            await s.statistics.analyze_grown()
        assert await analyses(conn, workspace_name) == second
    finally:
        await rag.finalize()
