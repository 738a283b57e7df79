"""The server as a real process (``lightrag-pg serve`` under uvicorn), and shutdown with work in flight."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from lightrag_pg.server import ServerSettings
from lightrag_pg.testing import scripted_llm

from .served_process import free_port, server_env, start_server, wait_until_up
from .server_support import TEXT, scripted_factory, serving

pytestmark = pytest.mark.slow


def test_lightrag_pg_serve_in_a_real_process(
    workspace_name: str, tmp_path: Path, serve_process: Callable[..., Any]
) -> None:
    with serve_process(workspace_name, tmp_path, "process-key") as server:
        client = server.client
        assert client.get("/documents/status_counts", headers={"X-API-Key": "x"}).status_code == 403
        files = {"file": ("notes.md", TEXT.encode())}
        server.wait_processed(client.post("/documents/upload", files=files).json()["track_id"])
        answer = client.post("/query", json={"query": "Where did Alice found Acme?"}).json()
        assert answer["response"].startswith("Scripted answer")
        with client.stream("POST", "/query/stream", json={"query": "Who founded Acme?"}) as response:
            lines = [line for line in response.iter_lines() if line]
        assert lines[0].startswith('{"references"') and len(lines) > 1
    assert server.process.returncode == 0, server.stderr
    assert f"serving {server.url}" in server.stderr and "stopped;" in server.stderr


async def test_shutdown_leaves_work_pending_and_the_next_start_resumes_it(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    release = asyncio.Event()

    async def slow_llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        await release.wait()
        return await scripted_llm(prompt, system_prompt, **kwargs)

    settings = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path, shutdown_timeout=1.0
    )
    async with serving(settings, scripted_factory(slow_llm)) as server:
        track = (await server.client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
        for _ in range(100):
            (doc,) = (await server.client.get(f"/documents/track_status/{track}")).json()["documents"]
            if doc["status"] == "processing":
                break
            await asyncio.sleep(0.02)
        assert (await server.client.get("/documents/pipeline_status")).json()["busy"] is True
    left = await conn.fetchval(f'SELECT status FROM "{workspace_name}".doc_status')
    assert left in ("pending", "processing")

    async with serving(settings) as server:
        (doc,) = (await server.track(track))["documents"]
        assert doc["status"] == "processed"
        assert "resuming" in (await server.client.get("/documents/pipeline_status")).json()["job_name"]


async def test_cancel_pipeline_stops_indexing_and_reprocess_resumes_it(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    release = asyncio.Event()

    async def gated_llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        await release.wait()
        return await scripted_llm(prompt, system_prompt, **kwargs)

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings, scripted_factory(gated_llm)) as server:
        track = (await server.client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
        for _ in range(100):
            if (await server.client.get("/documents/pipeline_status")).json()["busy"]:
                break
            await asyncio.sleep(0.02)
        cancelled = (await server.client.post("/documents/cancel_pipeline")).json()
        assert cancelled["status"] == "cancellation_requested"
        for _ in range(100):
            status = (await server.client.get("/documents/pipeline_status")).json()
            if not status["busy"]:
                break
            await asyncio.sleep(0.02)
        assert "cancelled" in status["latest_message"]
        (doc,) = (await server.client.get(f"/documents/track_status/{track}")).json()["documents"]
        assert doc["status"] in ("pending", "processing")
        release.set()
        retried = await server.client.post("/documents/reprocess_failed")
        assert retried.json()["status"] == "reprocessing_started"
        (doc,) = (await server.track(track))["documents"]
        assert doc["status"] == "processed"


def offline_server(dsn: str, workspace: str, port: int, folder: Path) -> subprocess.Popen[str]:
    """``lightrag-pg serve`` with the defaults of a machine without an LLM: spaCy and MiniLM."""
    return start_server(dsn, workspace, folder, port, server_env(None))


async def stop_timed(process: subprocess.Popen[str]) -> tuple[float, str]:
    """SIGTERM ``process``; seconds until it exited (killed after 60 s) and its stderr."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = await asyncio.to_thread(process.communicate, timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = await asyncio.to_thread(process.communicate)
    return time.monotonic() - started, stderr


async def test_sigterm_during_a_big_document_exits_within_ten_seconds(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    """The fault: during a big document, SIGTERM printed "stopped" at once but the process
    lived on for 11.5 minutes, until a worker thread had embedded every chunk of the
    document. Now the work is cut into chunk-sized jobs, and the process ends within
    ``--shutdown-timeout`` (10 s), having released the port and its document locks."""
    pytest.importorskip("spacy")
    pytest.importorskip("onnxruntime")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    text = " ".join(f"Alice met Bob in Paris while Acme watched on day {i}." for i in range(150_000))
    process = offline_server(dsn, workspace_name, port, tmp_path)
    try:
        await asyncio.to_thread(wait_until_up, url, process)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            body = {"text": text, "file_source": "big.txt"}  # ~7 MB, 1,800 chunks
            track = (await client.post("/documents/text", json=body)).json()["track_id"]
            for _ in range(600):
                (doc,) = (await client.get(f"/documents/track_status/{track}")).json()["documents"]
                if doc["status"] == "processing":
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(3.0)  # cut into chunks, extracting and embedding them
        seconds, stderr = await stop_timed(process)
        assert seconds < 10.0, (seconds, stderr[-2000:])
        assert process.returncode == 0 and "stopped;" in stderr, stderr[-2000:]
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free, and the next server takes it

        process = offline_server(dsn, workspace_name, port, tmp_path)
        await asyncio.to_thread(wait_until_up, url, process)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            for _ in range(600):
                status = (await client.get("/documents/pipeline_status")).json()
                if status["busy"] and "extracted" in status["latest_message"]:
                    break
                await asyncio.sleep(0.1)
            assert "resuming" in status["job_name"], status
            (doc,) = (await client.get(f"/documents/track_status/{track}")).json()["documents"]
            assert doc["status"] == "processing"  # claimed again: its lock was released
        seconds, stderr = await stop_timed(process)
        assert seconds < 10.0, (seconds, stderr[-2000:])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_logs_each_request(dsn: str, workspace_name: str, tmp_path: Path, llm_server: Any) -> None:
    port = free_port()
    log = tmp_path / "out.log"
    command = [sys.executable, "-m", "lightrag_pg", "serve", "--dsn", dsn, "--workspace", workspace_name]
    command += ["--port", str(port), "--input-dir", str(tmp_path), "--allow-create"]
    with log.open("w") as out:
        process = subprocess.Popen(command, env=server_env(llm_server), cwd=tmp_path, stdout=out, stderr=out)
        try:
            wait_until_up(f"http://127.0.0.1:{port}", process)
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    assert '"GET /health HTTP/1.1" 200' in log.read_text()
