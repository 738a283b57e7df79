"""A process killed with SIGKILL mid-insert leaves a consistent database; the next run finishes it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.index.writer import BATCH
from lightrag_pg.testing import responder

from .crash_support import (
    CRASH_DOCS,
    CRASH_IDS,
    CRASH_PATHS,
    Worker,
    assert_consistent,
    co_occurrences,
    crowd_pairs,
    crowd_responder,
    drop_if_exists,
    ingest_control,
    snapshot,
    spec,
    statuses,
    wait_doc_locks_released,
    wait_until,
)
from .fake_openai import FakeOpenAI
from .insert_worker import server_embedding

pytestmark = pytest.mark.slow


async def test_sigkill_mid_insert_leaves_a_consistent_graph_and_a_rerun_adds_nothing_twice(
    dsn: str,
    conn: asyncpg.Connection,
    make_rag: Callable[..., LightRAG],
    llm_server: FakeOpenAI,
    tmp_path: Path,
) -> None:
    # Embeddings come from the slow server too, so every merge round spends
    # time between reading rows and committing them.
    rag = make_rag(embedding_func=server_embedding(llm_server.base_url))
    ws = rag.workspace
    control_ws = f"{ws}_ctl"
    worker: Worker | None = None
    inserted = {"ids": CRASH_IDS, "file_paths": CRASH_PATHS}
    try:
        llm_server.responder = crowd_responder
        llm_server.delay = 0.1
        worker = await Worker.start(
            tmp_path, "crash", spec(dsn, ws, llm_server, CRASH_DOCS, server_embeddings=True, **inserted)
        )
        await rag.initialize()  # while the worker starts; creating the workspace twice is safe

        async def mid_merge() -> bool:
            # The crowd document has committed some of its relations, not all.
            row = await conn.fetchrow(
                f"SELECT count(*) FILTER (WHERE status = 'processed') AS done,"
                f" bool_or(id = 'crash-2' AND status <> 'processed' AND EXISTS"
                f"  (SELECT 1 FROM {ws}.doc_relations l WHERE l.doc_id = s.id)) AS partial"
                f" FROM {ws}.doc_status s"
            )
            return row["done"] >= 1 and bool(row["partial"])

        await wait_until(mid_merge, "a processed and a half-merged document", timeout=30, worker=worker)
        worker.proc.kill()
        assert await asyncio.wait_for(worker.proc.wait(), 10) == -signal.SIGKILL
        llm_server.delay = 0.0

        at_kill = await statuses(conn, ws)
        assert sorted(at_kill) == CRASH_IDS
        unfinished = sorted(i for i, s in at_kill.items() if s != "processed")
        assert "crash-2" in unfinished and len(unfinished) < len(CRASH_DOCS), at_kill
        # Between two of its relation transactions (normally the two batches; a batch
        # can also take a second round when another document changed one of its rows).
        half = await conn.fetchval(f"SELECT count(*) FROM {ws}.doc_relations WHERE doc_id = 'crash-2'")
        assert 0 < half < len(crowd_pairs()), "the kill was meant to land in the middle of a merge"
        await wait_doc_locks_released(conn, ws, at_kill)
        await assert_consistent(conn, ws)

        result = await rag.ainsert(CRASH_DOCS, **inserted)
        assert result.new_ids == [] and sorted(result.skipped_ids) == CRASH_IDS
        p = result.progress
        assert (p.docs_total, p.docs_done, p.docs_failed, p.docs_skipped) == (len(unfinished),) * 2 + (0, 0)
        assert set((await statuses(conn, ws)).values()) == {"processed"}
        await assert_consistent(conn, ws)

        await ingest_control(dsn, control_ws, llm_server, CRASH_DOCS, **inserted)
        recovered, control = await snapshot(conn, ws), await snapshot(conn, control_ws)
        for key in control:
            assert recovered[key] == control[key], key
        weights = dict(
            ((r["src"], r["tgt"]), r["weight"])
            for r in await conn.fetch(f"SELECT src, tgt, weight FROM {ws}.relations")
        )
        assert weights[("Alice", "Bob")] == co_occurrences(CRASH_DOCS, "Alice", "Bob") == 3
        assert weights[("Alice", "M01")] == weights[("M01", "M21")] == 1.0
        assert set(weights) >= crowd_pairs() and len(crowd_pairs()) > BATCH
    finally:
        llm_server.responder = responder
        llm_server.delay = 0.0
        if worker is not None:
            await worker.kill()
        await rag.finalize()
        await drop_if_exists(conn, ws)
        await drop_if_exists(conn, control_ws)


async def test_document_left_processing_by_a_killed_insert_is_finished_by_aprocess_pending(
    dsn: str,
    conn: asyncpg.Connection,
    make_rag: Callable[..., LightRAG],
    llm_server: FakeOpenAI,
    tmp_path: Path,
) -> None:
    rag = make_rag()
    await rag.initialize()
    ws = rag.workspace
    worker: Worker | None = None
    text = "Alice met Bob in Paris. Carol works at Acme."
    try:
        llm_server.delay = 3.0  # the worker hangs in its first LLM call
        worker = await Worker.start(tmp_path, "stuck", spec(dsn, ws, llm_server, [text]))

        async def claimed() -> bool:
            return "processing" in (await statuses(conn, ws)).values()

        await wait_until(claimed, "the document to be claimed", timeout=30, worker=worker)
        await worker.kill()
        llm_server.delay = 0.0
        (doc_id,) = await statuses(conn, ws)
        await wait_doc_locks_released(conn, ws, [doc_id])
        assert await statuses(conn, ws) == {doc_id: "processing"}

        progress = await rag.aprocess_pending()
        assert (progress.docs_total, progress.docs_done, progress.docs_skipped) == (1, 1, 0)
        assert await statuses(conn, ws) == {doc_id: "processed"}
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entities") == 5
        await assert_consistent(conn, ws)
    finally:
        llm_server.delay = 0.0
        if worker is not None:
            await worker.kill()
        await rag.finalize()
        await drop_if_exists(conn, ws)
