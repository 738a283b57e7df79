"""Changing the embedding model in place: stage with the new model, swap in one transaction."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from lightrag_pg import DimensionMismatch, EmbeddingFunc, LightRAG, QueryParam, ReembedConflict
from lightrag_pg.cli import main
from lightrag_pg.db.advisory import TRY_LOCK, UNLOCK, lock_key
from lightrag_pg.db.embedded import sqlalchemy_url
from lightrag_pg.db.workspace import drop_workspace, read_info, workspace_exists
from lightrag_pg.errors import EmbeddingError
from lightrag_pg.index.reembed import discard_reembed
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors, scripted_llm

from .crash_support import ROOT, Worker, wait_until
from .migration_drift import schema_drift

OLD, NEW = 32, 48
VECTOR_TABLES = ("entity_vectors", "relation_vectors", "chunk_vectors")
DOCS = [
    "Alice works at Acme in Paris. Bob visits Berlin often.",
    "Carol founded Globex. Quantum Lab hired Carol in Berlin.",
    "Paris is where Alice met Bob for the first time.",
    "Acme and Globex compete in Berlin. Carol met Alice at Quantum Lab.",
]
LATE_DOC = "Bob and Carol opened an office of Acme in Paris."
QUESTIONS = [
    ("Where does Alice work?", "local"),
    ("Acme compete Globex", "global"),
    ("Quantum Lab hired Carol", "hybrid"),
    ("Where did Alice meet Bob?", "naive"),
]


class Counting:
    """A hashed embedding of ``dim`` dimensions that records the texts it embeds.

    ``before_call(n)`` (optional, async) runs before the n-th call (from 1); it
    may raise to make that call fail.
    """

    def __init__(self, dim: int, before_call: Callable[[int], Any] | None = None) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []
        self.before_call = before_call

    async def __call__(self, texts: list[str]) -> np.ndarray:
        if self.before_call is not None:
            await self.before_call(len(self.calls) + 1)
        self.calls.append(list(texts))
        return hashed_vectors(texts, self.dim)

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def func(self) -> EmbeddingFunc:
        return EmbeddingFunc(embedding_dim=self.dim, func=self, model_name=f"hashed-bow-{self.dim}")


async def start_worker(tmp_path: Path, spec: dict[str, Any]) -> Worker:
    out, err = tmp_path / "reembed.out", tmp_path / "reembed.err"
    with out.open("wb") as o, err.open("wb") as e:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.reembed_worker",
            json.dumps(spec),
            cwd=ROOT,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=o,
            stderr=e,
        )
    return Worker(proc, out, err)


def build(dsn: str, ws: str, dim: int) -> LightRAG:
    return LightRAG(
        dsn=dsn, workspace=ws, llm_model_func=scripted_llm, embedding_func=hashed_embedding_func(dim)
    )


@pytest_asyncio.fixture
async def workspaces(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> AsyncIterator[Callable[[str], str]]:
    """Names of this test's workspaces (``name("control")``), dropped afterwards."""
    made: list[str] = []

    def name(suffix: str) -> str:
        made.append(f"{workspace_name}_{suffix}")
        return made[-1]

    yield name
    for ws in made:
        if await workspace_exists(conn, ws):
            await drop_workspace(conn, ws)


@pytest_asyncio.fixture
async def old_rag(dsn: str, workspaces: Callable[[str], str]) -> AsyncIterator[LightRAG]:
    """A workspace indexed with the 32-dimension hashed embedding."""
    rag = build(dsn, workspaces("old"), OLD)
    await rag.initialize()
    result = await rag.ainsert(DOCS)
    assert result.progress.docs_done == len(DOCS)
    yield rag
    await rag.finalize()


async def answers(rag: LightRAG) -> list[dict[str, Any]]:
    """What each question retrieves: entity names, relation pairs, chunk texts."""
    out = []
    for question, mode in QUESTIONS:
        data = (await rag.aquery_data(question, QueryParam(mode=mode)))["data"]
        out.append(
            {
                "entities": [e["entity_name"] for e in data["entities"]],
                "relations": [(r["src_id"], r["tgt_id"]) for r in data["relationships"]],
                "chunks": [c["content"] for c in data["chunks"]],
            }
        )
    return out


