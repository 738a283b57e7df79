"""Many documents naming the same entities: contention slows indexing, never fails it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg.errors import ConcurrentUpdate
from lightrag_pg.index.rounds import LOCKED_ROUNDS, OPTIMISTIC_ROUNDS, settle
from lightrag_pg.index.writer import MergeStats

from .crash_support import Worker, assert_consistent, drop_if_exists, snapshot, spec
from .fake_openai import FakeOpenAI
from .insert_worker import build_rag

pytestmark = pytest.mark.slow

POPULAR = ["Alice", "Bob", "Carol", "Acme", "Globex"]
CONTENDED_DOCS = [
    f"Alice met Bob in meeting {i}. Carol joined Acme and Globex on day {i}." for i in range(32)
]
SETTINGS: dict[str, Any] = {"max_parallel_insert": 32, "force_llm_summary_on_merge": 2, "llm_max_async": 32}


def without_descriptions(snap: dict[str, Any]) -> dict[str, Any]:
    """A snapshot with descriptions left out: summaries depend on the order merges ran in."""
    return {
        **snap,
        "entities": [e[:4] for e in snap["entities"]],
        "relations": [(*r[:5], r[6]) for r in snap["relations"]],
    }


async def assert_vectors_match_rows(conn: asyncpg.Connection, ws: str) -> None:
    """Every vector was computed from its row's current text (no stale vector after a merge)."""
    stale_entities = await conn.fetch(
        f"SELECT e.name FROM {ws}.entities e JOIN {ws}.entity_vectors v USING (name)"
        f" WHERE v.content <> e.name || E'\\n' || e.description"
    )
    assert stale_entities == []
    stale_relations = await conn.fetch(
        f"SELECT r.src, r.tgt FROM {ws}.relations r JOIN {ws}.relation_vectors v USING (src, tgt)"
        f" WHERE v.content <> r.keywords || E'\\t' || r.src || E'\\n' || r.tgt || E'\\n' || r.description"
    )
    assert stale_relations == []


async def ingest_serially(dsn: str, ws: str, llm_server: FakeOpenAI) -> None:
    """The control: the same documents, one at a time."""
    settings = {**SETTINGS, "max_parallel_insert": 1}
    async with build_rag(dsn, ws, llm_server.base_url, **settings) as control:
        result = await control.ainsert(CONTENDED_DOCS)
    assert result.progress.docs_done == len(CONTENDED_DOCS)


async def assert_like_serial_build(conn: asyncpg.Connection, ws: str, control_ws: str) -> None:
    await assert_consistent(conn, ws)
    await assert_vectors_match_rows(conn, ws)
    assert {r[0] for r in await conn.fetch(f"SELECT DISTINCT status FROM {ws}.doc_status")} == {"processed"}
    got, control = (
        without_descriptions(await snapshot(conn, ws)),
        without_descriptions(await snapshot(conn, control_ws)),
    )
    for key in control:
        assert got[key] == control[key], key
    assert {e[0] for e in got["entities"]} == set(POPULAR)
    weight = await conn.fetchval(f"SELECT weight FROM {ws}.relations WHERE src = 'Alice' AND tgt = 'Bob'")
    assert weight == len(CONTENDED_DOCS)


async def test_documents_sharing_popular_entities_all_succeed(
    dsn: str, conn: asyncpg.Connection, workspace_name: str, llm_server: FakeOpenAI
) -> None:
    ws, control_ws = workspace_name, f"{workspace_name}_ctl"
    try:
        await ingest_serially(dsn, control_ws, llm_server)
        llm_server.delay = 0.02
        async with build_rag(dsn, ws, llm_server.base_url, **SETTINGS) as rag:
            result = await asyncio.wait_for(rag.ainsert(CONTENDED_DOCS), 120)
        llm_server.delay = 0.0
        assert result.progress.failures == {}
        assert result.progress.docs_done == len(CONTENDED_DOCS)
        await assert_like_serial_build(conn, ws, control_ws)
        locked = await conn.fetchval(f"SELECT sum((metadata->>'locked_rounds')::int) FROM {ws}.doc_status")
        assert locked > 0, "the contention did not reach the locked merge"
    finally:
        llm_server.delay = 0.0
        await drop_if_exists(conn, ws)
        await drop_if_exists(conn, control_ws)


async def test_three_processes_on_popular_entities_all_succeed(
    dsn: str, conn: asyncpg.Connection, workspace_name: str, llm_server: FakeOpenAI, tmp_path: Path
) -> None:
    ws, control_ws = workspace_name, f"{workspace_name}_ctl"
    workers: list[Worker] = []
    try:
        await ingest_serially(dsn, control_ws, llm_server)
        # The workspace exists before the workers start, so they contend on merges only.
        async with build_rag(dsn, ws, llm_server.base_url):
            pass
        llm_server.delay = 0.02
        for k in range(3):
            texts = CONTENDED_DOCS[k::3]
            workers.append(
                await Worker.start(tmp_path, f"w{k}", spec(dsn, ws, llm_server, texts, settings=SETTINGS))
            )
        try:
            codes = await asyncio.wait_for(asyncio.gather(*(w.proc.wait() for w in workers)), 120)
        except asyncio.TimeoutError:
            pytest.fail("the workers did not finish within 120 s\n" + "\n".join(w.output() for w in workers))
        llm_server.delay = 0.0
        assert codes == [0, 0, 0], "\n".join(w.output() for w in workers)
        assert all(w.result()["failures"] == {} for w in workers)
        await assert_like_serial_build(conn, ws, control_ws)
    finally:
        llm_server.delay = 0.0
        for w in workers:
            await w.kill()
        await drop_if_exists(conn, ws)
        await drop_if_exists(conn, control_ws)


async def test_rows_written_in_the_last_allowed_round_are_done() -> None:
    rounds: list[str] = []

    def round_fn(kind: str, succeed_at: int) -> Any:
        async def run(pending: dict[str, int]) -> set[str]:
            rounds.append(kind)
            return set(pending) if len(rounds) == succeed_at else set()

        return run

    last = OPTIMISTIC_ROUNDS + LOCKED_ROUNDS
    stats = MergeStats()
    written = await settle(
        "doc", {"A": 1, "B": 2}, round_fn("optimistic", last), round_fn("locked", last), stats
    )
    assert written == 2 and stats.rounds == last and stats.locked_rounds == LOCKED_ROUNDS
    assert rounds == ["optimistic"] * OPTIMISTIC_ROUNDS + ["locked"] * LOCKED_ROUNDS

    rounds.clear()
    with pytest.raises(ConcurrentUpdate, match="2 rows kept changing"):
        await settle("doc", {"A": 1, "B": 2}, round_fn("optimistic", 0), round_fn("locked", 0), MergeStats())
