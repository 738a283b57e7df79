"""Alembic: the command line upgrades one workspace; metadata and migrations agree."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from lightrag_pg import LightRAG
from lightrag_pg.db.embedded import sqlalchemy_url
from lightrag_pg.db.migrate import MigrationTarget, configure_context, prepare_workspace, upgrade
from lightrag_pg.db.workspace import drop_workspace, head_revision, read_info
from tests.test_lexical import alembic

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


async def test_alembic_command_line_creates_the_whole_schema(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    env = {**os.environ, "LIGHTRAG_PG_DSN": dsn}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "alembic",
        "-x",
        f"workspace={workspace_name}",
        "-x",
        "embedding_dim=12",
        "upgrade",
        "head",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    info = await read_info(conn, workspace_name)
    assert info is not None and info.embedding_dim == 12 and info.revision == head_revision()
    assert (
        await conn.fetchval(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'alembic_version'",
            workspace_name,
        )
        == 1
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "alembic", "-x", f"workspace={workspace_name}", "-x", "embedding_dim=16",
        "upgrade", "head", cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    said = (out + err).decode()
    assert proc.returncode != 0, "another dimension for an existing workspace is refused, not 'nothing to do'"
    assert "stores 12-dimensional embeddings, not 16" in said and "Traceback" not in said


async def test_metadata_and_migrations_do_not_drift(rag: LightRAG) -> None:
    target = MigrationTarget(rag.workspace, 32)
    engine = create_async_engine(sqlalchemy_url(rag.dsn), poolclass=NullPool)
    captured: dict[str, object] = {}

    def diff(sync_conn: object) -> None:
        prepare_workspace(sync_conn, target)  # type: ignore[arg-type]

        class Capture:
            @staticmethod
            def configure(**kwargs: object) -> None:
                captured.update(kwargs)

        configure_context(Capture, sync_conn, target)  # type: ignore[arg-type]
        ctx = MigrationContext.configure(
            connection=sync_conn,  # type: ignore[arg-type]
            opts={
                "include_name": captured["include_name"],
                "compare_type": True,
                "compare_server_default": False,
            },
        )
        captured["diff"] = compare_metadata(ctx, captured["target_metadata"])  # type: ignore[arg-type]
        sync_conn.exec_driver_sql("ALTER TABLE entities ADD COLUMN not_in_metadata int")  # type: ignore[attr-defined]
        captured["drift"] = compare_metadata(ctx, captured["target_metadata"])  # type: ignore[arg-type]

    try:
        async with engine.begin() as sa_conn:
            await sa_conn.run_sync(diff)
    finally:
        await engine.dispose()
    assert captured["diff"] == []
    assert [d[0] for d in captured["drift"]] == ["remove_column"]  # type: ignore[union-attr]


async def test_0013_indexes_entities_by_degree_and_its_downgrade_drops_the_index(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    ws = workspace_name
    indexes = "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'entities'"
    await upgrade(dsn, MigrationTarget(ws, 8), "0012")
    try:
        at_0012 = {r["indexname"] for r in await conn.fetch(indexes, ws)}
        await alembic(dsn, ws, "upgrade", "head")
        assert {r["indexname"] for r in await conn.fetch(indexes, ws)} - at_0012 == {"entities_degree"}
        await alembic(dsn, ws, "downgrade", "0012")
        assert {r["indexname"] for r in await conn.fetch(indexes, ws)} == at_0012
    finally:
        await drop_workspace(conn, ws)
