"""Importing an upstream LightRAG workspace: time and peak memory, by size and shape.

For each size (``--sizes``, default 1,000 and 10,000 documents) a workspace is
synthesized in upstream 1.5.7's formats (:mod:`bench.lightrag_shapes`) and written
in each shape (``--shapes``): a working directory (``files``), upstream's PostgreSQL
tables with an AGE graph (``age``) or with its plain-table graph (``pgtable``). Each
import runs in a process of its own into a new workspace, so its peak resident
memory (``VmHWM``) is its own; the resident size just before the import (the
process with everything loaded) is printed beside it: flat memory means the
difference does not grow with the size.

Baseline, measured in the same run on the smallest size: indexing the same
documents with lightrag_pg's own pipeline, with an LLM that answers at once (from
the synthesized vocabulary) and the same hashed embeddings. A real deployment pays
that plus the LLM, which the import never calls.

    python bench/import_lightrag.py                     # about 8 minutes on 2 cores at load 3
    python bench/import_lightrag.py --sizes 1000 --shapes files,age,pgtable
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import database, workspace_name
from bench.lightrag_shapes import Corpus, synthesize, write_postgres, write_workdir
from lightrag_pg import LightRAG
from lightrag_pg.index.extraction_prompts import COMPLETION_DELIMITER
from lightrag_pg.index.lightrag_compat.report import ImportProgress
from lightrag_pg.testing import classify_prompt, hashed_embedding_func, prompt_input_text, respond

SOURCE_WORKSPACE = "bench_src"
_NAME = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")


def rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (``VmHWM``: unlike ``ru_maxrss``,
    which Linux carries across ``exec``, it starts afresh in a new program, so a child does
    not inherit the peak of the parent that held the synthesized workspace)."""
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def current_rss_mb() -> float:
    """Resident memory of this process now, in MiB."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def child(dsn: str, source: str, source_workspace: str | None, model: str, out: Path) -> None:
    """Import ``source`` into a new workspace; write the figures to ``out``."""
    rag = LightRAG(
        dsn=dsn, workspace=workspace_name("bench_import"), embedding_func=hashed_embedding_func(64)
    )
    await rag.initialize()
    phases: dict[str, float] = {}

    def record(p: ImportProgress) -> None:
        phases[p.phase] = max(phases.get(p.phase, 0.0), rss_mb())

    try:
        before = current_rss_mb()
        started = time.perf_counter()
        report = await rag.aimport_lightrag(source, source_workspace, embedding_model=model, progress=record)
        seconds = time.perf_counter() - started
        figures = {"report": report.to_dict(), "seconds": seconds, "before": before, "peak": rss_mb()}
        out.write_text(json.dumps({**figures, "phases": phases}))
    finally:
        await rag.drop_workspace()


def run_child(dsn: str, source: str, source_workspace: str | None, model: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [
            sys.executable,
            __file__,
            "--child",
            source,
            "--dsn",
            dsn,
            "--model",
            model,
            "--out",
            out.name,
        ]
        if source_workspace:
            command += ["--source-workspace", source_workspace]
        subprocess.run(command, check=True)
        return json.loads(Path(out.name).read_text())


class ShapeLLM:
    """An LLM answering lightrag_pg's extraction prompts at once for a synthesized corpus: every
    vocabulary name in a chunk is an entity, names sharing a sentence are related."""

    def __init__(self, corpus: Corpus) -> None:
        self.types = {name: e.kind for name, e in corpus.entities.items()}
        self.calls = 0

    async def __call__(self, prompt: str, system_prompt: str | None = None, **_: Any) -> str:
        self.calls += 1
        if classify_prompt(prompt) != "extraction":
            return respond(prompt, system_prompt)
        text = prompt_input_text(prompt) or ""
        lines = []
        for sentence in text.split(". "):
            names = [n for n in dict.fromkeys(_NAME.findall(sentence)) if n in self.types]
            for name in names:
                lines.append(f"entity<|#|>{name}<|#|>{self.types[name]}<|#|>{name} is mentioned: {sentence}.")
            for a, b in itertools.pairwise(names):
                lines.append(f"relation<|#|>{a}<|#|>{b}<|#|>related<|#|>{sentence}.")
        return "\n".join([*lines, COMPLETION_DELIMITER])


async def reindex_baseline(dsn: str, corpus: Corpus) -> tuple[float, int]:
    """Seconds to index the corpus's documents with lightrag_pg's pipeline, and the LLM calls it made."""
    llm = ShapeLLM(corpus)
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("bench_reindex"),
        llm_model_func=llm,
        embedding_func=hashed_embedding_func(64),
    )
    await rag.initialize()
    try:
        docs = list(corpus.docs.values())
        started = time.perf_counter()
        await rag.ainsert([d["content"] for d in docs], file_paths=[d["file_path"] for d in docs])
        return time.perf_counter() - started, llm.calls
    finally:
        await rag.drop_workspace()


async def postgres_source(dsn: str, corpus: Corpus, graph: str) -> str:
    """A new database of the server holding ``corpus`` as upstream's PostgreSQL storages; its DSN."""
    import asyncpg

    name = workspace_name("bench_upstream")
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"CREATE DATABASE {name}")  # a fresh name of letters, digits and _
    finally:
        await conn.close()
    source = urlunsplit(urlsplit(dsn)._replace(path=f"/{name}"))
    conn = await asyncpg.connect(source)
    try:
        await write_postgres(corpus, conn, SOURCE_WORKSPACE, graph=graph)
    finally:
        await conn.close()
    return source


