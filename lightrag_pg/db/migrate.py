"""Run the Alembic migrations of one workspace, or of all of them."""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, MissingPrivilege, StorageError
from . import citus
from .advisory import XACT_LOCK, lock_key
from .dimensions import HALFVEC_HNSW_MAX_DIM
from .embedded import sqlalchemy_url
from .identifiers import Identifier, WorkspaceName, graph_name, graph_of, schema_of, search_path
from .ownership import OWNERSHIP, Ownership, ownership_params
from .ownership import SQL as OWNERSHIP_SQL
from .sqlfile import load_queries, load_queries_at, render

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection

SQL = load_queries(__package__, "migrate.sql")
AGE_ACCESS = SQL["age_access"]

TARGET_KEY = "lightrag_target"
DIM_ENV = "LIGHTRAG_PG_EMBEDDING_DIM"
WORKSPACE_ENV = "LIGHTRAG_PG_WORKSPACE"
DEFAULT_CLI_DIM = 1536
INSUFFICIENT_PRIVILEGE = "42501"
LEXICAL_BACKENDS: tuple[str, ...] = ("bm25", "tsvector")
"""Lexical search indexes a workspace can have: BM25 (pg_textsearch) or built-in full text search."""


@dataclass(frozen=True, slots=True)
class MigrationTarget:
    """The workspace a migration run applies to, and its creation parameters."""

    workspace: WorkspaceName
    embedding_dim: int
    embedding_model: str | None = None
    lexical: str | None = None
    """The lexical search backend of a new workspace (see :data:`LEXICAL_BACKENDS`); None:
    ``tsvector``. ``bm25`` needs pg_textsearch, whose version 1.0 holds a per-index lock
    for the whole of a writing transaction (see :func:`lexical_backend`)."""
    distributed: bool | None = None
    """Whether a new workspace is a Citus distributed schema (:mod:`.citus`): True needs a
    Citus coordinator, None follows the coordinator's ``citus.enable_schema_based_sharding``
    (False without Citus). An existing workspace stays as it was created."""

    def __post_init__(self) -> None:
        if self.lexical not in (None, *LEXICAL_BACKENDS):
            raise ConfigurationError(
                f"lexical must be one of {', '.join(LEXICAL_BACKENDS)} (or unset), got {self.lexical!r}"
            )
        dim = self.embedding_dim
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            raise ConfigurationError(f"embedding_dim must be a positive integer, got {dim!r}")
        if dim > HALFVEC_HNSW_MAX_DIM:
            raise ConfigurationError(
                f"embedding_dim {dim} is too wide: pgvector's HNSW index covers at most "
                f"{HALFVEC_HNSW_MAX_DIM} dimensions (as halfvec); choose a model or a dimensions "
                f"setting of {HALFVEC_HNSW_MAX_DIM} or fewer"
            )

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
    raw_distributed = (x_args.get("distributed") or "").lower()
    if raw_distributed not in ("", "true", "false"):
        raise ConfigurationError(f"distributed must be true or false, got {raw_distributed!r}")
    distributed = None if not raw_distributed else raw_distributed == "true"
    return MigrationTarget(
        WorkspaceName(workspace),
        dim,
        x_args.get("embedding_model"),
        x_args.get("lexical") or None,
        distributed,
    )


def running_target() -> MigrationTarget:
    """The workspace the running migration applies to (``migrations/env.py`` sets it)."""
    from alembic import op

    config = op.get_context().config
    if config is None:
        raise ConfigurationError("no workspace: the migration runs outside lightrag_pg's Alembic env")
    target: MigrationTarget = config.attributes[TARGET_KEY]
    return target


def running_schema() -> Identifier:
    """The quoted schema of the workspace the running migration applies to."""
    return schema_of(running_target().workspace)


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
    from alembic.config import Config

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


