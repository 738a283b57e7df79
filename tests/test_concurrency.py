"""Concurrent inserts: two processes, shared documents, lock takeover, one pool for many inserts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.advisory import TRY_LOCK
from lightrag_pg.store.rows import DocumentRow

from .crash_support import (
    SHARED,
    Worker,
    assert_consistent,
    co_occurrences,
    doc_lock_key,
    drop_if_exists,
    ingest_control,
    snapshot,
    spec,
    statuses,
    wait_doc_locks_released,
)
from .fake_openai import FakeOpenAI

pytestmark = pytest.mark.slow


async def test_two_processes_inserting_overlapping_documents_merge_each_exactly_once(
    dsn: str,
    conn: asyncpg.Connection,
    workspace_name: str,
    llm_server: FakeOpenAI,
    tmp_path: Path,
) -> None:
    ws, control_ws = workspace_name, f"{workspace_name}_ctl"
    first = [SHARED[k] for k in "ABC"]
    second = [SHARED[k] for k in "BCD"]
    workers: list[Worker] = []
    control_task: asyncio.Future[None] | None = None
    try:
        # Neither process finds the workspace: they also race to create it.
        llm_server.delay = 0.05
        for name, texts in (("first", first), ("second", second)):
            workers.append(
                await Worker.start(tmp_path, name, spec(dsn, ws, llm_server, texts, server_embeddings=True))
            )
        # The control workspace is ingested meanwhile, in this process, without contention.
        control_task = asyncio.ensure_future(
            ingest_control(dsn, control_ws, llm_server, list(SHARED.values()))
        )
        try:
            codes = await asyncio.wait_for(asyncio.gather(*(w.proc.wait() for w in workers)), 60)
        except asyncio.TimeoutError:
            pytest.fail(
                "the two workers did not finish within 60 s (deadlock?)\n"
                + "\n".join(w.output() for w in workers)
            )
        await control_task
        assert codes == [0, 0], "\n".join(w.output() for w in workers)
        llm_server.delay = 0.0
        results = [w.result() for w in workers]

        doc_ids = await statuses(conn, ws)
        assert len(doc_ids) == 4 and set(doc_ids.values()) == {"processed"}
        # Each document was enqueued by one process and processed by one process.
        new = [set(r["new_ids"]) for r in results]
        assert new[0].isdisjoint(new[1]) and new[0] | new[1] == set(doc_ids)
        assert sum(r["docs_done"] for r in results) == 4, results
        assert all(r["docs_failed"] == 0 for r in results), results
        # ainsert returns only once every one of its documents is finished, even those
        # the other process was working on.
        for r in results:
            assert set(r["statuses"].values()) == {"processed"}, r
        await assert_consistent(conn, ws)

        for name in ("Alice", "Bob"):
            source_ids = await conn.fetchval(f"SELECT source_ids FROM {ws}.entities WHERE name = $1", name)
            chunks = await conn.fetch(
                f"SELECT id FROM {ws}.text_chunks WHERE content LIKE '%' || $1 || '%'", name
            )
            assert len(chunks) == 4
            assert sorted(source_ids) == sorted(r["id"] for r in chunks), name
        weight = await conn.fetchval(f"SELECT weight FROM {ws}.relations WHERE src = 'Alice' AND tgt = 'Bob'")
        assert weight == co_occurrences(SHARED.values(), "Alice", "Bob") == 3

        concurrent, control = await snapshot(conn, ws), await snapshot(conn, control_ws)
        for key in control:
            assert concurrent[key] == control[key], key
    finally:
        llm_server.delay = 0.0
        for w in workers:
            await w.kill()
        if control_task is not None:
            await asyncio.gather(control_task, return_exceptions=True)
        await drop_if_exists(conn, ws)
        await drop_if_exists(conn, control_ws)


async def test_processing_document_is_left_to_its_live_owner_and_taken_over_when_it_dies(
    dsn: str,
    make_rag: Callable[..., LightRAG],
    conn: asyncpg.Connection,
) -> None:
    rag = make_rag()
    await rag.initialize()
    ws = rag.workspace
    doc_id = "doc-crash-owner"
    owner = await asyncpg.connect(dsn)
    try:
        async with rag.unit_of_work() as uow:
            inserted = await uow.docs.insert([DocumentRow(doc_id, "Alice met Bob in Berlin.", "owner.txt")])
        assert inserted == {doc_id}
        await conn.execute(f"UPDATE {ws}.doc_status SET status = 'processing' WHERE id = $1", doc_id)
        # Another process is (apparently) still working on it: it holds the document lock.
        assert await owner.fetchval(TRY_LOCK, doc_lock_key(ws, doc_id))

        progress = await rag.aprocess_pending()
        assert (progress.docs_total, progress.docs_done, progress.docs_skipped) == (1, 0, 1)
        assert await statuses(conn, ws) == {doc_id: "processing"}

        owner.terminate()  # the owner dies without unlocking
        await wait_doc_locks_released(conn, ws, [doc_id])
        progress = await rag.aprocess_pending()
        assert (progress.docs_total, progress.docs_done, progress.docs_skipped) == (1, 1, 0)
        row = await conn.fetchrow(f"SELECT status, chunks_count, error_msg FROM {ws}.doc_status")
        assert tuple(row) == ("processed", 1, None)
        assert (
            await conn.fetchval(f"SELECT weight FROM {ws}.relations WHERE src = 'Alice' AND tgt = 'Bob'")
            == 1.0
        )
        await assert_consistent(conn, ws)
    finally:
        if not owner.is_closed():
            owner.terminate()
        await rag.finalize()
        await drop_if_exists(conn, ws)


async def test_insert_finishes_when_parallel_documents_fill_the_pool(
    make_rag: Callable[..., LightRAG], conn: asyncpg.Connection
) -> None:
    rag = make_rag(pool_max_size=2, max_parallel_insert=2)
    await rag.initialize()
    try:
        try:
            result = await asyncio.wait_for(rag.ainsert(["Alice met Bob.", "Carol met Bob."]), 5)
        except asyncio.TimeoutError:
            pytest.fail("ainsert of two documents did not finish within 5 s")
        assert result.progress.docs_done == 2
    finally:
        await rag.finalize()
        await drop_if_exists(conn, rag.workspace)


async def test_concurrent_inserts_on_one_instance_share_the_pool(
    make_rag: Callable[..., LightRAG], conn: asyncpg.Connection
) -> None:
    rag = make_rag()
    await rag.initialize()
    try:
        batches = [[f"Alice met Bob, batch {b} doc {d}." for d in range(4)] for b in range(6)]
        results = await asyncio.wait_for(asyncio.gather(*(rag.ainsert(b) for b in batches)), 60)
        assert sum(r.progress.docs_done for r in results) == 24
        statuses = await conn.fetch(f"SELECT DISTINCT status FROM {rag.workspace}.doc_status")
        assert [r[0] for r in statuses] == ["processed"]
        weight = await conn.fetchval(
            f"SELECT weight FROM {rag.workspace}.relations WHERE src = 'Alice' AND tgt = 'Bob'"
        )
        assert weight == 24
    finally:
        await rag.finalize()
        await drop_if_exists(conn, rag.workspace)