def row(size: int, shape: str, result: dict[str, Any], source_size: str) -> str:
    report = result["report"]
    written = sum(c["written"] for c in report["counts"].values())
    totals = report["totals"]
    seconds = result["seconds"]
    return (
        f"{size:>6} {shape:<8} {source_size:>9} {totals['chunks']:>7} {totals['entities']:>8}"
        f" {totals['relations']:>9} {seconds:>8.1f} {size / seconds:>7.0f} {written / seconds:>8.0f}"
        f" {result['before']:>9.0f} {result['peak']:>8.0f} {result['peak'] - result['before']:>7.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="documents per synthesized workspace")
    parser.add_argument("--shapes", default="files,age", help="files, age and/or pgtable")
    parser.add_argument("--dsn", default=None, help="PostgreSQL DSN (default: an embedded server)")
    parser.add_argument("--no-baseline", action="store_true", help="skip indexing the smallest size")
    parser.add_argument("--child", metavar="SOURCE", help=argparse.SUPPRESS)
    parser.add_argument("--source-workspace", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="hashed-bow-64", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.dsn, args.child, args.source_workspace, args.model, args.out))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = [s.strip() for s in args.shapes.split(",")]
    print(
        f"{'docs':>6} {'shape':<8} {'source':>9} {'chunks':>7} {'entities':>8} {'relations':>9}"
        f" {'seconds':>8} {'docs/s':>7} {'rows/s':>8} {'RSS0 MiB':>9} {'peak MiB':>8} {'growth':>7}",
        flush=True,
    )
    with database(args.dsn) as dsn, tempfile.TemporaryDirectory(prefix="lightrag-import-bench-") as tmp:
        for size in sizes:
            corpus = synthesize(size)
            for shape in shapes:
                if shape == "files":
                    folder = write_workdir(corpus, Path(tmp) / f"workdir-{size}")
                    mb = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
                    result = run_child(dsn, str(folder), None, corpus.model)
                    print(row(size, shape, result, f"{mb:.0f} MiB"), flush=True)
                else:
                    source = asyncio.run(postgres_source(dsn, corpus, shape))
                    result = run_child(dsn, source, SOURCE_WORKSPACE, corpus.model)
                    print(row(size, shape, result, "tables"), flush=True)
                slowest = sorted(result["report"]["phase_seconds"].items(), key=lambda kv: -kv[1])[:4]
                grew = next(  # the phase by whose end the peak was reached (the peak only grows)
                    ((k, v) for k, v in result["phases"].items() if v >= result["peak"] - 1), ("-", 0.0)
                )
                print(
                    "         slowest phases: "
                    + ", ".join(f"{k} {v:.1f} s" for k, v in slowest)
                    + f"; peak resident memory reached during {grew[0]} ({grew[1]:.0f} MiB)",
                    flush=True,
                )
            if size == min(sizes) and not args.no_baseline:
                seconds, calls = asyncio.run(reindex_baseline(dsn, corpus))
                print(
                    f"baseline: indexing the {size} documents with lightrag_pg's pipeline and an instant "
                    f"LLM took {seconds:.1f} s ({size / seconds:.0f} docs/s) and {calls} LLM calls; "
                    "the import makes none",
                    flush=True,
                )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
