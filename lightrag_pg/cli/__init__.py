"""The ``lightrag-pg`` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import warnings
from collections.abc import Sequence

from ..errors import LightRAGError
from . import admin, ask, demo, ingest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lightrag-pg",
        description="LightRAG with every storage role in one PostgreSQL database.",
    )
    parser.add_argument("--dsn", help="PostgreSQL DSN (default: $LIGHTRAG_PG_DSN, else the embedded server)")
    parser.add_argument("--workspace", default=None, help="workspace (schema) name")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (demo, ingest, ask, admin):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``lightrag-pg`` and ``python -m lightrag_pg``."""
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return asyncio.run(args.run(args))
    except LightRAGError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
