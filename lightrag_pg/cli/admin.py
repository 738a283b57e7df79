"""Workspace administration: migrate, list, show tables, drop."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .common import connected, require_workspace, workspace_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..db.workspace import TableStat


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("migrate", parents=parents, help="upgrade workspaces to the newest schema")
    p.add_argument("--all", action="store_true", help="every workspace (default: --workspace only)")
    p.set_defaults(run=run_migrate)
    p = sub.add_parser("workspaces", parents=parents, help="list workspaces")
    p.set_defaults(run=run_list)
    p = sub.add_parser("tables", parents=parents, help="show a workspace's tables and row counts")
    p.set_defaults(run=run_tables)
    p = sub.add_parser("drop-workspace", parents=parents, help="drop a workspace (schema and graph)")
    p.add_argument("name")
    p.add_argument("-y", "--yes", action="store_true", help="drop without asking (needed without a terminal)")
    p.set_defaults(run=run_drop)


async def run_migrate(args: argparse.Namespace) -> int:
    from ..db.migrate import MigrationTarget, upgrade
    from ..db.workspace import migrate_all, read_info

    async with connected(args) as (conn, db):
        if args.all:
            names = await migrate_all(conn, db.dsn)
        else:
            name = workspace_of(args)
            info = await require_workspace(conn, name)
            await upgrade(db.dsn, MigrationTarget(name, info.embedding_dim, info.embedding_model))
            names = [name]
        for name in names:
            current = await read_info(conn, name)
            print(f"{name}: revision {current.revision if current else '?'}")
    return 0


async def run_list(args: argparse.Namespace) -> int:
    from ..db.workspace import list_workspaces, read_info

    async with connected(args) as (conn, _):
        rows = [("WORKSPACE", "DIM", "EMBEDDING MODEL", "GRAPH", "REVISION")]
        for name in await list_workspaces(conn):
            info = await read_info(conn, name)
            assert info is not None
            graph = "enabled" if info.graph_enabled else "disabled"
            rows.append(
                (name, str(info.embedding_dim), info.embedding_model or "-", graph, info.revision or "-")
            )
    if len(rows) == 1:
        print("no workspaces yet; `lightrag-pg insert` creates one")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])
    return 0


async def run_tables(args: argparse.Namespace) -> int:
    from ..db.workspace import table_stats

    name = workspace_of(args)
    async with connected(args) as (conn, _):
        await require_workspace(conn, name)
        print_tables(await table_stats(conn, name))
    return 0


def print_tables(tables: Sequence[TableStat]) -> None:
    """Each table of a workspace with its row count and comment."""
    for t in tables:
        kind = "view " if t.is_view else "table"
        count = "?" if t.row_count is None else t.row_count
        print(f"  {kind} {t.name:<18} {count:>7} rows  {t.comment or ''}")


async def run_drop(args: argparse.Namespace) -> int:
    from ..db.workspace import drop_workspace

    name = workspace_of(args, option="name")
    async with connected(args) as (conn, _):
        await require_workspace(conn, name)
        if not args.yes and not confirm(f"drop workspace {name!r} and everything in it? [y/N] "):
            print("not dropped")
            return 1
        await drop_workspace(conn, name)
    print(f"dropped workspace {name!r}")
    return 0


def confirm(question: str) -> bool:
    """Whether the user answers yes to ``question`` at the terminal; without a terminal there
    is nobody to ask, so :class:`InvalidInput` tells to pass ``--yes``."""
    if not sys.stdin.isatty():
        raise InvalidInput("drop-workspace asks for confirmation and there is no terminal: pass --yes")
    return input(question).strip().lower() in ("y", "yes")
