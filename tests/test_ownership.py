"""Workspaces never take over, write into or drop schemas and graphs lightrag_pg did not create."""

from __future__ import annotations

import asyncpg
import pytest

from lightrag_pg import WorkspaceConflict
from lightrag_pg.db.workspace import create_workspace, drop_workspace, list_workspaces, migrate_all
from lightrag_pg.errors import WorkspaceNotFound


async def _create_graph(dsn: str, graph: str, vertices: int = 0) -> None:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "ag_catalog, public"})
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS age")
        await conn.execute("LOAD 'age'")
        await conn.execute("SELECT create_graph($1)", graph)
        for i in range(vertices):
            await conn.execute(
                f"SELECT * FROM cypher('{graph}', $$ CREATE (:customer {{n: {i}}}) $$) AS (v agtype)"
            )
    finally:
        await conn.close()


async def _graph_vertices(conn: asyncpg.Connection, graph: str) -> int:
    return await conn.fetchval(f'SELECT count(*) FROM "{graph}"._ag_label_vertex')


async def _drop_graph(conn: asyncpg.Connection, graph: str) -> None:
    await conn.execute("SELECT ag_catalog.drop_graph($1, true)", graph)


async def _schemas(conn: asyncpg.Connection, names: list[str]) -> int:
    return await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)", names)


async def _tables(conn: asyncpg.Connection, schema: str) -> set[str]:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
    return {r[0] for r in rows}


async def test_a_foreign_schema_is_refused_and_untouched(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await conn.execute(
        f"CREATE SCHEMA {ws}; CREATE TABLE {ws}.orders (id int); INSERT INTO {ws}.orders VALUES (1), (2)"
    )
    try:
        with pytest.raises(WorkspaceConflict, match=f"schema '{ws}' already exists and was not created"):
            await create_workspace(conn, dsn, ws, 8)
        assert await _tables(conn, ws) == {"orders"}
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.orders") == 2
        assert ws not in await list_workspaces(conn)
        assert await _schemas(conn, [f"{ws}_kg"]) == 0
    finally:
        await conn.execute(f"DROP SCHEMA {ws} CASCADE")


async def test_dropping_a_foreign_schema_is_refused(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await conn.execute(
        f"CREATE SCHEMA {ws}; CREATE TABLE {ws}.workspace_info (note text); "
        f"CREATE TABLE {ws}.orders (id int); INSERT INTO {ws}.orders VALUES (1)"
    )
    try:
        assert ws not in await list_workspaces(conn)
        with pytest.raises(WorkspaceConflict, match=f"refusing to drop schema '{ws}'"):
            await drop_workspace(conn, ws)
        assert await _tables(conn, ws) == {"workspace_info", "orders"}
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.orders") == 1
    finally:
        await conn.execute(f"DROP SCHEMA {ws} CASCADE")


async def test_a_foreign_graph_named_like_the_workspace_graph_is_neither_adopted_nor_dropped(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    graph = f"{ws}_kg"
    await _create_graph(dsn, graph, vertices=3)
    try:
        with pytest.raises(WorkspaceConflict, match=f"AGE graph \\(or schema\\) '{graph}' already exists"):
            await create_workspace(conn, dsn, ws, 8)
        assert await _schemas(conn, [ws]) == 0
        with pytest.raises(WorkspaceNotFound):
            await drop_workspace(conn, ws)
        assert await _graph_vertices(conn, graph) == 3
    finally:
        await _drop_graph(conn, graph)


async def test_a_graph_named_exactly_like_the_workspace_is_a_conflict(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await _create_graph(dsn, ws, vertices=1)
    try:
        before = await _tables(conn, ws)
        with pytest.raises(WorkspaceConflict, match=f"belongs to the AGE graph '{ws}'"):
            await create_workspace(conn, dsn, ws, 8)
        assert await _tables(conn, ws) == before
        assert "entities" not in before
        with pytest.raises(WorkspaceConflict):
            await drop_workspace(conn, ws)
        assert await _graph_vertices(conn, ws) == 1
    finally:
        await _drop_graph(conn, ws)


async def test_workspaces_created_before_the_marker_are_recognised_and_marked(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    marker = "SELECT obj_description(to_regnamespace($1), 'pg_namespace')"
    assert await conn.fetchval(marker, ws) == "lightrag_pg workspace"
    assert await conn.fetchval(marker, f"{ws}_kg") == "lightrag_pg workspace graph"
    await conn.execute(f'COMMENT ON SCHEMA {ws} IS NULL; COMMENT ON SCHEMA "{ws}_kg" IS NULL')
    await conn.execute(f"UPDATE {ws}.alembic_version SET version_num = '0003'")
    assert ws in await list_workspaces(conn)
    await migrate_all(conn, dsn)
    assert await conn.fetchval(marker, ws) == "lightrag_pg workspace"
    assert await conn.fetchval(marker, f"{ws}_kg") == "lightrag_pg workspace graph"
    await conn.execute(f'COMMENT ON SCHEMA {ws} IS NULL; COMMENT ON SCHEMA "{ws}_kg" IS NULL')
    await drop_workspace(conn, ws)
    assert (
        await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)", [ws, f"{ws}_kg"])
        == 0
    )
