"""Retrieval on every development set, offline: passage recall, MRR and latency per mode.

The sets are those of :mod:`bench.sets`: the multi-hop HotpotQA and MuSiQue subsets
(``SOURCE.md`` in ``--data``, default ``/work/shared/data/multihop``) and git's manual,
and four FAQs from Debian packages (``bench/data/multihop/SOURCE.md``). Each is indexed
at its full size and cut to 1,000 passages (``--sizes``), one workspace per set and
size, with the local MiniLM embeddings and the NLP extractor; every question is then asked
through ``aquery_data`` in each mode (``--modes``, default naive, mix, mix+bridge and
mix+pagerank, :mod:`bench.modes`) with lexical fusion on and off. Passage recall@k is the
share of a question's gold passages among the first k distinct passages of the returned
chunks (k = 2, 5, 10), as the HippoRAG 2 paper measures it; MRR is the mean reciprocal
rank of the first gold passage (for an FAQ, its one answer passage). Latency is the median
of the whole query and of its retrieval statement (the search stage, keywords and
embedding excluded). The table ends with the defaults rule: each mode and switch
against the old default (mix, lexical on), which it may replace only if it loses no
figure on any set by more than 1 point.

The embedded server's data and the Debian packages live in a cache directory (default
``~/.cache/lightrag-pg-bench/multihop``); a second run skips what is indexed, so only the
questions are asked again. ``--reuse`` indexes nothing and asks the questions whose gold
passages are indexed. Indexing is MiniLM-bound: on the shared 2-core machine at load
average about 10, HotpotQA's 994 passages took 8 minutes; the two 300-question sets
(7,981 passages) took 20 minutes at load 2. Usage:
``python bench/multihop.py [--sets musique gitfaq] [--sizes full] [--modes naive mix+bridge]
[--lexical on] [--bridge lead=0.1 keep_home=1]`` (``--bridge``: the bridge's constants,
``store.retrieval.Bridge``, for every mode that takes it).

The helpers at the top (:func:`load_set`, :func:`passage_path`, ...) serve the bound
script (``bench/multihop_bound.py``) and ``bench/ingest.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.modes import VARIANTS, query_param
from bench.sets import ALL, EvalSet
from bench.sets import load as sets_load
from lightrag_pg import LightRAG
from lightrag_pg.db.connect import connect
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn
from lightrag_pg.db.identifiers import WorkspaceName
from lightrag_pg.db.workspace import create_workspace
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.query import retrieve
from lightrag_pg.store.retrieval import Bridge

MODES: tuple[str, ...] = ("naive", "mix", "mix+bridge", "mix+pagerank")
SETS: tuple[str, ...] = ("hotpotqa", "musique")
DEPTHS: tuple[int, ...] = (2, 5, 10)
DEFAULT_DATA = Path("/work/shared/data/multihop")
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lightrag-pg-bench" / "multihop"
)


@dataclass(frozen=True, slots=True)
class Passage:
    """One corpus passage: its title and text."""

    title: str
    text: str

    @property
    def document(self) -> str:
        """The text indexed for the passage."""
        return f"{self.title}\n\n{self.text}"


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the indices of its gold passages."""

    text: str
    gold: tuple[int, ...]


