"""Start-up time of the command line: ``--help`` and a warm query, against ``python -c pass``.

A small workspace is created first with ``lightrag-pg insert`` (offline: spaCy
extraction, local MiniLM embeddings, no LLM). Each command then runs in a new
process ``--runs`` times; the report gives the median and the slowest wall
time, the median minus the bare interpreter start measured in the same run,
and the median CPU time (user + system, all threads) of the process. A
question is asked once before its runs are timed: a warm query is a question
asked before (its offline keywords come from the cache), on a running server.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import database

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "lightrag_pg" / "sample" / "querying.md"
QUESTION = "How are the token budgets applied to a question?"


def offline_env() -> dict[str, str]:
    """This environment without LLM or embedding endpoints, with this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "EMBEDDING_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "lightrag_pg", *args]


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall_times(command: list[str], env: dict[str, str], runs: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each of ``runs`` runs of ``command``; fails loudly if one fails."""
    times = []
    for _ in range(runs):
        cpu = children_cpu()
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        times.append((time.perf_counter() - started, children_cpu() - cpu))
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="default: $LIGHTRAG_PG_DSN, else a temporary embedded server")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = offline_env()
    workspace = f"bench_startup_{uuid.uuid4().hex[:8]}"
    with database(args.dsn) as dsn:
        target = ["--workspace", workspace, "--dsn", dsn]
        wall_times(cli("insert", str(DOCUMENT), *target), env, 1)
        for mode in ("mix", "naive"):  # the first time a question is asked
            wall_times(cli("query", QUESTION, "--mode", mode, *target), env, 1)
        load_before = os.getloadavg()[0]
        try:
            cases = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "lightrag-pg --help": cli("--help"),
                "lightrag-pg query --help": cli("query", "--help"),
                "query (mix, no LLM)": cli("query", QUESTION, *target),
                "query (naive, no LLM)": cli("query", QUESTION, "--mode", "naive", *target),
            }
            results = {name: wall_times(command, env, args.runs) for name, command in cases.items()}
        finally:
            subprocess.run(cli("drop-workspace", workspace, "--dsn", dsn), env=env, capture_output=True)
    baseline = statistics.median(wall for wall, _ in results["python -c pass"])
    print(
        f"start-up, {args.runs} runs each (seconds; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after)"
    )
    print(f"{'command':<26} {'median':>7} {'max':>7} {'- baseline':>11} {'CPU':>7}")
    for name, times in results.items():
        median = statistics.median(wall for wall, _ in times)
        slowest = max(wall for wall, _ in times)
        cpu = statistics.median(c for _, c in times)
        print(f"{name:<26} {median:>7.3f} {slowest:>7.3f} {median - baseline:>11.3f} {cpu:>7.3f}")


if __name__ == "__main__":
    main()
