"""Workspaces: one PostgreSQL schema (plus one AGE graph) per workspace."""

from __future__ import annotations

import ast
import functools
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import ConfigurationError, DimensionMismatch, WorkspaceNotFound
from .advisory import XACT_LOCK, lock_key
from .identifiers import WorkspaceName, relation_of, schema_of
from .migrate import AGE_ACCESS, MigrationTarget, age_problem, migrations_dir, upgrade
from .ownership import OWNERSHIP, Ownership, ownership_params
from .sqlfile import load_queries, render
from .translate import translated

if TYPE_CHECKING:
    import asyncpg

SQL = load_queries(__package__, "workspace.sql")


class GraphMirrorOff(UserWarning):
    """The workspace has no AGE graph mirror (AGE missing, or the role may not use it)."""


_warned: set[str] = set()


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    """What a workspace records about itself."""

    name: WorkspaceName
    embedding_dim: int
    embedding_model: str | None
    graph_enabled: bool
    created_at: datetime
    revision: str | None
    lexical_backend: str | None = None
    """``bm25`` or ``tsvector`` (see migration 0008); None before the workspace is upgraded to it."""
    distributed: bool = False
    """Whether it is a Citus distributed schema (:mod:`.citus`, migration 0015)."""


@dataclass(frozen=True, slots=True)
class TableStat:
    """One table or view of a workspace, with its row count and comment."""

    name: str
    is_view: bool
    row_count: int | None
    comment: str | None


def _revision_ids(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigurationError(f"unexpected Alembic revision identifier {value!r}")


def _revision_header(source: str) -> tuple[str, tuple[str, ...]] | None:
    """A migration file's ``(revision, down revisions)``, read from its module-level assignments."""
    found: dict[str, ast.expr] = {}
    for node in ast.parse(source).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name):
            found[target.id] = value
    if "revision" not in found:
        return None
    revision = ast.literal_eval(found["revision"])
    down = ast.literal_eval(found["down_revision"]) if "down_revision" in found else None
    if not isinstance(revision, str):
        raise ConfigurationError(f"unexpected Alembic revision identifier {revision!r}")
    return revision, _revision_ids(down)


@functools.cache
def head_revision() -> str:
    """The newest Alembic revision shipped with this version of lightrag_pg.

    Read from the migration files' ``revision`` and ``down_revision`` lines,
    without importing Alembic or the migrations (which load SQLAlchemy).
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted((migrations_dir() / "versions").glob("*.py")):
        header = _revision_header(path.read_text(encoding="utf-8"))
        if header is not None:
            revisions.add(header[0])
            parents.update(header[1])
    heads = sorted(revisions - parents)
    if len(heads) != 1:
        raise ConfigurationError(f"the migrations must have exactly one head, found {heads}")
    return heads[0]


async def list_workspaces(conn: asyncpg.Connection) -> list[WorkspaceName]:
    """Names of every lightrag_pg workspace in the database."""
    async with translated():
        return [WorkspaceName(r[0]) for r in await conn.fetch(SQL["list"])]


async def workspace_exists(conn: asyncpg.Connection, name: WorkspaceName) -> bool:
    """Whether ``name`` is an existing lightrag_pg workspace."""
    return name in await list_workspaces(conn)


async def read_info(conn: asyncpg.Connection, name: WorkspaceName) -> WorkspaceInfo | None:
    """The workspace's recorded facts, or None if it does not exist."""
    sql = render(SQL["read_info"], schema=schema_of(name))
    async with translated():
        if not await workspace_exists(conn, name):
            return None
        row = await conn.fetchrow(sql)
    return WorkspaceInfo(name, row[0], row[1], row[2], row[3], row[4], row[5], row[6])


async def create_workspace(
    conn: asyncpg.Connection,
    dsn: str,
    name: WorkspaceName,
    embedding_dim: int,
    embedding_model: str | None = None,
    lexical: str | None = None,
    distributed: bool | None = None,
) -> WorkspaceInfo:
    """Create the workspace (or upgrade it to the newest schema) and check its dimension.

    Idempotent and safe to run from several processes at once: the migration
    holds an advisory lock on the workspace name for its whole transaction.
    Raises :class:`DimensionMismatch` if the workspace exists with another
    embedding dimension. ``lexical`` chooses the lexical search backend of a new
    workspace (``tsvector``, the default, or ``bm25``, which needs pg_textsearch);
    an existing workspace keeps the one it recorded. ``distributed`` makes a new workspace a
    Citus distributed schema (True: the DSN must be a Citus coordinator; None: when the
    coordinator has ``citus.enable_schema_based_sharding`` on; see :mod:`.citus`).
    """
    target = MigrationTarget(name, embedding_dim, embedding_model, lexical, distributed)
    info = await read_info(conn, name)
    if info is None or info.revision != head_revision():
        await upgrade(dsn, target)
        info = await read_info(conn, name)
    assert info is not None
    if info.embedding_dim != embedding_dim:
        raise DimensionMismatch(name, info.embedding_dim, embedding_dim)
    if not info.graph_enabled and not info.distributed:  # a distributed one said so when created
        await _warn_graph_off(conn, name)
    return info


