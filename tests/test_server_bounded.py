"""Bounded work in the server: a client that goes away stops its work, a statement over
the timeout is a 504, a long question is answered quickly and one over the cap refused."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import uvicorn

from lightrag_pg.server import ServerSettings, create_app
from lightrag_pg.server.registry import RagFactory
from lightrag_pg.testing import scripted_llm

from .server_support import TEXT, Served, scripted_factory, serving
from .test_bounded_query import long_question

QUESTION = "How is Alice related to Acme?"
CHAT = {"model": "lightrag:latest", "messages": [{"role": "user", "content": QUESTION}], "stream": False}
BODIES: dict[str, dict[str, Any]] = {
    "/query": {"query": QUESTION},
    "/query/data": {"query": QUESTION},
    "/query/stream": {"query": QUESTION},
    "/api/chat": CHAT,
}
WAITING = """
SELECT pid FROM pg_stat_activity
WHERE application_name = 'lightrag_pg' AND state = 'active' AND wait_event_type = 'Lock'
"""
STATE = "SELECT state FROM pg_stat_activity WHERE pid = $1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def uvicorn_serving(settings: ServerSettings, factory: RagFactory) -> AsyncIterator[int]:
    """The app under a real uvicorn on a free local port, in this event loop; yields the port."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, factory), host="127.0.0.1", port=port, log_level="warning")
    )
    serving_task = asyncio.ensure_future(server.serve())
    try:
        for _ in range(600):
            if server.started or serving_task.done():
                break
            await asyncio.sleep(0.05)
        assert server.started, "uvicorn did not start"
        yield port
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving_task, 60)


async def index_text(port: int) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        track = (await client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
        for _ in range(600):
            docs = (await client.get(f"/documents/track_status/{track}")).json()["documents"]
            if docs and docs[0]["status"] in ("processed", "failed"):
                break
            await asyncio.sleep(0.05)
        assert docs[0]["status"] == "processed", docs
        for _ in range(600):
            if not (await client.get("/documents/pipeline_status")).json()["busy"]:
                break
            await asyncio.sleep(0.05)


async def send_and_leave_open(port: int, path: str, body: dict[str, Any]) -> asyncio.StreamWriter:
    """Send one request over a raw connection and return the connection, unread."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    writer.write(head.encode() + payload)
    await writer.drain()
    return writer


async def until(check: Any, seconds: float) -> Any:
    """Poll ``check()`` until it returns something truthy, at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = await check()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.02)


@pytest.fixture
def settings(dsn: str, workspace_name: str, tmp_path: Path) -> ServerSettings:
    return ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "inputs")


@pytest.fixture
async def dropped(workspace_name: str) -> AsyncIterator[None]:
    yield


@pytest.fixture
async def watcher(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection outside any transaction: pg_stat_activity's states are a snapshot per
    transaction, so they are read here, not on the connection holding the lock."""
    connection = await asyncpg.connect(dsn)
    yield connection
    await connection.close()


@pytest.mark.usefixtures("dropped")
async def test_a_client_that_disconnects_cancels_its_statement(
    settings: ServerSettings, conn: asyncpg.Connection, watcher: asyncpg.Connection, workspace_name: str
) -> None:
    async with uvicorn_serving(settings, scripted_factory()) as port:
        await index_text(port)
        for path, body in BODIES.items():
            async with conn.transaction():
                await conn.execute(f'LOCK TABLE "{workspace_name}".entities IN ACCESS EXCLUSIVE MODE')
                writer = await send_and_leave_open(port, path, body)
                waiting = await until(lambda: watcher.fetch(WAITING), 20)
                assert len(waiting) == 1, f"{path}: the statement is not waiting on the lock"
                pid = waiting[0]["pid"]
                writer.close()
                await writer.wait_closed()
                state = await until(lambda pid=pid: _idle(watcher, pid), 1.0)
                assert state == "idle", f"{path}: the statement still runs 1 s after its client left"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            answer = await client.post("/query/data", json={"query": QUESTION})
        assert answer.status_code == 200 and answer.json()["status"] == "success"


async def _idle(conn: asyncpg.Connection, pid: int) -> str | None:
    state = await conn.fetchval(STATE, pid)
    return state if state == "idle" else None


@pytest.mark.usefixtures("dropped")
async def test_a_client_that_disconnects_cancels_its_generation(settings: ServerSettings) -> None:
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def hanging_llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        if prompt.startswith("Hang"):
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.set()
                raise
        return await scripted_llm(prompt, system_prompt, **kwargs)

    async with uvicorn_serving(settings, scripted_factory(hanging_llm)) as port:
        body = {"model": "lightrag:latest", "prompt": "Hang on", "stream": False}
        writer = await send_and_leave_open(port, "/api/generate", body)
        await asyncio.wait_for(started.wait(), 20)
        writer.close()
        await writer.wait_closed()
        await asyncio.wait_for(cancelled.wait(), 1.0)


@pytest.fixture
async def timing_out(settings: ServerSettings, dropped: None) -> AsyncIterator[Served]:
    quick = ServerSettings(**{**_fields(settings), "statement_timeout_ms": 300})
    async with serving(quick) as server:
        track = (await server.client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
        await server.track(track)
        yield server


def _fields(settings: ServerSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in ServerSettings.__dataclass_fields__}


async def test_a_statement_over_the_timeout_answers_504(
    timing_out: Served, conn: asyncpg.Connection, workspace_name: str
) -> None:
    async with conn.transaction():
        await conn.execute(f'LOCK TABLE "{workspace_name}".entities IN ACCESS EXCLUSIVE MODE')
        async with asyncio.timeout(20):
            answer = await timing_out.client.post("/query/data", json={"query": QUESTION})
    assert answer.status_code == 504, answer.text
    assert "statement_timeout_ms" in answer.json()["detail"]
    assert (await timing_out.client.post("/query/data", json={"query": QUESTION})).status_code == 200


@pytest.fixture
async def served(settings: ServerSettings, dropped: None) -> AsyncIterator[Served]:
    async with serving(settings) as server:
        track = (await server.client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
        await server.track(track)
        yield server


async def test_a_long_question_is_answered_in_bounded_time(served: Served) -> None:
    started = time.perf_counter()
    async with asyncio.timeout(60):
        answer = await served.client.post("/query/data", json={"query": long_question(99_000)})
    assert answer.status_code == 200 and answer.json()["status"] == "success"
    assert time.perf_counter() - started < 10


@pytest.mark.slow
async def test_a_question_over_the_cap_is_refused_naming_it(served: Served) -> None:
    too_long = long_question(150_000)
    async with asyncio.timeout(60):
        chat = await served.client.post(
            "/api/chat", json={**CHAT, "messages": [{"role": "user", "content": too_long}]}
        )
        query = await served.client.post("/query/data", json={"query": too_long})
    assert chat.status_code == 422 and "100000 characters" in chat.text
    assert query.status_code == 422 and "100000 characters" in query.text
