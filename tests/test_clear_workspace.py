"""Emptying a workspace (``DELETE /documents``' library call): every table and the AGE graph
end empty in one transaction, and the workspace then indexes as a fresh one does."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from lightrag_pg import DocumentBusy, LightRAG
from lightrag_pg.db.advisory import TRY_LOCK, UNLOCK, lock_key
from lightrag_pg.errors import ReembedConflict

from .test_deletion import DOCS, NO_SUMMARY, CountingLLM, insert, snapshot, workspaces  # noqa: F401 (fixture)

SOME = ["d0", "d1", "d2"]


async def cache_rows(conn: asyncpg.Connection, ws: str) -> int:
    return int(await conn.fetchval(f'SELECT count(*) FROM "{ws}".llm_cache'))


@pytest.mark.slow
async def test_clearing_leaves_no_row_and_the_workspace_indexes_as_a_fresh_one(
    workspaces: Any,  # noqa: F811
    dsn: str,
    conn: asyncpg.Connection,
) -> None:
    rag: LightRAG = await workspaces(**NO_SUMMARY)
    control: LightRAG = await workspaces(**NO_SUMMARY)
    await insert(rag, list(DOCS))
    assert await cache_rows(conn, rag.workspace) > 0

    result = await rag.aclear_workspace()

    assert result.documents == len(DOCS) and result.cache_cleared
    emptied = await snapshot(dsn, rag.workspace)
    assert {name: rows for name, rows in emptied.items() if rows} == {}
    assert await cache_rows(conn, rag.workspace) == 0
    assert await conn.fetchval(f'SELECT count(*) FROM "{rag.workspace}".chunk_terms') == 0
    assert set((await rag.aget_status_counts()).values()) == {0}
    assert (await rag.aget_knowledge_graph("*")).to_dict()["nodes"] == []

    await insert(rag, SOME)
    await insert(control, SOME)
    assert await snapshot(dsn, rag.workspace) == await snapshot(dsn, control.workspace)
    degrees = 'SELECT name, degree FROM "{}".entities ORDER BY name'
    fresh = await conn.fetch(degrees.format(control.workspace))
    assert await conn.fetch(degrees.format(rag.workspace)) == fresh


async def test_keep_cache_keeps_the_extraction_answers(
    workspaces: Any,  # noqa: F811
    conn: asyncpg.Connection,
) -> None:
    llm = CountingLLM()
    rag: LightRAG = await workspaces(llm=llm, **NO_SUMMARY)
    await insert(rag, SOME)
    cached = await cache_rows(conn, rag.workspace)

    result = await rag.aclear_workspace(keep_cache=True)

    assert result.documents == len(SOME) and not result.cache_cleared
    assert await cache_rows(conn, rag.workspace) == cached
    llm.calls.clear()
    await insert(rag, SOME)
    assert llm.calls["extract"] == 0, llm.calls


async def test_a_document_another_session_indexes_refuses_the_clear(
    workspaces: Any,  # noqa: F811
    dsn: str,
    conn: asyncpg.Connection,
) -> None:
    rag: LightRAG = await workspaces(**NO_SUMMARY)
    await insert(rag, SOME)
    await conn.execute(f"UPDATE \"{rag.workspace}\".doc_status SET status = 'processing' WHERE id = 'd1'")
    before = await snapshot(dsn, rag.workspace)
    worker = await asyncpg.connect(dsn)
    key = lock_key("doc", rag.workspace, "d1")
    try:
        assert await worker.fetchval(TRY_LOCK, key)
        with pytest.raises(DocumentBusy, match="1 document"):
            await rag.aclear_workspace()
        assert await snapshot(dsn, rag.workspace) == before
        await worker.fetchval(UNLOCK, key)
        assert (await rag.aclear_workspace()).documents == len(SOME)
    finally:
        await worker.close()


async def test_a_running_reembed_refuses_the_clear(workspaces: Any, dsn: str) -> None:  # noqa: F811
    rag: LightRAG = await workspaces(**NO_SUMMARY)
    await insert(rag, SOME)
    before = await snapshot(dsn, rag.workspace)
    worker = await asyncpg.connect(dsn)
    try:
        assert await worker.fetchval(TRY_LOCK, lock_key("reembed", rag.workspace))
        with pytest.raises(ReembedConflict):
            await rag.aclear_workspace()
        assert await snapshot(dsn, rag.workspace) == before
    finally:
        await worker.close()
