"""Workspace administration: migrate, list, show tables, drop."""

from __future__ import annotations

import argparse

import asyncpg

from ..db.embedded import resolve_dsn
from ..db.workspace import drop_workspace, list_workspaces, migrate_all, read_info, table_stats


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="upgrade workspaces to the newest schema")
    p.add_argument("--all", action="store_true", help="every workspace (default: --workspace only)")
    p.set_defaults(run=run_migrate)
    p = sub.add_parser("workspaces", help="list workspaces")
    p.set_defaults(run=run_list)
    p = sub.add_parser("tables", help="show a workspace's tables and row counts")
    p.set_defaults(run=run_tables)
    p = sub.add_parser("drop-workspace", help="drop a workspace (schema and graph)")
    p.add_argument("name")
    p.set_defaults(run=run_drop)


async def _connect(args: argparse.Namespace) -> tuple[asyncpg.Connection, str]:
    dsn = resolve_dsn(args.dsn)
    return await asyncpg.connect(dsn), dsn


async def run_migrate(args: argparse.Namespace) -> int:
    conn, dsn = await _connect(args)
    try:
        if args.all:
            names = await migrate_all(conn, dsn)
        else:
            from ..db.migrate import MigrationTarget, upgrade

            name = args.workspace or "default"
            info = await read_info(conn, name)
            if info is None:
                print(f"workspace {name!r} does not exist; it is created on first use")
                return 1
            await upgrade(dsn, MigrationTarget(name, info.embedding_dim, info.embedding_model))
            names = [name]
        for name in names:
            info = await read_info(conn, name)
            print(f"{name}: revision {info.revision if info else '?'}")
    finally:
        await conn.close()
    return 0


async def run_list(args: argparse.Namespace) -> int:
    conn, _ = await _connect(args)
    try:
        for name in await list_workspaces(conn):
            info = await read_info(conn, name)
            assert info is not None
            graph = f"graph_enabled={str(info.graph_enabled).lower()}"
            model = info.embedding_model or ""
            print(f"{name}\tdim={info.embedding_dim}\t{model}\t{graph}\trev {info.revision}")
    finally:
        await conn.close()
    return 0


async def run_tables(args: argparse.Namespace) -> int:
    conn, _ = await _connect(args)
    name = args.workspace or "default"
    try:
        if await read_info(conn, name) is None:
            print(f"workspace {name!r} does not exist")
            return 1
        await print_tables(conn, name)
    finally:
        await conn.close()
    return 0


async def print_tables(conn: asyncpg.Connection, workspace: str) -> None:
    """Each table of ``workspace`` with its row count and comment."""
    for t in await table_stats(conn, workspace):
        kind = "view " if t.is_view else "table"
        count = "?" if t.row_count is None else t.row_count
        print(f"  {kind} {t.name:<18} {count:>7} rows  {t.comment or ''}")


async def run_drop(args: argparse.Namespace) -> int:
    conn, _ = await _connect(args)
    try:
        await drop_workspace(conn, args.name)
        print(f"dropped workspace {args.name!r}")
    finally:
        await conn.close()
    return 0
