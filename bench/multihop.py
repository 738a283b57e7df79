"""Multi-hop passage recall: HotpotQA and MuSiQue development sets, indexed offline.

The sets are the 100-question train subsets with their passage corpora described in
``SOURCE.md`` beside them (``--data``, default ``/work/shared/data/multihop``). Each
passage (``title``, a blank line, ``text``) is indexed as one document under the file path
``<set>/<index>``, with the local MiniLM embeddings and the NLP extractor. Every question
is asked in each mode through ``aquery_data`` (default ``QueryParam`` otherwise), and
passage recall@k is the share of its gold passages among the first k distinct passages
of the returned chunks, averaged over the questions (k = 2, 5, 10), as the HippoRAG 2
paper measures it.

Modes are upstream's and their ``+pagerank`` variants (:mod:`bench.modes`); ``--lexical
off`` asks them without lexical fusion (upstream's retrieval). Besides recall, it prints
how many questions' gold passages share an entity row (a link a graph signal can follow)
and, for ``--dump``, each question's passages per mode as JSON.

The embedded server's data lives in a cache directory (default
``~/.cache/lightrag-pg-bench/multihop``) and a second run reuses the indexed workspace
(one per set and ``--limit``). ``--limit N`` indexes only the first N passages and asks
only the questions whose gold passages are all among them (the passages are grouped by
question, so these are the first questions with their distractors). ``--reuse`` indexes
nothing and asks the questions whose gold passages are already indexed, so retrieval can
be measured while another run is still indexing the set. Indexing is slow (MiniLM on the
CPU: 994 passages took 45-70 minutes on a busy 2-core machine); index once, then iterate
with ``--reuse``. Usage:
``python bench/multihop.py --set hotpotqa [--limit 200] [--reuse] [--modes naive mix+pagerank]``.
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
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.modes import VARIANTS, query_param
from lightrag_pg import LightRAG
from lightrag_pg.db.connect import connect
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn
from lightrag_pg.db.workspace import create_workspace
from lightrag_pg.defaults import local_embedding_func

MODES: tuple[str, ...] = ("naive", "local", "global", "hybrid", "mix", "mix+pagerank")
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


async def build(rag: LightRAG, name: str, passages: Sequence[Passage]) -> float:
    """Index the passages (those already in the workspace are skipped); seconds taken."""
    started = time.perf_counter()
    result = await rag.ainsert(
        [p.document for p in passages],
        ids=[f"{name}-{i}" for i in range(len(passages))],
        file_paths=[passage_path(name, i) for i in range(len(passages))],
    )
    if result.progress.docs_failed:
        print(f"failed documents: {result.progress.failures}", file=sys.stderr)
    return time.perf_counter() - started


@dataclass(frozen=True, slots=True)
class Score:
    """Mean recall at each depth, the median latency (s) of the query and of its retrieval
    statement (the search stage: keywords and embedding excluded), and each question's
    passages."""

    recall: dict[int, float]
    latency: float
    search: float
    found: tuple[tuple[str, ...], ...]


async def score(rag: LightRAG, name: str, questions: Sequence[Question], mode: str, lexical: bool) -> Score:
    """Ask every question in ``mode`` (a :data:`bench.modes.VARIANTS` name)."""
    sums = dict.fromkeys(DEPTHS, 0.0)
    latencies: list[float] = []
    searches: list[float] = []
    found_all: list[tuple[str, ...]] = []
    for q in questions:
        started = time.perf_counter()
        data = await rag.aquery_data(q.text, query_param(mode, lexical=lexical))
        latencies.append(time.perf_counter() - started)
        timings = data.get("metadata", {}).get("timings_ms", {})
        searches.append((timings.get("search", 0.0) - timings.get("embed", 0.0)) / 1000)
        found = distinct_passages(data.get("data", {}).get("chunks", []))
        found_all.append(tuple(found))
        gold = {passage_path(name, i) for i in q.gold}
        for depth in DEPTHS:
            sums[depth] += recall(found, gold, depth)
    return Score(
        {d: s / len(questions) for d, s in sums.items()},
        statistics.median(latencies),
        statistics.median(searches),
        tuple(found_all),
    )


async def indexed(rag: LightRAG) -> set[str]:
    """The file paths of the processed documents."""
    async with rag.pool.acquire() as c:
        rows = await c.fetch("SELECT file_path FROM doc_status WHERE status = 'processed'")
    return {r["file_path"] for r in rows}


async def linked_share(rag: LightRAG, name: str, questions: Sequence[Question]) -> tuple[float, float]:
    """Shares of ``questions`` whose gold passages share an entity row: some two of them,
    and all of them chained (each gold passage reaches the others through shared entities)."""
    async with rag.pool.acquire() as c:
        rows = await c.fetch(
            "SELECT d.file_path, array_agg(e.entity_name) AS names FROM doc_entities e"
            " JOIN full_docs d ON d.id = e.doc_id GROUP BY d.file_path"
        )
    names = {r["file_path"]: set(r["names"]) for r in rows}
    some = chained = 0
    for q in questions:
        gold = [names.get(passage_path(name, i), set()) for i in q.gold]
        pairs = [(a, b) for a in range(len(gold)) for b in range(a + 1, len(gold))]
        some += any(gold[a] & gold[b] for a, b in pairs)
        reached = {0}
        while grown := {
            b for b in range(len(gold)) if b not in reached and any(gold[a] & gold[b] for a in reached)
        }:
            reached |= grown
        chained += len(reached) == len(gold)
    return some / len(questions), chained / len(questions)


async def main(args: argparse.Namespace) -> None:
    passages, questions = load_set(args.data, args.set)
    if args.limit:
        passages = passages[: args.limit]
        questions = [q for q in questions if max(q.gold) < args.limit]
    dsn = args.dsn or os.environ.get(DSN_ENV) or embedded_dsn(args.cache / "pgdata")
    embedding = local_embedding_func()
    workspace = args.workspace or f"mh_{args.set}_{args.limit or 'all'}"
    conn = await connect(dsn, timeout=30)
    try:
        await create_workspace(conn, dsn, workspace, embedding.embedding_dim, embedding.model_name)
    finally:
        await conn.close()
    rag = LightRAG(dsn=dsn, workspace=workspace, embedding_func=embedding, extractor="nlp")
    try:
        await rag.initialize()
        seconds = 0.0 if args.reuse else await build(rag, args.set, passages)
        done = await indexed(rag)
        questions = [q for q in questions if all(passage_path(args.set, i) in done for i in q.gold)]
        async with rag.pool.acquire() as c:
            entities = await c.fetchval("SELECT count(*) FROM entities")
            relations = await c.fetchval("SELECT count(*) FROM relations")
        print(
            f"{args.set}: {len(done)} passages indexed, {len(questions)} questions; indexing took "
            f"{seconds:.1f} s; {entities} entities, {relations} relations"
        )
        some, chained = await linked_share(rag, args.set, questions)
        print(f"gold passages sharing an entity row: some two {some:.0%}, all chained {chained:.0%}")
        lexical = args.lexical == "on"
        print(
            f"| mode (lexical {args.lexical}) | "
            + " | ".join(f"R@{d}" for d in DEPTHS)
            + " | median latency | retrieval statement |"
        )
        print("|---|" + "---|" * len(DEPTHS) + "---|---|")
        dump: dict[str, list[list[str]]] = {}
        for mode in args.modes:
            got = await score(rag, args.set, questions, mode, lexical)
            dump[mode] = [list(f) for f in got.found]
            cells = " | ".join(f"{got.recall[d]:.3f}" for d in DEPTHS)
            print(
                f"| {mode} | {cells} | {got.latency * 1000:.0f} ms | {got.search * 1000:.0f} ms |", flush=True
            )
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"load average {load}")
        if args.dump:
            gold = [[passage_path(args.set, i) for i in q.gold] for q in questions]
            args.dump.write_text(json.dumps({"questions": [q.text for q in questions], "gold": gold, **dump}))
    finally:
        await rag.finalize()


def add_workspace_args(parser: argparse.ArgumentParser) -> None:
    """The options naming a set and where its indexed workspace is (shared with the bound script)."""
    parser.add_argument("--set", default="hotpotqa", choices=SETS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="where the sets are")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the embedded server's data")
    parser.add_argument("--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else embedded)")
    parser.add_argument("--workspace", default=None, help="default mh_<set>_<limit or all>")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workspace_args(parser)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=VARIANTS)
    parser.add_argument("--lexical", default="on", choices=["on", "off"], help="lexical fusion")
    parser.add_argument("--limit", type=int, default=0, help="index only the first N passages")
    parser.add_argument("--reuse", action="store_true", help="index nothing; ask what is indexed")
    parser.add_argument("--dump", type=Path, default=None, help="write each question's passages (JSON)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    asyncio.run(main(parse_args()))