def _permission_denied(exc: BaseException) -> bool:
    """Whether a driver error (as wrapped by SQLAlchemy) is PostgreSQL's insufficient_privilege."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "sqlstate", None) == INSUFFICIENT_PRIVILEGE:
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


def _who(connection: Connection) -> tuple[str, str]:
    role, database = connection.exec_driver_sql(SQL["who"]).one()
    return role, database


def age_problem(installed: bool, usage: bool, catalog_select: bool) -> str | None:
    """Why the AGE graph mirror cannot be used (a row of ``age_access``), or None if it can."""
    if not installed:
        return "the AGE extension is not installed in this database (CREATE EXTENSION age)"
    if not usage:
        return "the role lacks USAGE on schema ag_catalog (GRANT USAGE ON SCHEMA ag_catalog TO <role>)"
    if not catalog_select:
        return (
            "the role lacks SELECT on ag_catalog.ag_graph and ag_catalog.ag_label "
            "(GRANT SELECT ON ag_catalog.ag_graph, ag_catalog.ag_label TO <role>)"
        )
    return None


def age_usable(connection: Connection) -> bool:
    """Whether this role can create and write the workspace's AGE graph."""
    row = connection.exec_driver_sql(AGE_ACCESS).one()
    return age_problem(*row) is None


def _require_vector(connection: Connection) -> None:
    from sqlalchemy.exc import DBAPIError

    if run(connection, SQL["vector_installed"]):
        return
    try:
        with connection.begin_nested():
            run(connection, SQL["create_vector"])
    except DBAPIError as exc:
        if not _permission_denied(exc):
            raise
        role, database = _who(connection)
        raise MissingPrivilege(
            f"the pgvector extension is not installed in database {database!r} and role {role!r} "
            f"may not install it: ask an administrator to run CREATE EXTENSION vector in {database!r} "
            "(see docs/deploy-grants.md)"
        ) from None


def ensure_extensions(connection: Connection, textsearch: bool = False, age: bool = True) -> bool:
    """Create pgvector (required), AGE (if ``age``, when available and permitted) and, if
    ``textsearch``, pg_textsearch (when available and loadable); return whether AGE is usable.

    A role that may not install AGE, or may not use it, gets a workspace
    without the graph mirror (``graph_enabled = false``) rather than an error.
    pg_textsearch refuses to install unless the server preloads its library
    (``shared_preload_libraries``); any failure leaves it out.
    """
    from sqlalchemy.exc import DBAPIError

    _lock(connection, lock_key("extensions"))
    _require_vector(connection)
    if age and run(connection, SQL["age_available"]):
        try:
            with connection.begin_nested():
                run(connection, SQL["create_age"])
        except DBAPIError as exc:
            if not _permission_denied(exc):
                raise
    if textsearch and run(connection, SQL["textsearch_available"]) and not textsearch_installed(connection):
        try:
            with connection.begin_nested():
                run(connection, SQL["create_textsearch"])
        except DBAPIError:
            pass
    return age_usable(connection)


def textsearch_installed(connection: Connection) -> bool:
    """Whether pg_textsearch (BM25 indexes) is installed in this database."""
    return bool(run(connection, SQL["textsearch_installed"]))


def lexical_backend(connection: Connection, wanted: str | None) -> str:
    """The lexical search backend for a workspace: ``wanted`` if given, else ``tsvector``.

    ``bm25`` (pg_textsearch, corpus-wide statistics) is only used when asked for: pg_textsearch
    1.0.0, the version the embedded server ships, takes a per-index lock at a transaction's
    first write to a BM25 index and keeps it to the end of the transaction, so writers of
    a workspace queue behind each other, a writing transaction can neither be cancelled
    nor time out, and two writers that also wait on each other's row locks would never
    wake (fixed upstream by per-operation locking, timescale/pg_textsearch#307). Raises
    :class:`ConfigurationError` if ``bm25`` is wanted and pg_textsearch is missing.
    """
    if wanted == "bm25" and not textsearch_installed(connection):
        raise ConfigurationError(
            "lexical='bm25' needs the pg_textsearch extension, which this database does not have "
            "(it must be in shared_preload_libraries before CREATE EXTENSION pg_textsearch)"
        )
    return wanted or "tsvector"


def ownership(connection: Connection, workspace: WorkspaceName) -> Ownership:
    """Catalog facts about the schema and graph named after ``workspace``."""
    row = connection.exec_driver_sql(OWNERSHIP, ownership_params(workspace)).one()
    return Ownership.from_row(workspace, row)


