"""The AGE mirror: relation weights are agtype floats over the whole float8 range."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg.db.workspace import create_workspace, drop_workspace, head_revision, migrate_all, read_info

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = {"b": 1.0, "c": 2.0, "d": 9.3e18, "e": 1e308}


async def _insert_graph(conn: asyncpg.Connection, ws: str) -> None:
    await conn.execute(f"INSERT INTO {ws}.entities (name) SELECT unnest($1::text[])", ["a", *WEIGHTS])
    await conn.execute(
        f"INSERT INTO {ws}.relations (src, tgt, weight) "
        "SELECT 'a', t, w FROM unnest($1::text[], $2::float8[]) AS u(t, w)",
        list(WEIGHTS),
        list(WEIGHTS.values()),
    )


async def _cypher_weights(dsn: str, ws: str) -> dict[str, str]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "ag_catalog, public"})
    try:
        await conn.execute("LOAD 'age'")
        rows = await conn.fetch(
            f"SELECT * FROM cypher('{ws}_kg', $$ MATCH (a:entity)-[r:DIRECTED]->(b:entity) "
            "RETURN b.entity_id, r.weight $$) AS (name agtype, weight agtype)"
        )
    finally:
        await conn.close()
    return {r["name"].strip('"'): r["weight"] for r in rows}


async def test_weights_are_floats_in_cypher(dsn: str, conn: asyncpg.Connection, workspace_name: str) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    try:
        await _insert_graph(conn, ws)
        assert await _cypher_weights(dsn, ws) == {"b": "1.0", "c": "2.0", "d": "9.3e+18", "e": "1e+308"}
    finally:
        await drop_workspace(conn, ws)


@pytest.mark.slow
async def test_migrate_all_rewrites_integer_weights_of_older_workspaces(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "alembic", "-x", f"workspace={ws}", "downgrade", "0003",
            cwd=ROOT, env={**os.environ, "LIGHTRAG_PG_DSN": dsn},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        await conn.execute(f"INSERT INTO {ws}.entities (name) VALUES ('a'), ('b')")
        await conn.execute(f"INSERT INTO {ws}.relations (src, tgt, weight) VALUES ('a', 'b', 1.0)")
        assert await _cypher_weights(dsn, ws) == {"b": "1"}
        await migrate_all(conn, dsn)
        info = await read_info(conn, ws)
        assert info is not None and info.revision == head_revision()
        assert await _cypher_weights(dsn, ws) == {"b": "1.0"}
    finally:
        await drop_workspace(conn, ws)


async def test_deletes_reach_the_mirror_from_a_plain_session(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    try:
        await _insert_graph(conn, ws)
        await conn.execute(f"DELETE FROM {ws}.relations WHERE tgt = 'b'")
        await conn.execute(f"DELETE FROM {ws}.entities WHERE name = 'c'")
        assert await _cypher_weights(dsn, ws) == {"d": "9.3e+18", "e": "1e+308"}
        assert await conn.fetchval(f'SELECT count(*) FROM "{ws}_kg"."entity"') == 4
    finally:
        await drop_workspace(conn, ws)
