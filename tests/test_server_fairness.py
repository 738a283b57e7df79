"""Bounded work in the server: workspaces take turns for chunk work, a big document shows
its progress chunk by chunk, and a query never starts indexing."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from itertools import pairwise
from typing import Any

import asyncpg
import numpy as np
import pytest

from lightrag_pg import EmbeddingFunc, LightRAG
from lightrag_pg.db.pool import SharedPool
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.registry import RagFactory
from lightrag_pg.tasks import FairScheduler
from lightrag_pg.testing import classify_prompt, hashed_embedding_func, hashed_vectors, scripted_llm

from .server_support import TEXT, scripted_factory, serving

pytestmark = pytest.mark.slow

SENTENCE = "Alice met Bob in Paris while Acme watched on day {}."


def big_text(sentences: int) -> str:
    return " ".join(SENTENCE.format(i) for i in range(sentences))


def slow_extraction(seconds: float) -> Any:
    """The scripted LLM, taking ``seconds`` for each extraction answer."""

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        if classify_prompt(prompt) == "extraction":
            await asyncio.sleep(seconds)
        return await scripted_llm(prompt, system_prompt, **kwargs)

    return llm


class LocalModel:
    """An embedding model run the way a local one is (MiniLM on onnxruntime): all the
    texts of a call in one worker-thread run, one run at a time in the process, a few
    milliseconds per text; it batches itself, so texts are not split before it."""

    _lightrag_pg_protected = True
    _one_at_a_time = threading.Lock()

    def __init__(self, seconds_per_text: float) -> None:
        self.seconds_per_text = seconds_per_text

    def _run(self, texts: list[str]) -> np.ndarray:
        with self._one_at_a_time:
            time.sleep(self.seconds_per_text * len(texts))
            return hashed_vectors(texts, 32)

    async def __call__(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self._run, texts)


def factory_with(llm: Any, embedding: EmbeddingFunc, **settings: Any) -> RagFactory:
    def factory(workspace: str, pool: SharedPool) -> LightRAG:
        return LightRAG(
            workspace=workspace,
            llm_model_func=llm,
            embedding_func=embedding,
            pool=pool,
            retry_base_delay=0.01,
            entity_extract_max_gleaning=0,
            **settings,
        )

    return factory


async def drop(conn: asyncpg.Connection, *names: str) -> None:
    for name in names:
        if await workspace_exists(conn, name):
            await drop_workspace(conn, name)


async def test_the_scheduler_serves_the_least_served_owner_and_frees_cancelled_slots() -> None:
    scheduler = FairScheduler(1)
    started: list[str] = []
    release = asyncio.Event()

    async def job(name: str) -> str:
        started.append(name)
        if name == "a0":
            await release.wait()
        return name

    first = asyncio.ensure_future(scheduler.run("a", lambda: job("a0")))
    await asyncio.sleep(0)
    queued = [asyncio.ensure_future(scheduler.run("a", lambda n=n: job(n))) for n in ("a1", "a2", "a3")]
    await asyncio.sleep(0)
    late = asyncio.ensure_future(scheduler.run("b", lambda: job("b1")))
    gone = asyncio.ensure_future(scheduler.run("c", lambda: job("c1")))
    await asyncio.sleep(0)
    assert (scheduler.running, scheduler.waiting) == (1, 5)
    gone.cancel()
    await asyncio.sleep(0)
    assert scheduler.waiting == 4
    release.set()
    assert await asyncio.gather(first, *queued, late) == ["a0", "a1", "a2", "a3", "b1"]
    assert started == ["a0", "b1", "a1", "a2", "a3"]  # b queued last, and went first
    assert (scheduler.running, scheduler.waiting) == (0, 0)

    hold = asyncio.Event()
    running = asyncio.ensure_future(scheduler.run("a", hold.wait))
    await asyncio.sleep(0)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert await scheduler.run("b", lambda: job("b2")) == "b2"
    assert scheduler.running == 0


async def test_an_owner_between_jobs_keeps_a_slot_from_a_busier_one() -> None:
    scheduler = FairScheduler(2, linger=0.5)
    busy = asyncio.Event()

    async def long() -> None:
        await busy.wait()

    a_jobs = [asyncio.ensure_future(scheduler.run("a", long)) for _ in range(6)]
    await asyncio.sleep(0)
    assert (scheduler.running, scheduler.waiting) == (2, 4)
    b_first = asyncio.ensure_future(scheduler.run("b", lambda: asyncio.sleep(0)))
    busy.set()
    busy.clear()  # a's two running jobs end, the next ones wait
    await b_first  # b took the first slot a freed
    await asyncio.sleep(0.01)
    assert (scheduler.running, scheduler.waiting) == (1, 3)  # a's other slot is kept for b
    started = time.monotonic()
    await scheduler.run("b", lambda: asyncio.sleep(0))
    assert time.monotonic() - started < 0.1  # b's next job did not wait for a
    await asyncio.sleep(0.6)
    assert scheduler.running == 2  # b is idle now: a uses both slots
    busy.set()
    await asyncio.gather(*a_jobs)
    assert scheduler.running == 0


async def test_a_big_document_in_one_workspace_does_not_delay_another(
    dsn: str, workspace_name: str, tmp_path: Any, conn: asyncpg.Connection
) -> None:
    """The fault: a local embedding model runs every chunk of a document in one call, so a
    big document in workspace A held it (and a worker thread) for minutes while a one-line
    document in workspace B waited behind it. Now every piece of chunk work (one chunk's
    extraction, one batch of vectors) takes its turn in a scheduler shared by the workspaces."""
    other = f"{workspace_name}_b"
    embedding = EmbeddingFunc(embedding_dim=32, func=LocalModel(0.02), model_name="local-model-32")
    factory = factory_with(slow_extraction(0.02), embedding, chunk_token_size=40, chunk_overlap_token_size=0)
    settings = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path, allow_create=True
    )
    try:
        async with serving(settings, factory) as server:
            big = {"text": big_text(2000), "file_source": "big.txt"}  # ~600 chunks: 12 s of embedding
            (await server.client.post("/documents/text", json=big)).raise_for_status()
            for _ in range(300):
                status = (await server.client.get("/documents/pipeline_status")).json()
                if status["busy"] and "documents 0/1" in status["latest_message"]:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)
            started = time.monotonic()
            small = await server.client.post(
                "/documents/text", json={"text": TEXT}, headers={"LIGHTRAG-WORKSPACE": other}
            )
            (doc,) = (await server.track(small.json()["track_id"], workspace=other))["documents"]
            waited = time.monotonic() - started
            assert doc["status"] == "processed"
            (big_doc,) = (await server.client.post("/documents/paginated", json={})).json()["documents"]
            assert big_doc["status"] == "processing"  # B did not just wait for A to finish
            assert waited < 5.0, waited
    finally:
        await drop(conn, workspace_name, other)


async def test_pipeline_status_moves_during_a_big_document(
    dsn: str, workspace_name: str, tmp_path: Any, conn: asyncpg.Connection
) -> None:
    """The fault: pipeline_status said "chunks 0/0, 0 entities" until the whole document was
    done (30 minutes for a big README), and track_status said nothing more."""
    factory = factory_with(
        slow_extraction(0.06), hashed_embedding_func(), chunk_token_size=40, chunk_overlap_token_size=0
    )
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    try:
        async with serving(settings, factory) as server:
            body = {"text": big_text(1000), "file_source": "big.txt"}  # ~300 chunks, 4-5 s
            track = (await server.client.post("/documents/text", json=body)).json()["track_id"]
            messages: list[tuple[float, str]] = []
            progress: list[dict[str, Any]] = []
            for _ in range(1200):
                status = (await server.client.get("/documents/pipeline_status")).json()
                (doc,) = (await server.client.get(f"/documents/track_status/{track}")).json()["documents"]
                if doc["status"] in ("processed", "failed"):
                    break
                if status["busy"] and (not messages or messages[-1][1] != status["latest_message"]):
                    messages.append((time.monotonic(), status["latest_message"]))
                if "progress" in (doc["metadata"] or {}):
                    progress.append(doc["metadata"]["progress"])
                await asyncio.sleep(0.05)
            assert doc["status"] == "processed"
            assert "progress" not in doc["metadata"]
            # stored in statements of 64 chunks, in one transaction
            stored = await conn.fetchval(f'SELECT count(*) FROM "{workspace_name}".text_chunks')
            assert stored == doc["chunks_count"] == progress[-1]["chunks"] > 64
    finally:
        await drop(conn, workspace_name)
    during = [text for _, text in messages if "documents 0/1" in text]  # before the document was done
    extracted = [int(m) for text in during for m in re.findall(r"chunks (\d+) extracted", text)]
    assert len(set(extracted)) >= 10, messages
    assert extracted == sorted(extracted)
    assert max(b - a for (a, _), (b, _) in pairwise(messages)) < 5.0, messages
    assert progress, "track_status never showed the document's progress"
    assert any(0 < p["extracted"] < p["chunks"] for p in progress), progress
    assert all(p["phase"] in ("extracting", "merging", "storing") for p in progress)


async def test_a_query_does_not_start_indexing(
    dsn: str, workspace_name: str, tmp_path: Any, conn: asyncpg.Connection
) -> None:
    """The fault: opening a workspace for a question resumed its unfinished documents, so a
    question started indexing in the background (and competed with it)."""
    other = f"{workspace_name}_q"
    left = LightRAG(
        dsn=dsn, workspace=other, llm_model_func=scripted_llm, embedding_func=hashed_embedding_func()
    )
    await left.initialize()
    try:
        queued = await left.aenqueue(TEXT)
        await left.finalize()
        settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
        async with serving(settings, scripted_factory()) as server:
            headers = {"LIGHTRAG-WORKSPACE": other}
            answer = await server.client.post("/query", json={"query": "Who founded Acme?"}, headers=headers)
            assert answer.status_code == 200
            await asyncio.sleep(1.0)
            (runtime,) = [r for r in server.app.state.server.registry.opened() if r.name == other]
            assert not runtime.processing
            assert await conn.fetchval(f'SELECT status FROM "{other}".doc_status') == "pending"
            # the first /documents request for the workspace resumes its unfinished documents
            (await server.client.get("/documents/status_counts", headers=headers)).raise_for_status()
            (doc,) = (await server.track(queued.track_id, workspace=other))["documents"]
            assert doc["status"] == "processed"
    finally:
        await drop(conn, workspace_name, other)


@pytest.mark.parametrize("timeout", [0.0, -1.0, True])
def test_the_shutdown_timeout_must_be_positive(timeout: Any) -> None:
    with pytest.raises(Exception, match="shutdown_timeout"):
        ServerSettings(shutdown_timeout=timeout)
