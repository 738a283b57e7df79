"""``lightrag-pg server status|stop|dsn``: the embedded PostgreSQL server.

The embedded server starts on first use and keeps running after the command
exits, so the next command (or another process) reuses it. Its data live in
``$LIGHTRAG_PG_DATA_DIR`` (default: the user data directory).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from ..db.embedded import DSN_ENV, embedded_dsn, server_status, stop_server

NOT_RUNNING = 3  # the exit code pg_ctl status uses


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("server", parents=parents, help="status, stop or DSN of the embedded PostgreSQL")
    p.add_argument("action", choices=["status", "stop", "dsn"])
    p.set_defaults(run=run)


def _mention_env() -> None:
    if os.environ.get(DSN_ENV):
        print(f"note: ${DSN_ENV} is set: the other commands do not use the embedded server", file=sys.stderr)


async def run(args: argparse.Namespace) -> int:
    _mention_env()
    if args.action == "dsn":
        print(await asyncio.to_thread(embedded_dsn))
        return 0
    if args.action == "stop":
        stopped = await asyncio.to_thread(stop_server)
        status = server_status()
        print(f"{'stopped' if stopped else 'not running'}: embedded server in {status.data_dir}")
        return 0
    status = await asyncio.to_thread(server_status)
    if status.running:
        print(f"running: embedded server in {status.data_dir}, pid {status.pid}, dsn {status.dsn}")
        return 0
    state = "stopped" if status.initialized else "not created yet (the first command creates it)"
    print(f"{state}: embedded server in {status.data_dir}")
    return NOT_RUNNING
