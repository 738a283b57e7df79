"""``lightrag-pg serve`` as a real process for the client tests (browser, ``ollama``), with the
scripted OpenAI-compatible server as its LLM and embeddings."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

from lightrag_pg.db.workspace import drop_workspace

from .fake_openai import FakeOpenAI
from .test_server_process import ROOT, free_port, wait_until_up


@dataclass
class Server:
    url: str
    workspace: str
    client: httpx.Client

    def wait_processed(self, track_id: str) -> None:
        for _ in range(600):
            docs = self.client.get(f"/documents/track_status/{track_id}").json()["documents"]
            if docs and all(d["status"] in ("processed", "failed") for d in docs):
                assert all(d["status"] == "processed" for d in docs), docs
                return
            time.sleep(0.1)
        raise AssertionError(f"track {track_id} did not finish")

    def insert(self, text: str, source: str) -> None:
        answer = self.client.post("/documents/text", json={"text": text, "file_source": source})
        answer.raise_for_status()
        self.wait_processed(answer.json()["track_id"])


def drop(dsn: str, workspace: str) -> None:
    """Drop ``workspace`` (from synchronous code)."""

    async def dropping() -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await drop_workspace(conn, workspace)
        finally:
            await conn.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, dropping()).result()


@contextmanager
def serving_process(
    dsn: str, llm_server: FakeOpenAI, folder: Path, workspace: str, key: str | None = None, **env: str
) -> Iterator[Server]:
    """``lightrag-pg serve`` on a free port for ``workspace`` (dropped afterwards), with API key
    ``key`` (none: no credentials) and ``env`` on top of this environment; its client sends
    ``key``. Stopped with SIGTERM."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "test",
        "LLM_MODEL": "fake-model",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        **env,
    }
    for name in ("LIGHTRAG_API_KEY", "WHITELIST_PATHS", "AUTH_ACCOUNTS"):
        if name not in env:
            environment.pop(name, None)
    if key:
        environment["LIGHTRAG_API_KEY"] = key
    port = free_port()
    command = [sys.executable, "-m", "lightrag_pg", "serve", "--dsn", dsn, "--workspace", workspace]
    command += ["--port", str(port), "--input-dir", str(folder)]
    process = subprocess.Popen(command, env=environment, cwd=folder, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        headers = {"X-API-Key": key} if key else {}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            yield Server(url, workspace, client)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
        drop(dsn, workspace)
