"""``lightrag-pg serve`` as a real process, with the scripted OpenAI-compatible server as its LLM
and embeddings: the one way the tests start it (the ``serve_process`` fixture binds it)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from .fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
CLEARED = ("LIGHTRAG_API_KEY", "WHITELIST_PATHS", "AUTH_ACCOUNTS", "TOKEN_SECRET", "FORWARDED_ALLOW_IPS")
"""Server settings taken from this environment only when a test names them."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("the server did not come up")


def server_env(llm_server: FakeOpenAI | None, **env: str) -> dict[str, str]:
    """This environment with this checkout first on the path, the scripted endpoint for chat and
    embeddings (none: the offline defaults, spaCy and MiniLM) and ``env`` on top."""
    if llm_server is None:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "EMBEDDING_"))}
    else:
        base = {
            **os.environ,
            "OPENAI_BASE_URL": llm_server.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_MODEL": "fake-model",
            "EMBEDDING_MODEL": "fake-embedding",
            "EMBEDDING_DIM": "64",
        }
    for name in CLEARED:
        base.pop(name, None)
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**base, **env}


def start_server(
    dsn: str, workspace: str, folder: Path, port: int, env: dict[str, str], args: Sequence[str] = ()
) -> subprocess.Popen[str]:
    """``lightrag-pg serve`` on ``port`` for ``workspace``, its input folder and working directory
    ``folder``; stderr is piped."""
    command = [sys.executable, "-m", "lightrag_pg", "serve", "--dsn", dsn, "--workspace", workspace]
    command += ["--port", str(port), "--input-dir", str(folder), *args]
    return subprocess.Popen(command, env=env, cwd=folder, stderr=subprocess.PIPE, text=True)


@dataclass
class Server:
    url: str
    workspace: str
    client: httpx.Client
    process: subprocess.Popen[str]
    stderr: str = ""
    """What the process wrote on stderr, once it has stopped."""

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


@contextmanager
def serving_process(
    dsn: str,
    llm_server: FakeOpenAI,
    workspace: str,
    folder: Path,
    key: str | None = None,
    *,
    args: Sequence[str] = (),
    **env: str,
) -> Iterator[Server]:
    """``lightrag-pg serve`` on a free port for ``workspace`` with API key ``key`` (none: no
    credentials), extra flags ``args`` and ``env`` on top of this environment; its client sends
    ``key``. Stopped with SIGTERM; the workspace is left to the caller to drop."""
    if key:
        env["LIGHTRAG_API_KEY"] = key
    port = free_port()
    process = start_server(dsn, workspace, folder, port, server_env(llm_server, **env), args)
    url = f"http://127.0.0.1:{port}"
    headers = {"X-API-Key": key} if key else {}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        server = Server(url, workspace, client, process)
        try:
            wait_until_up(url, process)
            yield server
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            server.stderr = process.communicate(timeout=60)[1] or ""