def load_set(data: Path, name: str) -> tuple[list[Passage], list[Question]]:
    """The corpus and questions of one set."""
    corpus = json.loads((data / f"{name}_train100_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((data / f"{name}_train100_questions.json").read_text(encoding="utf-8"))
    return (
        [Passage(p["title"], p["text"]) for p in corpus],
        [Question(q["question"], tuple(q["supporting_passage_ids"])) for q in questions],
    )


def passage_path(name: str, index: int) -> str:
    """The file path passage ``index`` of set ``name`` is indexed under."""
    return f"{name}/{index}"


def distinct_passages(chunks: Sequence[dict[str, str]]) -> list[str]:
    """The distinct file paths of ``chunks``, in order."""
    return list(dict.fromkeys(c["file_path"] for c in chunks))


def recall(found: Sequence[str], gold: set[str], depth: int) -> float:
    """Share of ``gold`` among the first ``depth`` of ``found``."""
    return len(gold & set(found[:depth])) / len(gold)


async def indexed(rag: LightRAG) -> set[str]:
    """The file paths of the processed documents."""
    async with rag.pool.acquire() as c:
        rows = await c.fetch("SELECT file_path FROM doc_status WHERE status = 'processed'")
    return {r["file_path"] for r in rows}


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the harness's table: a set at one size, a mode and a lexical switch."""

    set: str
    kind: str
    passages: int
    questions: int
    mode: str
    lexical: bool
    recall: dict[int, float]
    mrr: float
    latency: float
    search: float
    found: tuple[tuple[str, ...], ...] = ()

    @property
    def label(self) -> str:
        """The set and its size."""
        return f"{self.set} ({self.passages:,} p.)"


async def ask(rag: LightRAG, s: EvalSet, mode: str, lexical: bool) -> Row:
    """Ask every question of ``s`` in ``mode``: recall at :data:`DEPTHS`, MRR of the first
    gold passage, median latencies."""
    sums = dict.fromkeys(DEPTHS, 0.0)
    mrr = 0.0
    latencies: list[float] = []
    searches: list[float] = []
    found_all: list[tuple[str, ...]] = []
    for q in s.asks:
        started = time.perf_counter()
        data = await rag.aquery_data(q.text, query_param(mode, lexical=lexical))
        latencies.append(time.perf_counter() - started)
        timings = data.get("metadata", {}).get("timings_ms", {})
        searches.append((timings.get("search", 0.0) - timings.get("embed", 0.0)) / 1000)
        found = distinct_passages(data.get("data", {}).get("chunks", []))
        found_all.append(tuple(found))
        gold = set(q.gold)
        for depth in DEPTHS:
            sums[depth] += recall(found, gold, depth)
        mrr += next((1 / (r + 1) for r, path in enumerate(found) if path in gold), 0.0)
    n = len(s.asks)
    return Row(
        s.name,
        s.kind,
        len(s.docs),
        n,
        mode,
        lexical,
        {d: v / n for d, v in sums.items()},
        mrr / n,
        statistics.median(latencies),
        statistics.median(searches),
        tuple(found_all),
    )


async def open_workspace(dsn: str, embedding: EmbeddingFunc, name: str) -> LightRAG:
    """A started :class:`LightRAG` over workspace ``name`` (created if new)."""
    conn = await connect(dsn, timeout=30)
    try:
        await create_workspace(conn, dsn, WorkspaceName(name), embedding.embedding_dim, embedding.model_name)
    finally:
        await conn.close()
    rag = LightRAG(dsn=dsn, workspace=name, embedding_func=embedding, extractor="nlp")
    await rag.initialize()
    return rag


async def run_set(
    args: argparse.Namespace, dsn: str, embedding: EmbeddingFunc, s: EvalSet, dump: dict[str, object]
) -> list[Row]:
    """Index ``s`` (unless ``--reuse``) and ask its questions in every mode and switch; each
    question's passages go to ``dump`` under the set's label."""
    workspace = f"mh_{s.corpus.replace('-', '_')}_{s.limit or 'all'}"
    rag = await open_workspace(dsn, embedding, workspace)
    try:
        started = time.perf_counter()
        if not args.reuse:
            result = await rag.ainsert(
                [d.text for d in s.docs], ids=[d.id for d in s.docs], file_paths=[d.path for d in s.docs]
            )
            if result.progress.docs_failed:
                print(f"failed documents: {result.progress.failures}", file=sys.stderr)
        seconds = time.perf_counter() - started
        done = await indexed(rag)
        s = replace(s, asks=tuple(q for q in s.asks if set(q.gold) <= done))
        print(
            f"{s.name}: {len(s.docs)} passages ({len(done)} indexed, {seconds:.0f} s), "
            f"{len(s.asks)} questions",
            file=sys.stderr,
            flush=True,
        )
        if not s.asks:
            return []
        rows = []
        for mode in args.modes:
            for lexical in args.lexical:
                rows.append(await ask(rag, s, mode, lexical))
                print(line(rows[-1]), file=sys.stderr, flush=True)
        found = {f"{r.mode} lexical {'on' if r.lexical else 'off'}": [list(f) for f in r.found] for r in rows}
        dump[rows[0].label] = {
            "questions": [q.text for q in s.asks],
            "gold": [q.gold for q in s.asks],
            **found,
        }
        return rows
    finally:
        await rag.finalize()


HEADER = "| set | questions | mode | lexical | R@2 | R@5 | R@10 | MRR | latency | statement |"


def line(r: Row) -> str:
    """One table line."""
    cells = " | ".join(f"{r.recall[d]:.3f}" for d in DEPTHS)
    return (
        f"| {r.label} | {r.questions} | {r.mode} | {'on' if r.lexical else 'off'} | {cells} | {r.mrr:.3f} | "
        f"{r.latency * 1000:.0f} ms | {r.search * 1000:.0f} ms |"
    )


def verdict(rows: Sequence[Row], old: tuple[str, bool] = ("mix", True)) -> list[str]:
    """Each mode and switch against ``old`` (the old default), by the defaults rule: it may
    replace it if on every set it wins or ties within 1 point on every figure (R@2, R@5,
    R@10, MRR) and loses on none by more. Returns one line per candidate."""
    by: dict[tuple[str, bool], dict[str, Row]] = {}
    for r in rows:
        by.setdefault((r.mode, r.lexical), {})[r.label] = r
    base = by.get(old, {})
    lines = []
    for key, sets in by.items():
        if key == old:
            continue
        deltas = [
            (100 * (fig(sets[s]) - fig(base[s])), f"{s} {name}")
            for s in base
            if s in sets
            for name, fig in (
                *((f"R@{d}", lambda r, d=d: r.recall[d]) for d in DEPTHS),
                ("MRR", lambda r: r.mrr),
            )
        ]
        if not deltas:
            continue
        worst = min(deltas)
        wins = sum(d > 1 for d, _ in deltas)
        ok = worst[0] >= -1
        lines.append(
            f"{key[0]} lexical {'on' if key[1] else 'off'}: worst {worst[0]:+.1f} ({worst[1]}), "
            f"{wins} figures up by more than 1 point; "
            f"{'may replace' if ok else 'may not replace'} the old default"
        )
    return lines


def targets(rows: Sequence[Row], naive: tuple[str, bool] = ("naive", True)) -> list[str]:
    """Each mode and switch against the issue's targets: on every multi-hop set, R@5 at
    least 10 points above ``naive``'s without a lower R@2; on every FAQ, R@5 within 1 point
    of the set's best mode. Returns one line per candidate."""
    by: dict[tuple[str, bool], dict[str, Row]] = {}
    for r in rows:
        by.setdefault((r.mode, r.lexical), {})[r.label] = r
    best = {r.label: max(x.recall[5] for x in rows if x.label == r.label) for r in rows}
    lines = []
    for key, sets in by.items():
        hops = [
            (r.recall[5] - by[naive][s].recall[5], r.recall[2] - by[naive][s].recall[2], s)
            for s, r in sets.items()
            if r.kind == "multihop" and s in by.get(naive, {})
        ]
        faqs = [(best[s] - r.recall[5], s) for s, r in sets.items() if r.kind == "faq"]
        parts = []
        if hops:
            gain = min(hops)
            r2 = min(hops, key=lambda h: h[1])
            parts.append(
                f"R@5 over naive at least {100 * gain[0]:+.1f} ({gain[2]}), R@2 {100 * r2[1]:+.1f} ({r2[2]})"
            )
        if faqs:
            gap = max(faqs)
            parts.append(f"FAQ R@5 at most {100 * gap[0]:.1f} below the best ({gap[1]})")
        met = all(round(g, 4) >= 0.1 and round(d2, 4) >= 0 for g, d2, _ in hops)
        met = met and all(round(g, 4) <= 0.01 for g, _ in faqs)
        parts.append(f"targets {'met' if met else 'not met'}")
        lines.append(f"{key[0]} lexical {'on' if key[1] else 'off'}: {'; '.join(parts)}")
    return lines


def bridge_of(settings: Sequence[str]) -> Bridge:
    """The default :class:`Bridge` with ``name=value`` settings (``--bridge lead=0.1 keep=2``)."""
    types = {f.name: type(getattr(Bridge(), f.name)) for f in fields(Bridge)}
    changed: dict[str, Any] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in types:
            raise SystemExit(f"--bridge {setting}: Bridge has no {name!r}; it has {', '.join(types)}")
        changed[name] = value.lower() in ("1", "true", "on") if types[name] is bool else types[name](value)
    return replace(Bridge(), **changed)


async def main(args: argparse.Namespace) -> None:
    retrieve.BRIDGE = bridge_of(args.bridge)
    if args.bridge:
        print(f"bridge: {retrieve.BRIDGE}", file=sys.stderr)
    dsn = args.dsn or os.environ.get(DSN_ENV) or embedded_dsn(args.cache / "pgdata")
    embedding = local_embedding_func()
    sets: list[EvalSet] = []
    for name in args.sets:
        whole = sets_load(name, args.data, args.cache / "docs")
        for size in args.sizes:
            cut = whole.cut(0 if size == "full" else int(size))
            if all((cut.name, len(cut.docs)) != (s.name, len(s.docs)) for s in sets):
                sets.append(cut)
    started = time.perf_counter()
    rows: list[Row] = []
    dump: dict[str, object] = {}
    for s in sets:
        rows += await run_set(args, dsn, embedding, s, dump)
    if args.dump:
        args.dump.write_text(json.dumps(dump))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{len(rows)} rows in {time.perf_counter() - started:.0f} s; load average {load}")
    print(HEADER)
    print("|---|---|---|---|" + "---|" * (len(DEPTHS) + 3))
    print("\n".join(line(r) for r in rows))
    print("\n".join(verdict(rows)))
    print("\n".join(targets(rows)))


def add_workspace_args(parser: argparse.ArgumentParser, sets: Sequence[str] = SETS) -> None:
    """The options naming a set (one of ``sets``) and where its indexed workspace is (shared
    with the bound script and the starts script)."""
    parser.add_argument("--set", default="hotpotqa", choices=sets)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="where the sets are")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the embedded server's data")
    parser.add_argument("--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else embedded)")
    parser.add_argument("--workspace", default=None, help="default mh_<set>_<limit or all>")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(ALL), choices=ALL)
    parser.add_argument("--sizes", nargs="+", default=["full", "1000"], help="full and/or a passage count")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="where the HippoRAG sets are")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="server data and Debian packages")
    parser.add_argument("--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else embedded)")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=VARIANTS)
    parser.add_argument(
        "--lexical", nargs="+", default=[True, False], type=lambda v: v == "on", help="on and/or off"
    )
    parser.add_argument("--reuse", action="store_true", help="index nothing; ask what is indexed")
    parser.add_argument(
        "--bridge", nargs="*", default=[], metavar="NAME=VALUE", help="Bridge constants to change (lead=0.1)"
    )
    parser.add_argument("--dump", type=Path, default=None, help="write each question's passages (JSON)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    asyncio.run(main(parse_args()))
