"""The doctor finds where tables, vectors, the AGE mirror and doc_status disagree, and repairs it."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.cli import main
from lightrag_pg.db.advisory import TRY_LOCK, lock_key
from lightrag_pg.db.doctor import check, repair
from lightrag_pg.testing import StatementCounter

DOCS = ["Alice met Bob in Paris. Alice works at Acme.", "Bob joined Globex in Berlin."]


async def _cypher(dsn: str, graph: str, query: str, params: dict[str, str]) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "ag_catalog, public"})
    try:
        await conn.execute("LOAD 'age'")
        return await conn.fetch(
            f"SELECT * FROM cypher('{graph}', $$ {query} $$, $1) AS (v agtype)", json.dumps(params)
        )
    finally:
        await conn.close()


async def _graph_counts(conn: asyncpg.Connection, ws: str) -> tuple[int, int]:
    v = await conn.fetchval(f'SELECT count(*) FROM "{ws}_kg"."entity"')
    e = await conn.fetchval(f'SELECT count(*) FROM "{ws}_kg"."DIRECTED"')
    return v, e


async def test_a_vertex_deleted_in_cypher_is_reported_and_restored(
    llm_rag: LightRAG, conn: asyncpg.Connection, dsn: str
) -> None:
    ws = llm_rag.workspace
    await llm_rag.ainsert(DOCS)
    with StatementCounter() as counter:
        healthy = await check(conn, ws)
    assert healthy.ok and healthy.graph_enabled, healthy.summary()
    assert counter.statements == 5
    entities = await conn.fetchval(f"SELECT count(*) FROM {ws}.entities")
    relations = await conn.fetchval(f"SELECT count(*) FROM {ws}.relations")
    assert await _graph_counts(conn, ws) == (entities, relations)

    name, degree = await conn.fetchrow(
        f"SELECT name, {ws}.node_degree(name) FROM {ws}.entities ORDER BY 2 DESC, 1 LIMIT 1"
    )
    assert degree > 0
    await _cypher(
        dsn, f"{ws}_kg", "MATCH (n:entity {entity_id: $name}) DETACH DELETE n RETURN 1", {"name": name}
    )
    await conn.execute(
        f"""INSERT INTO "{ws}_kg"."entity" (id, properties)
        SELECT ag_catalog._graphid(l.id, 999999), '{{"entity_id": "ghost"}}'::ag_catalog.agtype
        FROM ag_catalog.ag_label l JOIN ag_catalog.ag_graph g ON g.graphid = l.graph
        WHERE g.name = $1 AND l.name = 'entity'""",
        f"{ws}_kg",
    )
    stuck = await conn.fetchval(
        f"UPDATE {ws}.doc_status SET status = 'processing' "
        f"WHERE id = (SELECT min(id) FROM {ws}.doc_status) RETURNING id"
    )

    report = await check(conn, ws)
    assert report.missing_vertices == [name]
    assert len(report.missing_edges) == degree
    assert all(name in pair for pair in report.missing_edges)
    assert len(report.extra_vertices) == 1 and report.extra_edges == []
    assert report.stuck_documents == [stuck]
    assert not report.ok and "1 missing vertices" in report.summary()

    outcome = await repair(conn, ws)
    assert outcome.before == report
    assert outcome.after.ok, outcome.after.summary()
    assert outcome.released_documents == [stuck]
    assert (await check(conn, ws)).ok
    assert await _graph_counts(conn, ws) == (entities, relations)
    restored = await _cypher(
        dsn, f"{ws}_kg", "MATCH (n:entity {entity_id: $name})-[r]-() RETURN count(r)", {"name": name}
    )
    assert int(restored[0]["v"]) == degree
    assert await conn.fetchval(f"SELECT status FROM {ws}.doc_status WHERE id = $1", stuck) == "pending"


async def test_rows_without_vectors_are_reported(rag: LightRAG, conn: asyncpg.Connection) -> None:
    ws = rag.workspace
    await conn.execute(f"INSERT INTO {ws}.entities (name) VALUES ('a'), ('b')")
    await conn.execute(f"INSERT INTO {ws}.relations (src, tgt) VALUES ('a', 'b')")
    report = await check(conn, ws)
    assert report.entities_without_vector == ["a", "b"]
    assert report.relations_without_vector == [("a", "b")]
    assert report.missing_vertices == [] and report.missing_edges == []
    outcome = await repair(conn, ws)
    assert outcome.after.entities_without_vector == ["a", "b"]


async def test_a_processing_document_whose_lock_is_held_is_not_stuck(
    rag: LightRAG, conn: asyncpg.Connection, dsn: str
) -> None:
    ws = rag.workspace
    await conn.execute(
        f"INSERT INTO {ws}.full_docs (id, content) VALUES ('d1', 'x'), ('d2', 'y');"
        f"INSERT INTO {ws}.doc_status (id, status, content_length) VALUES ('d1', 'processing', 1), "
        "('d2', 'processing', 1)"
    )
    holder = await asyncpg.connect(dsn)
    try:
        assert await holder.fetchval(TRY_LOCK, lock_key("doc", ws, "d1"))
        assert (await check(conn, ws)).stuck_documents == ["d2"]
        outcome = await repair(conn, ws)
        assert outcome.released_documents == ["d2"]
        assert await conn.fetchval(f"SELECT status FROM {ws}.doc_status WHERE id = 'd1'") == "processing"
    finally:
        await holder.close()


@pytest.mark.slow
async def test_doctor_command_reports_and_repairs(
    llm_rag: LightRAG, conn: asyncpg.Connection, dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = llm_rag.workspace
    await llm_rag.ainsert(DOCS)
    argv = ["--dsn", dsn, "doctor", "--workspace", ws]
    assert await asyncio.to_thread(main, argv) == 0
    assert capsys.readouterr().out == f"{ws}: ok\n"

    name = await conn.fetchval(f"SELECT name FROM {ws}.entities ORDER BY name LIMIT 1")
    await _cypher(
        dsn, f"{ws}_kg", "MATCH (n:entity {entity_id: $name}) DETACH DELETE n RETURN 1", {"name": name}
    )
    assert await asyncio.to_thread(main, argv) == 1
    assert f"{ws}: 1 missing vertices" in capsys.readouterr().out

    assert await asyncio.to_thread(main, [*argv, "--repair"]) == 0
    out = capsys.readouterr().out
    assert f"{ws}: 1 missing vertices" in out and "after repair:" in out and out.endswith(f"{ws}: ok\n")
    assert await asyncio.to_thread(main, argv) == 0
    capsys.readouterr()


def test_doctor_command_on_a_missing_workspace(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--dsn", dsn, "--workspace", "no_such_ws"]) == 2
    assert "workspace 'no_such_ws' does not exist" in capsys.readouterr().err


def test_doctor_without_a_workspace_checks_every_one(
    dsn: str, capsys: pytest.CaptureFixture[str], rag: LightRAG
) -> None:
    assert main(["doctor", "--dsn", dsn]) == 0
    assert f"{rag.workspace}: ok" in capsys.readouterr().out
    assert main(["workspaces", "--dsn", dsn]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[:2] == ["WORKSPACE", "DIM"]
    assert any(r.split()[0] == rag.workspace for r in rows)
