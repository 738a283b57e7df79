"""The ``lightrag-pg`` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Coroutine, Sequence
from types import FrameType
from typing import Any

from ..errors import LightRAGError
from . import (
    admin,
    ask,
    demo,
    doctor,
    graph_edit,
    ingest,
    lightrag_compat,
    manage,
    mcp,
    reembed,
    serve,
    server,
    usage,
    workspace,
)


def _global_options(parser: argparse.ArgumentParser, default: object) -> None:
    """The options every command accepts, before or after the command name."""
    parser.add_argument(
        "--dsn", default=default, help="PostgreSQL DSN (default: $LIGHTRAG_PG_DSN, else the embedded server)"
    )
    parser.add_argument("--workspace", default=default, help="workspace (schema) name (default: default)")
    parser.add_argument("-v", "--verbose", action="store_true", default=default, help="log progress details")
    parser.add_argument("--debug", action="store_true", default=default, help="debug logs and tracebacks")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lightrag-pg",
        description="LightRAG with every storage role in one PostgreSQL database.",
    )
    _global_options(parser, None)
    parser.set_defaults(verbose=False, debug=False)
    # after the command, the same options; SUPPRESS keeps a value given before the command
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    commands = (
        demo,
        ingest,
        ask,
        admin,
        doctor,
        server,
        serve,
        mcp,
        manage,
        graph_edit,
        reembed,
        workspace,
        usage,
        lightrag_compat,
    )
    for module in commands:
        module.register(sub, [common])
    return parser


async def _announcing_interrupts(command: Coroutine[Any, Any, int]) -> int:
    """Run ``command``, saying at once on the first Ctrl-C that it stops (its clean-up may
    take a moment); asyncio cancels it, and a second Ctrl-C quits at once."""
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler) or threading.current_thread() is not threading.main_thread():
        return await command

    def interrupted(signum: int, frame: FrameType | None) -> None:
        print("\ninterrupted: stopping (Ctrl-C again to quit at once)", file=sys.stderr, flush=True)
        handler(signum, frame)

    signal.signal(signal.SIGINT, interrupted)
    try:
        return await command
    finally:
        signal.signal(signal.SIGINT, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``lightrag-pg`` and ``python -m lightrag_pg``."""
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    args = build_parser().parse_args(argv)
    level = logging.DEBUG if args.debug else logging.INFO if args.verbose else logging.ERROR
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(asyncio.run(_announcing_interrupts(args.run(args))))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away, as in `lightrag-pg tables | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        if isinstance(exc, LightRAGError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 1
