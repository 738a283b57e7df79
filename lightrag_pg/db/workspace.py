"""Workspaces: one PostgreSQL schema (plus one AGE graph) per workspace."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg
from alembic.config import Config
from alembic.script import ScriptDirectory

from ..errors import DimensionMismatch, WorkspaceNotFound
from .identifiers import graph_name, quote_ident, validate_workspace
from .migrate import MigrationTarget, migrations_dir, upgrade
from .translate import translated

_LIST_SQL = """
SELECT n.nspname
FROM pg_namespace n
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = 'workspace_info' AND c.relkind = 'r'
ORDER BY n.nspname
"""


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    """What a workspace records about itself."""

    name: str
    embedding_dim: int
    embedding_model: str | None
    graph_enabled: bool
    created_at: datetime
    revision: str | None


def head_revision() -> str:
    """The newest Alembic revision shipped with this version of lightrag_pg."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


async def list_workspaces(conn: asyncpg.Connection) -> list[str]:
    """Names of every lightrag_pg workspace in the database."""
    async with translated():
        return [r[0] for r in await conn.fetch(_LIST_SQL)]


async def workspace_exists(conn: asyncpg.Connection, name: str) -> bool:
    """Whether ``name`` is an existing lightrag_pg workspace."""
    return validate_workspace(name) in await list_workspaces(conn)


async def read_info(conn: asyncpg.Connection, name: str) -> WorkspaceInfo | None:
    """The workspace's recorded facts, or None if it does not exist."""
    schema = quote_ident(validate_workspace(name))
    async with translated():
        if not await workspace_exists(conn, name):
            return None
        row = await conn.fetchrow(
            f"SELECT embedding_dim, embedding_model, graph_enabled, created_at, "
            f"(SELECT version_num FROM {schema}.alembic_version LIMIT 1) AS revision "
            f"FROM {schema}.workspace_info"
        )
    return WorkspaceInfo(name, row[0], row[1], row[2], row[3], row[4])


async def create_workspace(
    conn: asyncpg.Connection,
    dsn: str,
    name: str,
    embedding_dim: int,
    embedding_model: str | None = None,
) -> WorkspaceInfo:
    """Create the workspace (or upgrade it to the newest schema) and check its dimension.

    Idempotent and safe to run from several processes at once: the migration
    holds an advisory lock on the workspace name for its whole transaction.
    Raises :class:`DimensionMismatch` if the workspace exists with another
    embedding dimension.
    """
    target = MigrationTarget(validate_workspace(name), embedding_dim, embedding_model)
    info = await read_info(conn, name)
    if info is None or info.revision != head_revision():
        await upgrade(dsn, target)
        info = await read_info(conn, name)
    assert info is not None
    if info.embedding_dim != embedding_dim:
        raise DimensionMismatch(name, info.embedding_dim, embedding_dim)
    return info


async def drop_workspace(conn: asyncpg.Connection, name: str) -> None:
    """Drop the workspace's schema and AGE graph, and nothing else."""
    schema = quote_ident(validate_workspace(name))
    graph = graph_name(name)
    async with translated(), conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"lightrag_pg:workspace:{name}"
        )
        if not await workspace_exists(conn, name):
            raise WorkspaceNotFound(f"workspace {name!r} does not exist")
        has_graph = await conn.fetchval(
            "SELECT count(*) FROM pg_extension e, pg_namespace n WHERE e.extname = 'age' AND n.nspname = $1",
            graph,
        )
        if has_graph:
            await conn.execute("SELECT ag_catalog.drop_graph($1, true)", graph)
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")


async def migrate_all(conn: asyncpg.Connection, dsn: str) -> list[str]:
    """Upgrade every workspace of the database to the newest schema; return their names."""
    names = await list_workspaces(conn)
    for name in names:
        info = await read_info(conn, name)
        assert info is not None
        if info.revision != head_revision():
            await upgrade(dsn, MigrationTarget(name, info.embedding_dim, info.embedding_model))
    return names
