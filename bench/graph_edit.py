"""Graph edits on a generated workspace: edit, rename and merge the busiest entities.

Builds the workspace from the generated corpus (instant scripted LLM, hashed
embeddings, as :mod:`bench.delete`), then times each call and counts its
statements on the client: they include the two reads of the info the call
returns and the LLM-cache look-ups of the summaries it needs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import generated_workspace, run_with_database, table_count, workspace_arguments
from lightrag_pg.testing import StatementCounter


async def timed(label: str, call: Awaitable[Any], degree: int) -> None:
    """Run ``call``; print its seconds and statements."""
    with StatementCounter() as counter:
        started = time.perf_counter()
        await call
        seconds = time.perf_counter() - started
    print(f"{label:<40} degree {degree:>5}: {seconds:6.3f} s, {counter.statements} statements")


async def run(args: argparse.Namespace, dsn: str) -> None:
    """Build the workspace, time the edits, drop the workspace."""
    async with generated_workspace(args, dsn, "bench_edit") as (rag, _, _):
        print(
            f"{args.docs} docs: {await table_count(rag, 'entities')} entities, "
            f"{await table_count(rag, 'relations')} relations"
        )
        hubs = await rag.aget_popular_labels(4)
        degrees = {h: (await rag.aget_entity_info(h))["graph_data"]["degree"] for h in hubs}
        a, b, c, d = hubs
        await timed(f"edit {a!r}", rag.aedit_entity(a, {"description": "Edited."}), degrees[a])
        await timed(f"rename {b!r}", rag.aedit_entity(b, {"entity_name": f"{b} renamed"}), degrees[b])
        await timed(f"merge {c!r} into {a!r}", rag.amerge_entities([c], a), degrees[a] + degrees[c])
        await timed("create entity 'Bench New'", rag.acreate_entity("Bench New", {"description": "x"}), 0)
        await timed(
            f"create relation {a!r} - 'Bench New'",
            rag.acreate_relation(a, "Bench New", {"description": "x"}),
            1,
        )
        await timed(f"delete entity {d!r}", rag.adelete_by_entity(d), degrees[d])


def main() -> None:
    run_with_database(run, workspace_arguments(__doc__.split("\n")[0]).parse_args())


if __name__ == "__main__":
    main()