async def vector_rows(conn: asyncpg.Connection, ws: str) -> dict[str, list[tuple[Any, ...]]]:
    return {
        "entities": [
            tuple(r)
            for r in await conn.fetch(
                f"SELECT name, content, embedding::text FROM {ws}.entity_vectors ORDER BY 1"
            )
        ],
        "relations": [
            tuple(r)
            for r in await conn.fetch(
                f"SELECT src, tgt, content, embedding::text FROM {ws}.relation_vectors ORDER BY 1, 2"
            )
        ],
        "chunks": [
            tuple(r)
            for r in await conn.fetch(f"SELECT chunk_id, embedding::text FROM {ws}.chunk_vectors ORDER BY 1")
        ],
    }


async def vector_catalog(conn: asyncpg.Connection, ws: str) -> list[tuple[str, ...]]:
    """Constraints and indexes of the vector tables, with the schema name taken out."""
    rows = await conn.fetch(
        "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k"
        " JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = ANY($2::text[])"
        " UNION ALL SELECT tablename, indexname, indexdef FROM pg_indexes"
        " WHERE schemaname = $1 AND tablename = ANY($2::text[]) ORDER BY 1, 2, 3",
        ws,
        list(VECTOR_TABLES),
    )
    return [tuple(str(x).replace(ws, "WS") for x in r) for r in rows]


async def vector_count(conn: asyncpg.Connection, ws: str) -> int:
    return sum([await conn.fetchval(f"SELECT count(*) FROM {ws}.{t}") for t in VECTOR_TABLES])


async def fresh(dsn: str, ws: str, docs: list[str], dim: int = NEW) -> LightRAG:
    rag = build(dsn, ws, dim)
    await rag.initialize()
    await rag.ainsert(docs)
    return rag


