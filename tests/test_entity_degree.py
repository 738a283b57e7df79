"""Stored entity degrees (migration 0010): every write path keeps ``entities.degree`` equal
to the counted relations, and a degree change never rewrites the AGE vertex."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.doctor import check, repair
from lightrag_pg.db.migrate import MigrationTarget, upgrade
from lightrag_pg.db.workspace import create_workspace, drop_workspace
from lightrag_pg.testing import hashed_embedding_func
from tests.test_deletion import insert
from tests.test_graph_edit import CUSTOM_KG, graphs  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]

WRONG = """
SELECT e.name, e.degree, coalesce(d.n, 0) AS counted
FROM {ws}.entities e
LEFT JOIN (
    SELECT name, count(*) AS n
    FROM (SELECT src AS name FROM {ws}.relations UNION ALL SELECT tgt FROM {ws}.relations) t
    GROUP BY name
) d USING (name)
WHERE e.degree <> coalesce(d.n, 0)
ORDER BY e.name
"""


async def wrong_degrees(dsn: str, ws: str) -> list[tuple[str, int, int]]:
    """Entities whose stored degree differs from their counted relations (none when right)."""
    conn = await asyncpg.connect(dsn)
    try:
        return [tuple(r) for r in await conn.fetch(WRONG.format(ws=ws))]
    finally:
        await conn.close()


async def degree(rag: LightRAG, name: str) -> int:
    conn = await asyncpg.connect(rag.dsn)
    try:
        return int(await conn.fetchval(f"SELECT degree FROM {rag.workspace}.entities WHERE name = $1", name))
    finally:
        await conn.close()


async def test_every_write_path_keeps_degrees_counted(graphs: Callable[..., Any]) -> None:  # noqa: F811
    rag: LightRAG = await graphs()
    ws = rag.workspace

    async def consistent() -> None:
        assert await wrong_degrees(rag.dsn, ws) == []

    await insert(rag, ["d0", "d1", "d2", "d3"])
    await consistent()
    assert await degree(rag, "Acme") > 1
    await rag.acreate_entity("Zeta Corp", {"entity_type": "Organization", "description": "A maker."})
    await rag.acreate_relation("Zeta Corp", "Acme", {"description": "Supplies Acme.", "keywords": "supply"})
    await rag.acreate_relation("Zeta Corp", "Bob", {"description": "Employs Bob.", "keywords": "work"})
    assert await degree(rag, "Zeta Corp") == 2
    await consistent()
    await rag.aedit_relation("Zeta Corp", "Acme", {"weight": 3.0})
    await rag.aedit_entity("Zeta Corp", {"description": "A maker of parts."})
    await consistent()
    await rag.aedit_entity("Bob", {"entity_name": "Robert"})  # rename: relations move
    await consistent()
    await rag.amerge_entities(["Robert", "Zeta Corp"], "Globex")  # merge: pairs fold, self-loops go
    await consistent()
    await rag.adelete_by_relation("Acme", "Globex")
    await consistent()
    await rag.adelete_by_entity("Paris")  # its relations go by cascade
    await consistent()
    await rag.ainsert_custom_kg(CUSTOM_KG, full_doc_id="kg-1")
    await consistent()
    await rag.adelete_by_doc_id("d1")  # rebuilt from the remaining fragments, or deleted
    await consistent()
    await insert(rag, ["d4", "d5"])
    await rag.adelete_by_doc_id("kg-1")
    await consistent()
    await rag.areembed(hashed_embedding_func(16))
    await consistent()
    conn = await asyncpg.connect(rag.dsn)
    try:
        assert (await check(conn, ws)).ok
        await conn.execute(f"UPDATE {ws}.entities SET degree = degree + 5 WHERE name = 'Acme'")
        report = await check(conn, ws)
        assert report.wrong_degrees == ["Acme"]
        outcome = await repair(conn, ws)
        assert outcome.before.wrong_degrees == ["Acme"] and outcome.after.ok
    finally:
        await conn.close()
    await consistent()


async def _vertex(conn: asyncpg.Connection, ws: str, name: str) -> tuple[str, str]:
    """The AGE vertex row of entity ``name``: its tuple's ctid and xmin (which change
    whenever the row is written) and its properties."""
    rows = await conn.fetch(
        "SELECT ctid::text || '/' || xmin::text AS version, properties::text AS props "
        f'FROM "{ws}_kg"."entity"'
    )
    (found,) = [(r["version"], r["props"]) for r in rows if f'"entity_id": "{name}"' in r["props"]]
    return found


async def test_a_degree_change_does_not_rewrite_the_vertex(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    try:
        await conn.execute(f"INSERT INTO {ws}.entities (name) SELECT unnest($1::text[])", list("abcd"))
        await conn.execute(f"INSERT INTO {ws}.relations (src, tgt) VALUES ('a', 'b')")
        before = await _vertex(conn, ws, "a")
        await conn.execute(f"INSERT INTO {ws}.relations (src, tgt) VALUES ('a', 'c'), ('a', 'd'), ('c', 'd')")
        await conn.execute(f"DELETE FROM {ws}.relations WHERE src = 'a' AND tgt = 'b'")
        degrees = await conn.fetch(f"SELECT name, degree FROM {ws}.entities ORDER BY name")
        assert [tuple(r) for r in degrees] == [("a", 2), ("b", 0), ("c", 2), ("d", 2)]
        assert await _vertex(conn, ws, "a") == before
        await conn.execute(f"UPDATE {ws}.entities SET description = 'First.' WHERE name = 'a'")
        version, props = await _vertex(conn, ws, "a")
        assert version != before[0] and '"description": "First."' in props
        await conn.execute(f"UPDATE {ws}.relations SET tgt = 'b' WHERE src = 'a' AND tgt = 'c'")
        await conn.execute(f"DELETE FROM {ws}.entities WHERE name = 'd'")  # cascade: (a, d), (c, d)
        degrees = await conn.fetch(f"SELECT name, degree FROM {ws}.entities ORDER BY name")
        assert [tuple(r) for r in degrees] == [("a", 1), ("b", 1), ("c", 0)]
        assert await wrong_degrees(dsn, ws) == []
    finally:
        await drop_workspace(conn, ws)


async def alembic(dsn: str, ws: str, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "alembic", "-x", f"workspace={ws}", *args,
        cwd=ROOT, env={**os.environ, "LIGHTRAG_PG_DSN": dsn},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()


async def _mirror_trigger(conn: asyncpg.Connection, ws: str) -> str | None:
    return await conn.fetchval(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = $1::regclass "
        "AND tgname = 'entities_mirror_to_graph'",
        f"{ws}.entities",
    )


@pytest.mark.slow
async def test_the_migration_backfills_degrees_and_downgrades(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    """0010 counts the degrees of existing entities in one statement and narrows the mirror
    trigger; a workspace without the mirror migrates too; the downgrade restores 0009."""
    ws = workspace_name
    await upgrade(dsn, MigrationTarget(ws, 8), "0009")
    try:
        await conn.execute(f"INSERT INTO {ws}.entities (name) SELECT unnest($1::text[])", list("abcz"))
        await conn.execute(f"INSERT INTO {ws}.relations (src, tgt) VALUES ('a', 'b'), ('a', 'c'), ('b', 'c')")
        await alembic(dsn, ws, "upgrade", "head")
        degrees = await conn.fetch(f"SELECT name, degree FROM {ws}.entities ORDER BY name")
        assert [tuple(r) for r in degrees] == [("a", 2), ("b", 2), ("c", 2), ("z", 0)]
        assert "UPDATE OF id, name, entity_type, description" in (await _mirror_trigger(conn, ws) or "")
        await alembic(dsn, ws, "downgrade", "0009")
        assert not await conn.fetchval(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'degree'",
            f"{ws}.entities",
        )
        assert not await conn.fetchval(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal "
            "AND tgname LIKE 'relations_degree%'",
            f"{ws}.relations",
        )
        assert "AFTER INSERT OR DELETE OR UPDATE ON" in (await _mirror_trigger(conn, ws) or "")
        await conn.execute(f"DROP TRIGGER entities_mirror_to_graph ON {ws}.entities")  # no mirror
        await conn.execute(f"INSERT INTO {ws}.relations (src, tgt) VALUES ('c', 'z')")
        await alembic(dsn, ws, "upgrade", "head")
        assert await _mirror_trigger(conn, ws) is None
        assert await wrong_degrees(dsn, ws) == []
        assert await conn.fetchval(f"SELECT degree FROM {ws}.entities WHERE name = 'z'") == 1
    finally:
        await drop_workspace(conn, ws)
