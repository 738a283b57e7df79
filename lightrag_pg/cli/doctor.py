"""``lightrag-pg doctor``: check a workspace's tables, vectors, graph mirror and statuses."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import connected, require_workspace, workspace_of

if TYPE_CHECKING:
    import asyncpg

    from ..db.identifiers import WorkspaceName


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "doctor",
        parents=parents,
        help="check a workspace's tables, vectors, AGE mirror and document statuses against each other "
        "(every workspace without --workspace)",
    )
    p.add_argument("--repair", action="store_true", help="repair what can be repaired, in one transaction")
    p.set_defaults(run=run_doctor)


async def run_doctor(args: argparse.Namespace) -> int:
    """Print the findings (and the repair) for ``--workspace``, or for every workspace
    when none is named; exit 1 while anything is left to fix."""
    from ..db.workspace import list_workspaces

    async with connected(args) as (conn, _):
        if args.workspace:
            names = [workspace_of(args)]
            await require_workspace(conn, names[0])
        else:
            names = await list_workspaces(conn)
            if not names:
                print("no workspaces yet; `lightrag-pg insert` creates one")
                return 0
        codes = [await _doctor(conn, name, args.repair) for name in names]
    return max(codes)


async def _doctor(conn: asyncpg.Connection, name: WorkspaceName, repairing: bool) -> int:
    from ..db.doctor import check, repair

    if not repairing:
        report = await check(conn, name)
        print(report.summary())
        return 0 if report.ok else 1
    outcome = await repair(conn, name)
    print(outcome.before.summary())
    if outcome.released_documents:
        print(f"{name}: {len(outcome.released_documents)} stuck documents set back to pending")
    if outcome.before.ok:
        return 0
    print("after repair:")
    print(outcome.after.summary())
    if not outcome.after.ok:
        print("what is left needs the embedding model: run `lightrag-pg insert` or re-insert the documents")
    return 0 if outcome.after.ok else 1