async def open_workspace(conn: asyncpg.Connection, dsn: str, name: WorkspaceName) -> WorkspaceInfo:
    """Upgrade an existing workspace to the newest schema and return its info, whatever
    its embedding dimension (for a re-embed, which changes it).

    Raises :class:`WorkspaceNotFound` if there is no such workspace.
    """
    info = await read_info(conn, name)
    if info is None:
        raise WorkspaceNotFound(f"workspace {name!r} does not exist")
    if info.revision != head_revision():
        await upgrade(dsn, MigrationTarget(name, info.embedding_dim, info.embedding_model))
        info = await read_info(conn, name)
        assert info is not None
    return info


async def record_embedding(
    conn: asyncpg.Connection, name: WorkspaceName, embedding_dim: int, model: str
) -> None:
    """Record the workspace's new embedding dimension and model (in the re-embed's swap)."""
    async with translated():
        await conn.execute(render(SQL["record_embedding"], schema=schema_of(name)), embedding_dim, model)


async def _warn_graph_off(conn: asyncpg.Connection, name: WorkspaceName) -> None:
    """Say once per process and workspace that it runs without the graph mirror, and why."""
    if name in _warned:
        return
    _warned.add(name)
    async with translated():
        row = await conn.fetchrow(AGE_ACCESS)
    reason = age_problem(*row) or "AGE could not be used when the workspace was created"
    warnings.warn(
        f"workspace {name!r} runs without the AGE graph mirror: {reason}. Entities and relations "
        "are in its tables as usual; Cypher over them is unavailable (see docs/deploy-grants.md)",
        GraphMirrorOff,
        stacklevel=3,
    )


async def drop_workspace(conn: asyncpg.Connection, name: WorkspaceName) -> None:
    """Drop the workspace's schema and its own AGE graph, and nothing else.

    Raises :class:`WorkspaceNotFound` if there is no such schema and
    :class:`WorkspaceConflict` if the schema is not a lightrag_pg workspace
    (see :mod:`.ownership`). A graph named ``<name>_kg`` that is not the
    workspace's own is left alone.
    """
    drop_schema = render(SQL["drop_schema"], schema=schema_of(name))
    async with translated(), conn.transaction():
        await conn.execute(XACT_LOCK, lock_key("workspace", name))
        owner = Ownership.from_row(name, await conn.fetchrow(OWNERSHIP, *ownership_params(name)))
        if not owner.schema_exists:
            raise WorkspaceNotFound(f"workspace {name!r} does not exist")
        owner.check_can_drop()
        if owner.owns_graph:
            await conn.execute(SQL["drop_graph"], owner.graph)
        await conn.execute(drop_schema)


async def migrate_all(conn: asyncpg.Connection, dsn: str) -> list[WorkspaceName]:
    """Upgrade every workspace of the database to the newest schema; return their names."""
    names = await list_workspaces(conn)
    for name in names:
        info = await read_info(conn, name)
        assert info is not None
        if info.revision != head_revision():
            await upgrade(dsn, MigrationTarget(name, info.embedding_dim, info.embedding_model))
    return names


async def table_stats(conn: asyncpg.Connection, name: WorkspaceName) -> list[TableStat]:
    """Every table and view of the workspace with its exact row count, in two statements.

    The counts come from one ``UNION ALL`` of ``count_rows`` branches; a
    relation someone created with an unusual (quoted) name gets no count.
    """
    schema = schema_of(name)
    async with translated():
        relations = await conn.fetch(SQL["relations_of_schema"], schema.name)
        branches = []
        for position, r in enumerate(relations):
            relation = relation_of(r["name"])
            if relation is not None:
                sql = render(SQL["count_rows"], position=position, schema=schema, relation=relation)
                branches.append(sql)
        rows = await conn.fetch(" UNION ALL ".join(branches)) if branches else []
    counts = {r["position"]: r["row_count"] for r in rows}
    return [
        TableStat(r["name"], r["is_view"], counts.get(position), r["comment"])
        for position, r in enumerate(relations)
    ]
