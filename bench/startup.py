"""Start-up time of the command line: ``--help`` and a warm query, against ``python -c pass``.

A small workspace is created first with ``lightrag-pg insert`` (offline: spaCy
extraction, local MiniLM embeddings, no LLM). Each command then runs in a new
process ``--runs`` times; the report gives the median and the slowest wall
time, the median minus the bare interpreter start measured in the same run,
and the median CPU time (user + system, all threads) of the process. A
question is asked once before its runs are timed: a warm query is a question
asked before (its offline keywords, vectors and token counts come from the
cache), on a running server; a new question is one never asked before.

Bytecode: by default the commands run in this environment as it is; where
``PYTHONDONTWRITEBYTECODE`` is set, an editable checkout is recompiled by every
process. ``--bytecode`` measures what an installed package has (pip compiles
on install): the checkout is compiled first with ``compileall``, into a
temporary ``PYTHONPYCACHEPREFIX`` (nothing is written into the checkout).
``--checkout DIR`` (repeatable) times the same commands from other source
trees too (e.g. an older commit, from ``git archive``), in the same run,
against the same workspace.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import database

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "lightrag_pg" / "sample"
DOCUMENTS = [SAMPLE / "06-chunking.md", SAMPLE / "13-query-modes.md", SAMPLE / "14-budgets.md"]
QUESTION = "How are the token budgets applied to a question?"
NEW_QUESTION = "How is a document cut into chunks, run {run}?"
"""Asked once per run: a cold query (keywords extracted, the question embedded, tokens counted)."""


def offline_env(root: Path, pycache: Path | None) -> dict[str, str]:
    """This environment without LLM or embedding endpoints, with ``root`` first on the path;
    with ``pycache``, bytecode is written and read there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "EMBEDDING_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "lightrag_pg", *args]


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``command``, in the first directory of its
    ``PYTHONPATH`` (``python -m`` puts the working directory first); fails loudly if it fails."""
    cwd = env["PYTHONPATH"].split(os.pathsep)[0]
    cpu = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    times = (time.perf_counter() - started, children_cpu() - cpu)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return times


def cases(target: list[str]) -> dict[str, list[str]]:
    return {
        "lightrag-pg --help": cli("--help"),
        "lightrag-pg query --help": cli("query", "--help"),
        "query (mix, no LLM)": cli("query", QUESTION, *target),
        "query (naive, no LLM)": cli("query", QUESTION, "--mode", "naive", *target),
        "new question (mix, no LLM)": cli("query", NEW_QUESTION, *target),
    }


def filled(command: list[str], run: str) -> list[str]:
    """``command`` with ``{run}`` replaced (a question never asked before, for each run)."""
    return [part.replace("{run}", run) for part in command]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="default: $LIGHTRAG_PG_DSN, else a temporary embedded server")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bytecode", action="store_true", help="compile first, as an installed package is")
    parser.add_argument("--checkout", type=Path, action="append", default=[], help="another tree to time")
    args = parser.parse_args()
    roots = {"": ROOT} | {f" [{path.name}]": path.resolve() for path in args.checkout}
    workspace = f"bench_startup_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="lightrag-pg-pycache-") as tmp:
        pycache = Path(tmp) if args.bytecode else None
        envs = {label: offline_env(root, pycache) for label, root in roots.items()}
        if pycache is not None:
            for root in roots.values():
                subprocess.run(
                    [sys.executable, "-m", "compileall", "-q", str(root / "lightrag_pg")],
                    env=envs[""],
                    check=True,
                )
        with database(args.dsn) as dsn:
            target = ["--workspace", workspace, "--dsn", dsn]
            timed(cli("insert", *map(str, DOCUMENTS), *target), envs[""])
            commands = {"python -c pass": ([sys.executable, "-c", "pass"], envs[""])}
            for label, env in envs.items():
                for name, command in cases(target).items():
                    commands[name + label] = (command, env)
            for name, (command, env) in commands.items():  # questions asked before; bytecode written
                timed(filled(command, f"{name} warm-up"), env)
            load_before = os.getloadavg()[0]
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            try:
                for run in range(args.runs):  # interleaved, so that load changes hit every command alike
                    for name, (command, env) in commands.items():
                        results[name].append(timed(filled(command, f"{name} {run}"), env))
            finally:
                drop = cli("drop-workspace", workspace, "--yes", "--dsn", dsn)
                subprocess.run(drop, env=envs[""], capture_output=True)
    baseline = statistics.median(wall for wall, _ in results["python -c pass"])
    bytecode = "compiled first (--bytecode)" if args.bytecode else _bytecode_as_is()
    print(
        f"start-up, {args.runs} runs each (seconds; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after; bytecode: {bytecode})"
    )
    width = max(map(len, results)) + 1
    print(f"{'command':<{width}} {'median':>7} {'max':>7} {'- baseline':>11} {'CPU':>7}")
    for name, times in results.items():
        median = statistics.median(wall for wall, _ in times)
        slowest = max(wall for wall, _ in times)
        cpu = statistics.median(c for _, c in times)
        print(f"{name:<{width}} {median:>7.3f} {slowest:>7.3f} {median - baseline:>11.3f} {cpu:>7.3f}")


def _bytecode_as_is() -> str:
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return "as is, PYTHONDONTWRITEBYTECODE set (the checkout is recompiled by every process)"
    return "as is"


if __name__ == "__main__":
    main()
