"""``lightrag-pg usage``: the workspace's LLM and embedding calls and tokens, summed."""

from __future__ import annotations

import argparse
import dataclasses
import re
from datetime import datetime, timedelta, timezone

from ..errors import InvalidInput
from .common import connected, print_json, require_workspace, workspace_of

_AGO = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "usage", parents=parents, help="LLM and embedding calls and tokens, by kind, day or document"
    )
    p.add_argument(
        "--since",
        type=since,
        default=None,
        help="from this UTC date or time (2026-01-31, 2026-01-31T09:00) or this long ago (30m, 24h, 7d, 2w)",
    )
    p.add_argument("--by", choices=["kind", "day", "doc"], default="kind", help="how to sum (default: kind)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_usage)


def since(value: str) -> datetime:
    """A ``--since`` value as an aware UTC datetime."""
    ago = _AGO.match(value.strip())
    if ago:
        return datetime.now(timezone.utc) - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is neither a date or time (2026-01-31, 2026-01-31T09:00) nor a duration (24h, 7d)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


async def run_usage(args: argparse.Namespace) -> int:
    from ..db.pool import point_connection
    from ..store.usage import UsageStore

    name = workspace_of(args)
    start = args.since or datetime.min.replace(tzinfo=timezone.utc)
    if start > datetime.now(timezone.utc):
        raise InvalidInput(f"--since {start.isoformat()} is in the future")
    async with connected(args) as (conn, _):
        await require_workspace(conn, name)
        await point_connection(conn, name)
        sums = await UsageStore(conn).sums(args.by, start)
    if args.json:
        print_json([dataclasses.asdict(s) for s in sums])
        return 0
    header = {"kind": "kind", "day": "day (UTC)", "doc": "document"}[args.by]
    rows = [(s.key or "(queries and other calls)", s.label or "", s) for s in sums]
    width = max([len(header), *(len(k) for k, _, _ in rows)])
    head = (
        f"{header:<{width}}  {'calls':>7}  {'cache hits':>10}  {'input tokens':>13}  "
        f"{'output tokens':>13}  {'cached input':>12}"
    )
    print(f"{head}  file" if args.by == "doc" else head)
    for key, label, s in rows:
        line = (
            f"{key:<{width}}  {s.calls:>7,}  {s.cache_hits:>10,}  {s.input_tokens:>13,}  "
            f"{s.output_tokens:>13,}  {s.cached_input_tokens:>12,}"
        )
        print(f"{line}  {label}" if args.by == "doc" else line)
    if not rows:
        print("(no calls recorded)")
    return 0
