"""Run the Alembic migrations of one workspace, or of all of them."""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from ..errors import ConfigurationError
from .advisory import XACT_LOCK, lock_key
from .embedded import sqlalchemy_url
from .identifiers import graph_name, graph_of, schema_of, search_path, validate_workspace
from .ownership import OWNERSHIP, Ownership, ownership_params
from .ownership import SQL as OWNERSHIP_SQL
from .schema import build_metadata
from .sqlfile import load_queries, load_queries_at, render

SQL = load_queries(__package__, "migrate.sql")

TARGET_KEY = "lightrag_target"
DIM_ENV = "LIGHTRAG_PG_EMBEDDING_DIM"
WORKSPACE_ENV = "LIGHTRAG_PG_WORKSPACE"
DEFAULT_CLI_DIM = 1536


@dataclass(frozen=True, slots=True)
class MigrationTarget:
    """The workspace a migration run applies to, and its creation parameters."""

    workspace: str
    embedding_dim: int
    embedding_model: str | None = None

    def __post_init__(self) -> None:
        validate_workspace(self.workspace)
        if not isinstance(self.embedding_dim, int) or not 0 < self.embedding_dim <= 16000:
            raise ConfigurationError(f"embedding_dim must be in 1..16000, got {self.embedding_dim!r}")

    @property
    def graph(self) -> str:
        return graph_name(self.workspace)


def target_from_cli(x_args: dict[str, str]) -> MigrationTarget:
    """Build the target of a command-line ``alembic -x workspace=NAME`` run."""
    workspace = x_args.get("workspace") or os.environ.get(WORKSPACE_ENV)
    if not workspace:
        raise ConfigurationError(
            f"choose a workspace: alembic -x workspace=NAME upgrade head (or set {WORKSPACE_ENV})"
        )
    raw_dim = x_args.get("embedding_dim") or os.environ.get(DIM_ENV) or DEFAULT_CLI_DIM
    try:
        dim = int(raw_dim)
    except ValueError as exc:
        raise ConfigurationError(f"embedding_dim must be an integer, got {raw_dim!r}") from exc
    return MigrationTarget(workspace, dim, x_args.get("embedding_model"))


def migrations_dir() -> Path:
    """The ``migrations/`` folder, whether installed as a package or in a checkout."""
    checkout = Path(__file__).resolve().parents[2] / "migrations"
    if checkout.is_dir():
        return checkout
    bundled = Path(__file__).resolve().parents[1] / "_migrations"
    if bundled.is_dir():
        return bundled
    raise ConfigurationError(f"cannot find the Alembic migrations folder (looked in {checkout})")


def alembic_config(target: MigrationTarget, connection: Connection | None = None) -> Config:
    """An Alembic config bound to ``target`` (and to ``connection`` if given)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes[TARGET_KEY] = target
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def migration_queries(migration_file: str) -> dict[str, str]:
    """The named SQL blocks of a migration, from ``sql/<its file stem>.sql`` next to it."""
    path = Path(migration_file).resolve()
    return load_queries_at(path.parent / "sql" / f"{path.stem}.sql")


def run(connection: Connection, sql: str, *params: object) -> Any:
    """Run one statement with positional ($1...) parameters; return its first value, if any.

    The one way migrations and their preparation send SQL on Alembic's connection.
    """
    result = connection.exec_driver_sql(sql, params)
    return result.scalar() if result.returns_rows else None


def _lock(connection: Connection, key: str) -> None:
    run(connection, XACT_LOCK, key)


def ensure_extensions(connection: Connection) -> bool:
    """Create pgvector (required) and AGE (when available); return whether AGE is usable."""
    _lock(connection, lock_key("extensions"))
    run(connection, SQL["create_vector"])
    if not run(connection, SQL["age_available"]):
        return False
    with connection.begin_nested():
        run(connection, SQL["create_age"])
    return True


def ownership(connection: Connection, workspace: str) -> Ownership:
    """Catalog facts about the schema and graph named after ``workspace``."""
    row = connection.exec_driver_sql(OWNERSHIP, ownership_params(workspace)).one()
    return Ownership.from_row(workspace, row)


def prepare_workspace(connection: Connection, target: MigrationTarget) -> None:
    """Serialise migrations of one workspace, create and mark its schema, point search_path at it.

    Raises :class:`WorkspaceConflict` (before creating anything) if a schema or
    graph of that name exists and is not lightrag_pg's.
    """
    ensure_extensions(connection)
    _lock(connection, lock_key("workspace", target.workspace))
    ownership(connection, target.workspace).check_can_create()
    schema = schema_of(target.workspace)
    run(connection, render(SQL["create_schema"], schema=schema))
    run(connection, render(OWNERSHIP_SQL["mark_schema"], schema=schema))
    run(connection, SQL["set_search_path"], search_path(target.workspace))


def finish_workspace(connection: Connection, target: MigrationTarget) -> None:
    """After the migrations: mark the workspace's graph (if it has one) as its own."""
    if ownership(connection, target.workspace).graph_exists:
        run(connection, render(OWNERSHIP_SQL["mark_graph"], graph=graph_of(target.workspace)))


def recorded_dim(connection: Connection, workspace: str) -> int | None:
    """The embedding dimension stored in a workspace, or None for a new one."""
    if not run(connection, SQL["has_workspace_info"], validate_workspace(workspace)):
        return None
    return run(connection, render(SQL["recorded_dim"], schema=schema_of(workspace)))


def configure_context(context: Any, connection: Connection, target: MigrationTarget) -> None:
    """Configure Alembic's context for ``target`` on a prepared connection."""
    dim = recorded_dim(connection, target.workspace) or target.embedding_dim
    metadata = build_metadata(dim)
    foreign = set(connection.exec_driver_sql(SQL["foreign_tables"], (target.workspace,)).scalars())

    def include_name(name: str | None, type_: str, parent_names: dict[str, Any]) -> bool:
        if type_ != "table":
            return True
        return name in metadata.tables or (name not in foreign and name != "alembic_version")

    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_name=include_name,
        version_table_schema=target.workspace,
        include_schemas=False,
        transaction_per_migration=False,
    )


_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _process_lock() -> asyncio.Lock:
    # Alembic keeps its context in module globals: one run at a time per process.
    loop = asyncio.get_running_loop()
    return _locks.setdefault(loop, asyncio.Lock())


async def upgrade(dsn: str, target: MigrationTarget, revision: str = "head") -> None:
    """Create or upgrade one workspace to ``revision``, in one transaction.

    Other processes are kept out by an advisory lock on the workspace name.
    """
    engine = create_async_engine(sqlalchemy_url(dsn), poolclass=NullPool)
    try:
        async with _process_lock(), engine.begin() as conn:
            await conn.run_sync(lambda sync: command.upgrade(alembic_config(target, sync), revision))
    finally:
        await engine.dispose()
