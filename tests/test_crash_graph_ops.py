"""A process killed with SIGKILL during a document delete or an entity merge leaves all or
nothing, and running the operation again gives the workspace an uninterrupted run gives."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG

from .conftest import RagFactory
from .crash_support import Worker, assert_consistent, wait_doc_locks_released, wait_until
from .test_deletion import DOCS, NO_SUMMARY, insert, snapshot

pytestmark = pytest.mark.slow

DELETED = ["d0", "d2"]
SOURCES, TARGET = ["Alice", "Carol"], "Bob"


@pytest.fixture
def graphs(rag_factory: RagFactory) -> Callable[[], Awaitable[LightRAG]]:
    """Initialized LightRAGs (scripted LLM, descriptions joined) on fresh workspaces, dropped afterwards."""
    return lambda: rag_factory(**NO_SUMMARY)


async def backends_in_transaction(conn: asyncpg.Connection) -> int:
    return await conn.fetchval(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE state = 'idle in transaction' AND pid <> pg_backend_pid()"
    )


async def kill_at_pause(
    tmp_path: Path, conn: asyncpg.Connection, rag: LightRAG, pause: str, **op: Any
) -> None:
    """Run ``op`` in a worker process that blocks at ``pause``, and SIGKILL it there."""
    spec = {"dsn": rag.dsn, "workspace": rag.workspace, "settings": NO_SUMMARY, "pause": pause, **op}
    worker = await Worker.start(tmp_path, f"{op['op']}-{pause}", spec, module="tests.graph_op_worker")
    try:

        async def paused() -> bool:
            return any(json.loads(x).get("event") == "paused" for x in worker.out.read_text().splitlines())

        await wait_until(paused, f"the {op['op']} to reach its {pause} pause", timeout=60, worker=worker)
        if pause == "write":
            assert await backends_in_transaction(conn) == 1, "the worker should hold its transaction open"
        worker.proc.kill()
        assert await asyncio.wait_for(worker.proc.wait(), 10) == -signal.SIGKILL
    finally:
        await worker.kill()


async def wait_for_rollback(conn: asyncpg.Connection) -> None:
    """The killed client's backend notices, rolls back and exits shortly after."""

    async def none_open() -> bool:
        return await backends_in_transaction(conn) == 0

    await wait_until(none_open, "the dead worker's transaction to be rolled back", timeout=10)


@pytest.mark.parametrize("pause", ["embed", "write"])
async def test_sigkill_during_delete_leaves_all_or_nothing_and_a_rerun_deletes(
    graphs: Callable[[], Awaitable[LightRAG]],
    conn: asyncpg.Connection,
    tmp_path: Path,
    pause: str,
) -> None:
    rag = await graphs()
    await insert(rag, sorted(DOCS))
    before = await snapshot(rag.dsn, rag.workspace)

    await kill_at_pause(tmp_path, conn, rag, pause, op="delete", ids=DELETED)
    await wait_for_rollback(conn)
    await wait_doc_locks_released(conn, rag.workspace, DELETED)
    assert await snapshot(rag.dsn, rag.workspace) == before
    await assert_consistent(conn, rag.workspace)

    result = await rag.adelete_by_doc_id(DELETED)
    assert result.deleted_ids == DELETED
    await assert_consistent(conn, rag.workspace)
    control = await graphs()
    await insert(control, sorted(set(DOCS) - set(DELETED)))
    assert await snapshot(rag.dsn, rag.workspace) == await snapshot(control.dsn, control.workspace)


@pytest.mark.parametrize("pause", ["embed", "write"])
async def test_sigkill_during_entity_merge_leaves_all_or_nothing_and_a_rerun_merges(
    graphs: Callable[[], Awaitable[LightRAG]],
    conn: asyncpg.Connection,
    tmp_path: Path,
    pause: str,
) -> None:
    rag = await graphs()
    await insert(rag, sorted(DOCS))
    before = await snapshot(rag.dsn, rag.workspace)

    await kill_at_pause(tmp_path, conn, rag, pause, op="merge", sources=SOURCES, target=TARGET)
    await wait_for_rollback(conn)
    assert await snapshot(rag.dsn, rag.workspace) == before
    await assert_consistent(conn, rag.workspace)

    await rag.amerge_entities(SOURCES, TARGET)
    await assert_consistent(conn, rag.workspace)
    names = {r["name"] for r in await conn.fetch(f"SELECT name FROM {rag.workspace}.entities")}
    assert TARGET in names and not names & set(SOURCES)
    control = await graphs()
    await insert(control, sorted(DOCS))
    await control.amerge_entities(SOURCES, TARGET)
    assert await snapshot(rag.dsn, rag.workspace) == await snapshot(control.dsn, control.workspace)
