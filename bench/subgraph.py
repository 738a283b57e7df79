"""Subgraph latency: build a workspace from the generated corpus, then time ``aget_knowledge_graph``.

The workspace is built like ``bench/query.py``'s (instant scripted LLM). The
hub is the entity of highest degree; the subgraph around it is asked at
depth 2 with the default node cap (1000), then the ``"*"`` view and a label
search are timed too. Each figure is the median (and p95) of ``--rounds``
calls after one warm-up call, with the statements each call sent.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import generated_workspace, run_with_database, table_count, workspace_arguments
from bench.query import median, p95
from lightrag_pg.testing import StatementCounter


async def timed(call: Callable[[], Awaitable[Any]], rounds: int) -> tuple[list[float], int, Any]:
    """Milliseconds of each of ``rounds`` calls (after a warm-up), statements per call, last result."""
    result = await call()
    latencies: list[float] = []
    with StatementCounter() as counter:
        for _ in range(rounds):
            started = time.perf_counter()
            result = await call()
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies, counter.statements // rounds, result


def line(name: str, latencies: list[float], statements: int, detail: str) -> None:
    """One report line."""
    print(
        f"{name:<34}{median(latencies):>10.2f}{p95(latencies):>9.2f}{statements:>6}  {detail}",
    )


async def run(args: argparse.Namespace, dsn: str) -> None:
    """Build the workspace, time the graph views, report, drop the workspace."""
    async with generated_workspace(args, dsn, "bench_subgraph") as (rag, _, seconds):
        entities = await table_count(rag, "entities")
        relations = await table_count(rag, "relations")
        print(f"built {args.docs} docs in {seconds:.1f} s: {entities} entities, {relations} relations")
        hub = (await rag.aget_popular_labels(1))[0]
        print(f"{'call':<34}{'median ms':>10}{'p95 ms':>9}{'SQL':>6}  result")
        for depth in (1, 2, 3):
            lat, stmts, graph = await timed(
                lambda d=depth: rag.aget_knowledge_graph(hub, max_depth=d, max_nodes=args.max_nodes),
                args.rounds,
            )
            detail = f"{len(graph.nodes)} nodes, {len(graph.edges)} edges, truncated {graph.is_truncated}"
            line(f"hub {hub!r} depth {depth}", lat, stmts, detail)
        lat, stmts, graph = await timed(
            lambda: rag.aget_knowledge_graph("*", max_nodes=args.max_nodes), args.rounds
        )
        line('"*"', lat, stmts, f"{len(graph.nodes)} nodes, {len(graph.edges)} edges")
        lat, stmts, found = await timed(lambda: rag.asearch_labels(hub[:4]), args.rounds)
        line(f"search labels {hub[:4]!r}", lat, stmts, f"{len(found)} labels")
        lat, stmts, popular = await timed(lambda: rag.aget_popular_labels(300), args.rounds)
        line("popular labels (300)", lat, stmts, f"{len(popular)} labels")


def main() -> None:
    """Entry point."""
    parser = workspace_arguments(__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="timed calls per figure")
    parser.add_argument("--max-nodes", type=int, default=1000, help="node cap of each subgraph")
    run_with_database(run, parser.parse_args())


if __name__ == "__main__":
    main()
