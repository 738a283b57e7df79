"""Workspace commands of a Citus cluster: ``lightrag-pg workspace move NAME --to HOST:PORT``."""

from __future__ import annotations

import argparse

from ..db.citus import TRANSFER_MODES
from ..errors import ConfigurationError
from .common import connected, require_workspace, workspace_of


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("workspace", parents=parents, help="workspaces on a Citus cluster (move)")
    actions = p.add_subparsers(dest="action", required=True)
    move = actions.add_parser(
        "move", parents=parents, help="move a distributed workspace to another worker, while it is in use"
    )
    move.add_argument("name")
    move.add_argument("--to", required=True, metavar="HOST:PORT", help="the worker to move it to")
    move.add_argument(
        "--mode",
        choices=TRANSFER_MODES,
        default="block_writes",
        help="block_writes (default: writes wait during the copy) or force_logical "
        "(logical replication: writes wait only for the catch-up; needs wal_level=logical)",
    )
    move.set_defaults(run=run_move)


def host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair; :class:`ConfigurationError` if it is not one."""
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigurationError(f"--to must be HOST:PORT, got {value!r}")
    return host, int(port)


async def run_move(args: argparse.Namespace) -> int:
    from ..db.citus import move_workspace

    host, port = host_port(args.to)
    name = workspace_of(args, option="name")
    async with connected(args) as (conn, _):
        await require_workspace(conn, name)
        moved = await move_workspace(conn, name, host, port, args.mode)
    size_mb = moved.size_bytes / 1e6
    print(
        f"{moved.workspace}: {moved.source[0]}:{moved.source[1]} -> {host}:{port} "
        f"({size_mb:.1f} MB, {moved.seconds:.2f} s, {moved.mode})"
    )
    return 0
