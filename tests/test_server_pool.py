"""The server's one connection pool: every workspace on it, isolated by header; a saturated or
dropped workspace leaves the others served; no statement added in the steady state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.pool import SharedPool
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.runtime import WorkspaceRuntime
from lightrag_pg.testing import hashed_embedding_func, scripted_llm

from .server_support import TEXT, Served, counted, serving
from .test_shared_pool import SwitchCounter

QUESTION = {"query": "Who founded Acme?", "mode": "mix"}


@asynccontextmanager
async def two_workspaces(
    dsn: str, name: str, tmp_path: Path, conn: asyncpg.Connection, **sizes: int
) -> AsyncIterator[tuple[Served, dict[str, str]]]:
    """A server on ``name`` (default) and ``name_b``, :data:`TEXT` indexed in both; the headers of b."""
    other = f"{name}_b"
    settings = ServerSettings(
        dsn=dsn, default_workspace=name, allow_create=True, input_dir=tmp_path / "inputs", **sizes
    )
    in_b = {"LIGHTRAG-WORKSPACE": other}
    try:
        async with serving(settings) as server:
            for headers in ({}, in_b):
                sent = await server.client.post("/documents/text", json={"text": TEXT}, headers=headers)
                await server.track(sent.json()["track_id"], workspace=headers.get("LIGHTRAG-WORKSPACE"))
            yield server, in_b
    finally:
        for workspace in (name, other):
            if await workspace_exists(conn, workspace):
                await drop_workspace(conn, workspace)


def runtimes(server: Served) -> dict[str, WorkspaceRuntime]:
    return {r.name: r for r in server.app.state.server.registry.opened()}


async def answer(server: Served, headers: dict[str, str] | None = None) -> dict[str, Any]:
    response = await server.client.post("/query/data", json=QUESTION, headers=headers or {})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    del body["metadata"]["timings_ms"], body["metadata"]["usage"]  # of this call
    return body


@pytest.mark.slow
async def test_every_workspace_is_served_from_the_one_pool(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    sizes = {"pool_size": 3, "workspace_pool_size": 2}
    async with two_workspaces(dsn, workspace_name, tmp_path, conn, **sizes) as (server, in_b):
        registry = server.app.state.server.registry
        opened = runtimes(server)
        assert sorted(opened) == sorted([workspace_name, in_b["LIGHTRAG-WORKSPACE"]])
        assert all(r.rag.pool.shared is registry.pool for r in opened.values())
        assert registry.pool.max_size == 3 and registry.pool.pool.get_size() <= 3
        c = await server.client.post("/documents/text", json={"text": "Carol visited Berlin."}, headers=in_b)
        await server.track(c.json()["track_id"], workspace=in_b["LIGHTRAG-WORKSPACE"])
        counts_a = (await server.client.get("/documents/status_counts")).json()["status_counts"]
        counts_b = (await server.client.get("/documents/status_counts", headers=in_b)).json()["status_counts"]
        assert counts_a == counted(processed=1) and counts_b == counted(processed=2)
        labels_a = (await server.client.get("/graph/label/list")).json()
        labels_b = (await server.client.get("/graph/label/list", headers=in_b)).json()
        assert "Carol" in labels_b and "Carol" not in labels_a
        health = (await server.client.get("/health")).json()["configuration"]
        assert health["pool_size"] == 3 and health["workspace_pool_size"] == 2


@pytest.mark.slow
async def test_a_saturated_workspace_does_not_block_another(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    sizes = {"pool_size": 3, "workspace_pool_size": 2}
    async with two_workspaces(dsn, workspace_name, tmp_path, conn, **sizes) as (server, in_b):
        busy = runtimes(server)[workspace_name].rag.pool
        expected_b = await answer(server, in_b)
        async with AsyncExitStack() as held:
            for _ in range(2):  # every connection workspace a may hold
                await held.enter_async_context(busy.acquire())
            waiting = asyncio.create_task(server.client.get("/documents/status_counts"))
            await asyncio.sleep(0.3)
            assert not waiting.done()  # a waits for its share
            started = time.monotonic()
            for _ in range(5):
                assert await answer(server, in_b) == expected_b
            assert time.monotonic() - started < 10
            counts = await server.client.get("/documents/status_counts", headers=in_b)
            assert counts.json()["status_counts"] == counted(processed=1)
            assert not waiting.done()
        assert (await waiting).status_code == 200  # a is served once its connections come back


@pytest.mark.slow
async def test_a_dropped_workspace_does_not_break_another(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    sizes = {"pool_size": 2, "workspace_pool_size": 1}
    async with two_workspaces(dsn, workspace_name, tmp_path, conn, **sizes) as (server, in_b):
        expected = await answer(server)
        await drop_workspace(conn, in_b["LIGHTRAG-WORKSPACE"])
        gone = await server.client.post("/query/data", json=QUESTION, headers=in_b)
        assert gone.status_code == 404 and "no longer exists" in gone.json()["detail"]
        assert sorted(runtimes(server)) == [workspace_name]  # no longer served
        for _ in range(3):  # the same two connections serve the dropped workspace and the other
            assert await answer(server) == expected
            again = await server.client.get("/documents/status_counts", headers=in_b)
            assert again.status_code == 200  # created anew (--allow-create), empty
            assert again.json()["status_counts"] == counted()
            await drop_workspace(conn, in_b["LIGHTRAG-WORKSPACE"])
            gone = await server.client.get("/documents/status_counts", headers=in_b)
            assert gone.status_code == 404
            counts = await server.client.get("/documents/status_counts")
            assert counts.json()["status_counts"] == counted(processed=1)
        assert server.app.state.server.registry.pool.pool.get_size() <= 2


@pytest.mark.slow
async def test_no_statement_is_added_in_the_steady_state(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    sizes = {"pool_size": 2, "workspace_pool_size": 1}
    async with two_workspaces(dsn, workspace_name, tmp_path, conn, **sizes) as (server, in_b):
        await answer(server)
        with SwitchCounter() as steady:
            await answer(server)
        embed = hashed_embedding_func()
        own = LightRAG(dsn=dsn, workspace=workspace_name, llm_model_func=scripted_llm, embedding_func=embed)
        await own.initialize()
        try:
            await own.aquery_data(QUESTION["query"])
            with SwitchCounter() as library:
                await own.aquery_data(QUESTION["query"])
        finally:
            await own.finalize()
        assert steady.switches == 0 and steady.statements == library.statements > 0

        await answer(server, in_b)
        with SwitchCounter() as after_b:
            await answer(server)
        assert after_b.switches >= 1  # the connection b used last is pointed back at a: one statement
        assert after_b.statements == steady.statements + after_b.switches


def test_pool_sizes_come_from_the_environment_and_leave_room_for_other_workspaces() -> None:
    env = {"LIGHTRAG_PG_POOL_SIZE": "10", "LIGHTRAG_PG_WORKSPACE_POOL_SIZE": "6"}
    settings = ServerSettings.from_env(env)
    assert (settings.pool_size, settings.workspace_pool_size) == (10, 6)
    assert (ServerSettings().pool_size, ServerSettings().workspace_pool_size) == (16, 8)
    with pytest.raises(ConfigurationError, match="must be below pool_size"):
        ServerSettings(pool_size=4, workspace_pool_size=4)
    with pytest.raises(ConfigurationError, match="LIGHTRAG_PG_POOL_SIZE"):
        ServerSettings.from_env({"LIGHTRAG_PG_POOL_SIZE": "many"})


async def test_a_factory_that_ignores_the_shared_pool_is_refused(dsn: str, workspace_name: str) -> None:
    def own_pool(workspace: str, pool: SharedPool) -> LightRAG:
        return LightRAG(dsn=dsn, workspace=workspace, embedding_func=hashed_embedding_func())

    with pytest.raises(ConfigurationError, match="pool=pool"):
        async with serving(ServerSettings(dsn=dsn, default_workspace=workspace_name), own_pool):
            pass