@pytest.mark.slow
async def test_reembed_gives_the_workspace_a_fresh_build_with_the_new_model_would_have(
    old_rag: LightRAG, dsn: str, conn: asyncpg.Connection, workspaces: Callable[[str], str]
) -> None:
    ws = old_rag.workspace
    total = await vector_count(conn, ws)
    new = Counting(NEW)
    result = await old_rag.areembed(new.func(), batch_size=5)
    assert (result.previous_dim, result.embedding_dim, result.embedding_model) == (OLD, NEW, "hashed-bow-48")
    assert result.embedded == result.vectors == total == len(new.texts) == len(set(new.texts))
    assert not result.resumed and result.rounds == 1
    info = await read_info(conn, ws)
    assert info is not None and (info.embedding_dim, info.embedding_model) == (NEW, "hashed-bow-48")

    control = await fresh(dsn, workspaces("control"), DOCS)
    try:
        assert await vector_rows(conn, ws) == await vector_rows(conn, control.workspace)
        assert await vector_catalog(conn, ws) == await vector_catalog(conn, control.workspace)
        assert await answers(old_rag) == await answers(control)
    finally:
        await control.finalize()
    reopened = build(dsn, ws, NEW)
    async with reopened:
        assert await answers(reopened) == await answers(old_rag)
    with pytest.raises(DimensionMismatch):
        await build(dsn, ws, OLD).initialize()

    tables = {r[0] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", ws)}
    assert not {t for t in tables if t.endswith("_next")}
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.reembed_state") == 0
    engine = create_async_engine(sqlalchemy_url(dsn), poolclass=NullPool)
    try:
        async with engine.begin() as sa_conn:
            assert await sa_conn.run_sync(schema_drift(ws, NEW)) == []
    finally:
        await engine.dispose()
    again = Counting(NEW)
    assert not (await old_rag.areembed(again.func())).changed and again.calls == []


@pytest.mark.slow
async def test_queries_and_inserts_go_on_with_the_old_model_while_vectors_are_staged(
    old_rag: LightRAG, dsn: str, conn: asyncpg.Connection, workspaces: Callable[[str], str]
) -> None:
    ws = old_rag.workspace
    before = await answers(old_rag)
    seen: dict[str, Any] = {}

    async def midway(call: int) -> None:
        if call == 2:
            seen["staged"] = await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors_next")
            seen["answers"] = await answers(old_rag)
            seen["insert"] = await old_rag.ainsert(LATE_DOC)

    new = Counting(NEW, midway)
    result = await old_rag.areembed(new.func(), batch_size=4)
    assert seen["staged"] == 4 and seen["answers"] == before
    assert seen["insert"].progress.docs_done == 1
    assert len(new.texts) == len(set(new.texts)) == result.embedded
    control = await fresh(dsn, workspaces("control"), [*DOCS, LATE_DOC])
    try:
        assert await vector_rows(conn, ws) == await vector_rows(conn, control.workspace)
        assert await answers(old_rag) == await answers(control)
    finally:
        await control.finalize()


@pytest.mark.slow
async def test_another_model_midway_is_refused_and_a_resume_embeds_only_what_is_not_current(
    old_rag: LightRAG, dsn: str, conn: asyncpg.Connection, workspaces: Callable[[str], str]
) -> None:
    ws = old_rag.workspace

    async def fail_third(call: int) -> None:
        if call == 3:
            raise EmbeddingError("the endpoint went away")

    first = Counting(NEW, fail_third)
    with pytest.raises(EmbeddingError, match="went away"):
        await old_rag.areembed(first.func(), batch_size=3)
    staged = await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors_next")
    assert staged == len(first.texts) == 6

    other = Counting(64)
    with pytest.raises(ReembedConflict, match=r"'hashed-bow-48' \(48 dimensions\).*--abort"):
        await old_rag.areembed(other.func())
    assert other.calls == []
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors_next") == staged
    state = await conn.fetchrow(f"SELECT embedding_model, embedding_dim FROM {ws}.reembed_state")
    assert tuple(state) == ("hashed-bow-48", NEW)

    # Still the old model's workspace: it answers and takes documents, which change staged texts.
    assert (await old_rag.aquery_data("Where does Alice work?", QueryParam(mode="local")))["data"]["entities"]
    await old_rag.ainsert(LATE_DOC)
    stale = await conn.fetch(
        f"SELECT v.content FROM {ws}.entity_vectors_next n JOIN {ws}.entity_vectors v USING (name)"
        " WHERE n.content <> v.content"
    )
    assert stale

    second = Counting(NEW)
    result = await old_rag.areembed(second.func(), batch_size=3)
    assert result.resumed and result.embedded == len(second.texts)
    assert not set(first.texts) & set(second.texts)
    assert {r["content"] for r in stale} <= set(second.texts)
    assert result.embedded == await vector_count(conn, ws) - staged + len(stale)
    control = await fresh(dsn, workspaces("control"), [*DOCS, LATE_DOC])
    try:
        assert await vector_rows(conn, ws) == await vector_rows(conn, control.workspace)
    finally:
        await control.finalize()


async def test_discarding_a_staged_reembed_leaves_the_old_model_in_place(
    old_rag: LightRAG, conn: asyncpg.Connection
) -> None:
    ws = old_rag.workspace
    before = await vector_rows(conn, ws)

    async def fail_second(call: int) -> None:
        if call == 2:
            raise EmbeddingError("stop")

    with pytest.raises(EmbeddingError):
        await old_rag.areembed(Counting(NEW, fail_second).func(), batch_size=3)
    state = await discard_reembed(old_rag.pool, old_rag.dsn, ws)
    assert state is not None and state.embedding_model == "hashed-bow-48"
    assert await discard_reembed(old_rag.pool, old_rag.dsn, ws) is None
    tables = {r[0] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", ws)}
    assert not {t for t in tables if t.endswith("_next")}
    assert await vector_rows(conn, ws) == before
    result = await old_rag.areembed(Counting(64).func())
    assert result.embedding_dim == 64 and not result.resumed


@pytest.mark.slow
async def test_a_reembed_killed_mid_staging_is_finished_by_a_rerun_that_embeds_nothing_twice(
    old_rag: LightRAG, dsn: str, conn: asyncpg.Connection, workspaces: Callable[[str], str], tmp_path: Path
) -> None:
    ws = old_rag.workspace
    log = tmp_path / "embedded.jsonl"
    worker = await start_worker(
        tmp_path,
        {
            "dsn": dsn,
            "workspace": ws,
            "old_dim": OLD,
            "new_dim": NEW,
            "batch_size": 2,
            "log": str(log),
            "hang_at": 3,
        },
    )
    try:

        async def two_batches_staged() -> bool:
            if not await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", f"{ws}.entity_vectors_next"):
                return False
            return await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors_next") == 4

        await wait_until(two_batches_staged, "two staged batches", timeout=60, worker=worker)
        assert len(log.read_text().splitlines()) == 2
        await worker.kill()
    finally:
        await worker.kill()
    killed = [t for line in log.read_text().splitlines() for t in json.loads(line)]
    assert len(killed) == 4
    assert await old_rag.aquery_data("Where does Alice work?", QueryParam(mode="local"))

    key = lock_key("reembed", ws)

    async def lock_free() -> bool:
        if not await conn.fetchval(TRY_LOCK, key):
            return False
        await conn.execute(UNLOCK, key)
        return True

    await wait_until(lock_free, "the killed worker's re-embed lock to be released", timeout=10)
    rerun = Counting(NEW)
    result = await old_rag.areembed(rerun.func(), batch_size=2)
    assert result.resumed
    assert not set(killed) & set(rerun.texts)
    assert len(killed) + len(rerun.texts) == result.vectors == await vector_count(conn, ws)
    control = await fresh(dsn, workspaces("control"), DOCS)
    try:
        assert await vector_rows(conn, ws) == await vector_rows(conn, control.workspace)
    finally:
        await control.finalize()


@pytest.mark.slow
async def test_the_reembed_command_moves_a_workspace_to_the_model_of_the_environment(
    old_rag: LightRAG,
    dsn: str,
    conn: asyncpg.Connection,
    workspaces: Callable[[str], str],
    cli_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ws = old_rag.workspace
    base = ["--dsn", dsn, "--workspace", ws]
    total = await vector_count(conn, ws)
    assert await asyncio.to_thread(main, [*base, "reembed", "--abort"]) == 0
    assert "no re-embed in progress" in capsys.readouterr().out

    assert await asyncio.to_thread(main, [*base, "reembed", "--batch-size", "3"]) == 0
    out = capsys.readouterr().out
    assert f"{total} vectors re-embedded from 'hashed-bow-32' (32 dimensions) to 'fake-embedding' (64" in out
    info = await read_info(conn, ws)
    assert info is not None and (info.embedding_dim, info.embedding_model) == (64, "fake-embedding")

    assert await asyncio.to_thread(main, [*base, "reembed", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["changed"] is False and again["embedded"] == 0

    control = await fresh(dsn, workspaces("control"), DOCS, 64)
    reopened = build(dsn, ws, 64)
    try:
        await reopened.initialize()
        assert await answers(reopened) == await answers(control)
    finally:
        await reopened.finalize()
        await control.finalize()

    assert await asyncio.to_thread(main, ["--dsn", dsn, "--workspace", "no_such_ws", "reembed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: workspace 'no_such_ws' does not exist") and err.count("\n") == 1


async def test_an_offline_workspace_is_reembedded_as_an_offline_build_with_the_new_model(
    dsn: str, conn: asyncpg.Connection, workspaces: Callable[[str], str]
) -> None:
    """Offline relation vectors are composed from their parts' vectors, not embedded
    from their text: a re-embed that embedded the stored text gave them other vectors
    than indexing with the new model does. ``embedded`` counts the texts sent to the
    model (it counted the rows staged)."""
    pytest.importorskip("spacy")

    def offline(ws: str, dim: int) -> LightRAG:
        return LightRAG(dsn=dsn, workspace=ws, embedding_func=hashed_embedding_func(dim), extractor="nlp")

    old, control = offline(workspaces("old"), OLD), offline(workspaces("control"), NEW)
    async with old, control:
        await old.ainsert(DOCS)
        await control.ainsert(DOCS)
        new = Counting(NEW)
        result = await old.areembed(new.func(), batch_size=5)
        assert result.vectors == await vector_count(conn, old.workspace)
        assert result.embedded == len(new.texts) < result.vectors, "texts sent, not rows staged"
        rows = await vector_rows(conn, old.workspace)
        assert rows["relations"] and all(c.count("\n") == 1 for _, _, c, _ in rows["relations"]), (
            "short texts"
        )
        assert rows == await vector_rows(conn, control.workspace)
