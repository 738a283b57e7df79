"""Roles without superuser: the graph mirror is switched off with one warning, or one clear error."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG
from lightrag_pg.cli import main
from lightrag_pg.db.workspace import GraphMirrorOff, create_workspace, drop_workspace
from lightrag_pg.errors import MissingPrivilege
from lightrag_pg.testing import hashed_embedding_func as embedding_func

pytestmark = pytest.mark.slow


def _dsn_for(dsn: str, user: str, database: str | None = None) -> str:
    parts = urlsplit(dsn)
    netloc = f"{user}@{parts.netloc.rsplit('@', 1)[1]}" if "@" in parts.netloc else f"{user}@{parts.netloc}"
    path = f"/{database}" if database else parts.path
    return urlunsplit((parts.scheme, netloc, path, parts.query, parts.fragment))


@pytest_asyncio.fixture
async def role(conn: asyncpg.Connection) -> AsyncIterator[str]:
    """A login role without superuser and without any grant on ag_catalog."""
    name = f"app_{uuid.uuid4().hex[:8]}"
    await conn.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
    yield name
    await conn.execute(f"DROP OWNED BY {name}; DROP ROLE {name}")


@pytest_asyncio.fixture
async def database(dsn: str, conn: asyncpg.Connection) -> AsyncIterator[str]:
    """A fresh database without any extension."""
    name = f"db_{uuid.uuid4().hex[:8]}"
    await conn.execute(f"CREATE DATABASE {name}")
    yield name
    await conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


async def _as_superuser(dsn: str, database: str, sql: str) -> None:
    admin = await asyncpg.connect(_dsn_for(dsn, urlsplit(dsn).username or "postgres", database))
    try:
        await admin.execute(sql)
    finally:
        await admin.close()


async def test_role_without_ag_catalog_grants_runs_without_the_mirror(
    dsn: str, conn: asyncpg.Connection, role: str, workspace_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS age")
    database = await conn.fetchval("SELECT current_database()")
    await conn.execute(f"GRANT CREATE ON DATABASE {database} TO {role}")
    role_dsn = _dsn_for(dsn, role)
    rag = LightRAG(dsn=role_dsn, workspace=workspace_name, embedding_func=embedding_func())
    with pytest.warns(GraphMirrorOff, match="lacks USAGE on schema ag_catalog") as caught:
        await rag.initialize()
    assert len([w for w in caught if w.category is GraphMirrorOff]) == 1
    try:
        assert rag.info is not None and not rag.info.graph_enabled
        async with rag.pool.acquire() as session:
            await session.execute("INSERT INTO entities (name) VALUES ('a'), ('b')")
            await session.execute("INSERT INTO relations (src, tgt) VALUES ('a', 'b')")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = LightRAG(dsn=role_dsn, workspace=workspace_name, embedding_func=embedding_func())
            await again.initialize()
            await again.finalize()
    finally:
        await rag.finalize()
    assert await asyncio.to_thread(main, ["--dsn", role_dsn, "workspaces"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(workspace_name))
    assert line.split()[3] == "disabled"
    role_conn = await asyncpg.connect(role_dsn)
    try:
        await drop_workspace(role_conn, workspace_name)
    finally:
        await role_conn.close()
    await conn.execute(f"REVOKE CREATE ON DATABASE {database} FROM {role}")


async def test_role_that_may_not_install_age_runs_without_the_mirror(
    dsn: str, role: str, database: str, workspace_name: str
) -> None:
    await _as_superuser(
        dsn, database, f"CREATE EXTENSION vector; GRANT CREATE ON DATABASE {database} TO {role}"
    )
    role_dsn = _dsn_for(dsn, role, database)
    conn = await asyncpg.connect(role_dsn)
    try:
        with pytest.warns(GraphMirrorOff, match="AGE extension is not installed"):
            info = await create_workspace(conn, role_dsn, workspace_name, 8)
        assert not info.graph_enabled
        assert await conn.fetchval("SELECT count(*) FROM pg_extension WHERE extname = 'age'") == 0
    finally:
        await conn.close()


async def test_missing_pgvector_names_the_extension(
    dsn: str, role: str, database: str, workspace_name: str
) -> None:
    await _as_superuser(dsn, database, f"GRANT CREATE ON DATABASE {database} TO {role}")
    role_dsn = _dsn_for(dsn, role, database)
    conn = await asyncpg.connect(role_dsn)
    try:
        with pytest.raises(MissingPrivilege, match="CREATE EXTENSION vector"):
            await create_workspace(conn, role_dsn, workspace_name, 8)
    finally:
        await conn.close()


async def test_missing_create_on_database_names_the_grant(
    dsn: str, role: str, database: str, workspace_name: str
) -> None:
    await _as_superuser(dsn, database, "CREATE EXTENSION vector")
    role_dsn = _dsn_for(dsn, role, database)
    conn = await asyncpg.connect(role_dsn)
    try:
        with pytest.raises(MissingPrivilege, match=f"GRANT CREATE ON DATABASE {database} TO {role}"):
            await create_workspace(conn, role_dsn, workspace_name, 8)
    finally:
        await conn.close()