def prepare_workspace(connection: Connection, target: MigrationTarget) -> None:
    """Serialise migrations of one workspace, create and mark its schema, point search_path at it.

    Raises :class:`WorkspaceConflict` (before creating anything) if a schema or
    graph of that name exists and is not lightrag_pg's.
    """
    _lock(connection, lock_key("workspace", target.workspace))
    owner = ownership(connection, target.workspace)
    owner.check_can_create()
    if owner.schema_exists:
        distributed = citus.is_distributed(connection, target.workspace)
        if target.distributed and not distributed:
            raise ConfigurationError(
                f"workspace {target.workspace!r} exists and is not distributed; create a new "
                "distributed workspace and move its documents there"
            )
    else:
        distributed = citus.choose_distributed(connection, target.distributed)
    if distributed:
        citus.allow_triggers(connection)
    ensure_extensions(connection, textsearch=target.lexical == "bm25", age=not distributed)
    if not owner.schema_exists and not run(connection, SQL["can_create_schema"]):
        role, database = _who(connection)
        raise MissingPrivilege(
            f"role {role!r} may not create schemas in database {database!r}, so it cannot create "
            f"workspace {target.workspace!r}: GRANT CREATE ON DATABASE {database} TO {role} "
            "(see docs/deploy-grants.md)"
        )
    schema = schema_of(target.workspace)
    run(connection, render(SQL["create_schema"], schema=schema))
    run(connection, render(OWNERSHIP_SQL["mark_schema"], schema=schema))
    run(connection, SQL["set_search_path"], search_path(target.workspace))


def finish_workspace(connection: Connection, target: MigrationTarget) -> None:
    """After the migrations: mark the workspace's graph (if it has one) as its own; give a
    distributed workspace's functions and role settings what the workers need (:mod:`.citus`)."""
    if citus.is_distributed(connection, target.workspace):
        from .pool import server_settings

        citus.pin_functions(connection, target.workspace)
        citus.pin_role_settings(connection, server_settings(target.workspace))
    if ownership(connection, target.workspace).graph_exists:
        run(connection, render(OWNERSHIP_SQL["mark_graph"], graph=graph_of(target.workspace)))


def recorded_dim(connection: Connection, workspace: WorkspaceName) -> int | None:
    """The embedding dimension stored in a workspace, or None for a new one."""
    if not run(connection, SQL["has_workspace_info"], workspace):
        return None
    dim: int | None = run(connection, render(SQL["recorded_dim"], schema=schema_of(workspace)))
    return dim


def recorded_lexical(connection: Connection, workspace: WorkspaceName) -> str | None:
    """The lexical search backend recorded in a workspace, or None (new, or older than 0008)."""
    if not run(connection, SQL["has_workspace_info"], workspace):
        return None
    lexical: str | None = run(connection, render(SQL["recorded_lexical"], schema=schema_of(workspace)))
    return lexical


def configure_context(context: Any, connection: Connection, target: MigrationTarget) -> None:
    """Configure Alembic's context for ``target`` on a prepared connection."""
    from .schema import build_metadata

    dim = recorded_dim(connection, target.workspace) or target.embedding_dim
    lexical = recorded_lexical(connection, target.workspace) or lexical_backend(connection, target.lexical)
    metadata = build_metadata(dim, lexical)
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
    from alembic import command
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    engine = create_async_engine(sqlalchemy_url(dsn), poolclass=NullPool)
    try:
        async with _process_lock(), engine.begin() as conn:
            await conn.run_sync(lambda sync: command.upgrade(alembic_config(target, sync), revision))
    except DBAPIError as exc:
        detail = str(exc.orig).strip() if exc.orig is not None else str(exc)
        if _permission_denied(exc):
            raise MissingPrivilege(
                f"migrating workspace {target.workspace!r}: {detail} (see docs/deploy-grants.md)"
            ) from None
        raise StorageError(f"migrating workspace {target.workspace!r}: {detail}") from exc
    finally:
        await engine.dispose()
