"""Workspaces on a Citus cluster: each one a distributed schema, placed whole on one worker.

A workspace is a schema, and Citus's schema-based sharding places every table of a
distributed schema on one node, colocated: joins, foreign keys, transactions and HNSW
searches stay on that node, and :func:`move_workspace` moves the schema to another.
What differs from a single node, and how lightrag_pg deals with it:

- Triggers: Citus refuses them on distributed tables unless
  ``citus.enable_unsafe_triggers`` is set when they are created (the migration sets it
  for its transaction). Ours are safe in the sense Citus means: each fires on the shard
  and touches only tables of the same schema, whose shards are on the same node. Their
  bodies read transition tables only through arrays (Citus cannot plan a statement that
  joins a transition table to a distributed table).
- Functions a routed query calls (``lexical_chunks`` and the others of the schema) run
  on the worker, in a session with the worker's defaults: :func:`pin_functions` gives
  each the workspace's ``search_path`` and allows it to query its own schema's shards.
- Session settings (``hnsw.ef_search``, ``hnsw.iterative_scan``) are not carried to
  the workers' sessions: :func:`pin_role_settings` makes them defaults of the role in
  the database on every node.
- Locks: every advisory lock lightrag_pg takes names no table, so it is taken on the
  node the client is connected to. All clients connect to the coordinator, which is
  therefore the one lock space of the cluster.
- The AGE graph mirror is off (AGE keeps a graph in ``ag_catalog`` on one node); every
  graph read already uses the relational tables.
- DDL (migrations) goes through the coordinator.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigurationError, WorkspaceNotFound
from .identifiers import WorkspaceName
from .sqlfile import load_queries
from .translate import translated

if TYPE_CHECKING:
    import asyncpg
    from sqlalchemy.engine import Connection

SQL = load_queries(__package__, "citus.sql")
log = logging.getLogger(__name__)

PINNED_SETTINGS: tuple[str, ...] = ("hnsw.ef_search", "hnsw.iterative_scan")
"""Session settings that change results, made role defaults on every node."""

TRANSFER_MODES: tuple[str, ...] = ("block_writes", "force_logical", "auto")


def _run(connection: Connection, sql: str, *params: object) -> object:
    result = connection.exec_driver_sql(sql, params)
    return result.scalar() if result.returns_rows else None


@dataclass(frozen=True, slots=True)
class NodeRole:
    """What the server lightrag_pg is connected to is, for Citus."""

    citus: bool
    coordinator: bool
    schema_sharding: bool


def node_role(connection: Connection) -> NodeRole:
    """Whether the database has Citus, this node is its coordinator, and it distributes new schemas."""
    if not _run(connection, SQL["installed"]):
        return NodeRole(False, False, False)
    coordinator, sharding = connection.exec_driver_sql(SQL["node_role"]).one()
    return NodeRole(True, bool(coordinator), bool(sharding))


def is_distributed(connection: Connection, workspace: WorkspaceName) -> bool:
    """Whether the workspace's schema is a Citus distributed schema."""
    return bool(_run(connection, SQL["installed"]) and _run(connection, SQL["is_distributed"], workspace))


def choose_distributed(connection: Connection, wanted: bool | None) -> bool:
    """Whether a new workspace is created distributed: ``wanted``, else whatever the
    coordinator does with new schemas (``citus.enable_schema_based_sharding``).

    Raises :class:`ConfigurationError` if a distributed workspace is wanted and the
    server is not a Citus coordinator.
    """
    role = node_role(connection)
    if wanted and not role.coordinator:
        raise ConfigurationError(
            "a distributed workspace needs a Citus coordinator: the DSN must point at the "
            "coordinator of a Citus 12+ cluster (citus extension installed)"
            if role.citus
            else "a distributed workspace needs Citus: this database has no citus extension"
        )
    if not role.coordinator:
        return False
    chosen = role.schema_sharding if wanted is None else wanted
    _run(connection, SQL["set_schema_sharding"], "on" if chosen else "off")
    return chosen


def allow_triggers(connection: Connection) -> None:
    """Let the migration transaction create the workspace's triggers on distributed tables."""
    _run(connection, SQL["allow_triggers"])


def pin_functions(connection: Connection, workspace: WorkspaceName) -> None:
    """Give every table-reading function of a distributed workspace its search_path and the
    right to query its own shards from a routed query (idempotent; after every upgrade,
    since ``CREATE OR REPLACE FUNCTION`` drops these settings)."""
    for (command,) in connection.exec_driver_sql(SQL["pin_function_commands"], (workspace,)).all():
        connection.exec_driver_sql(command)


def pin_role_settings(connection: Connection, settings: dict[str, str]) -> None:
    """Make the result-changing session settings defaults of the role on every node."""
    names = [name for name in PINNED_SETTINGS if name in settings]
    rows = connection.exec_driver_sql(
        SQL["role_settings_commands"], (names, [settings[n] for n in names])
    ).all()
    for (command,) in rows:
        connection.exec_driver_sql(command)


def log_graph_off(workspace: WorkspaceName) -> None:
    """The one line saying a distributed workspace has no AGE mirror, and why."""
    log.info(
        "workspace %r is distributed over Citus: the AGE graph mirror is off (AGE keeps a graph "
        "on one node); the graph lives in its tables as usual, Cypher over it is unavailable",
        workspace,
    )


@dataclass(frozen=True, slots=True)
class Move:
    """What moving a workspace did."""

    workspace: WorkspaceName
    source: tuple[str, int]
    target: tuple[str, int]
    size_bytes: int
    seconds: float
    mode: str


async def placement(conn: asyncpg.Connection, workspace: WorkspaceName) -> tuple[str, int] | None:
    """The worker holding a distributed workspace (host, port), or None if it is not distributed."""
    async with translated():
        if not await conn.fetchval(SQL["installed"]) or not await conn.fetchval(
            SQL["is_distributed"], workspace
        ):
            return None
        row = await conn.fetchrow(SQL["placement"], workspace)
    return None if row is None else (str(row[0]), int(row[1]))


async def move_workspace(
    conn: asyncpg.Connection, workspace: WorkspaceName, host: str, port: int, mode: str = "block_writes"
) -> Move:
    """Move a distributed workspace to the worker ``host:port`` with ``citus_schema_move``.

    ``block_writes`` (the default) copies the tables while reads go on and writes wait;
    ``force_logical`` copies them by logical replication (the nodes need
    ``wal_level = logical``) and blocks writes only for the final catch-up. Queries and
    inserts running meanwhile lose nothing. Raises :class:`WorkspaceNotFound` if the
    workspace is not a distributed workspace.
    """
    if mode not in TRANSFER_MODES:
        raise ConfigurationError(f"mode must be one of {', '.join(TRANSFER_MODES)}, got {mode!r}")
    source = await placement(conn, workspace)
    if source is None:
        raise WorkspaceNotFound(f"workspace {workspace!r} is not a distributed workspace of this cluster")
    async with translated():
        size = int(await conn.fetchval(SQL["schema_size"], workspace))
        started = time.perf_counter()
        if source != (host, port):
            await conn.execute(SQL["move"], workspace, host, port, mode)
        seconds = time.perf_counter() - started
    return Move(workspace, source, (host, port), size, seconds, mode)
