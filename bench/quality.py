"""Retrieval quality on the Debian FAQ: does the answer passage come back?

Each answer passage of the Debian FAQ (see :mod:`bench.debian_faq`) is indexed as
one document with the local MiniLM embeddings and the NLP extractor (the offline
path the demo uses), or with ``--extractor llm`` the LLM answers recorded in
``bench/data`` (:mod:`bench.recorded_llm`: an LLM's extraction and query keywords,
replayed). Then every question is asked in each mode, with and
without lexical fusion, through ``aquery_data``, and the rank of the first chunk
of the question's own passage among the distinct passages returned gives
recall@5, recall@10 and MRR. Two question sets: the FAQ's headings as written,
and those whose frame :func:`bench.debian_faq.reword` rewrites ("How do I X?" ->
"What is the way to X?").

For local mode it also reports how often the question's own entities are kept:
of the workspace's entity names that occur in the question as whole words, the
share found among the retrieved entities.

The corpus, the embedded server's data and the indexed workspace live in a cache
directory (default ``~/.cache/lightrag-pg-bench/quality``); a second run reuses the
workspace (``--backend`` chooses the lexical backend of a new one). Usage:
``python bench/quality.py [--modes naive mix] [--lexical on] [--limit 40] [--ranks ranks.json]``;
``--ranks`` writes each question's rank of its passage per mode and switch, and the
questions one mode finds in its first 5 and another does not are printed by
``--compare naive mix``. Measured
on 2 cores at load average 10: indexing the 96 passages took 15 minutes, and each
query 0.35-0.5 s (a full run asks 1,620); a lighter machine is several times faster.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.debian_faq import FaqItem, fetch_faq_text, parse_faq, reword
from bench.modes import MODES, VARIANTS, query_param
from bench.recorded_llm import RecordedLLM
from lightrag_pg import LightRAG
from lightrag_pg.db.connect import connect
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn, stop_server
from lightrag_pg.db.workspace import create_workspace
from lightrag_pg.defaults import local_embedding_func

DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lightrag-pg-bench" / "quality"
)
WORKSPACE = "faq_quality"


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the passage (file path) that answers it."""

    text: str
    passage: str


@dataclass(frozen=True, slots=True)
class Score:
    """recall@5, recall@10 and MRR of one mode over one question set, local's entity keep
    rate, and each question's rank of its passage (None: not returned)."""

    recall5: float
    recall10: float
    mrr: float
    own_entities: float | None
    ranks: tuple[int | None, ...] = ()


def passage_path(item: FaqItem) -> str:
    """The file path a passage is indexed under."""
    return f"debian-faq/{item.number}"


def question_sets(items: Sequence[FaqItem]) -> dict[str, list[Question]]:
    """The questions as written, and the reworded ones."""
    asked = [Question(i.question, passage_path(i)) for i in items]
    reworded = [Question(r, passage_path(i)) for i in items if (r := reword(i.question))]
    return {"as written": asked, "reworded": reworded}


def passage_rank(chunks: Sequence[dict[str, str]], passage: str) -> int | None:
    """1-based rank of ``passage`` among the distinct passages of ``chunks``, or None."""
    seen: list[str] = []
    for chunk in chunks:
        path = chunk["file_path"]
        if path not in seen:
            seen.append(path)
        if path == passage:
            return len(seen)
    return None


def named_in(question: str, names: Sequence[str]) -> set[str]:
    """Entity names (3+ characters) occurring in ``question`` as whole words, case-insensitively."""
    lowered = question.lower()
    return {n for n in names if len(n) >= 3 and re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", lowered)}


async def score(
    rag: LightRAG, questions: Sequence[Question], mode: str, lexical: bool, names: Sequence[str]
) -> Score:
    """Ask every question in ``mode``; the rank of its passage gives the scores."""
    ranks: list[int | None] = []
    kept: list[float] = []
    for q in questions:
        data = await rag.aquery_data(q.text, query_param(mode, lexical=lexical))
        result = data.get("data", {})
        ranks.append(passage_rank(result.get("chunks", []), q.passage))
        own = named_in(q.text, names)
        if mode.startswith("local") and own:
            found = {e["entity_name"] for e in result.get("entities", [])}
            kept.append(len(own & found) / len(own))
    n = len(ranks)
    return Score(
        recall5=sum(r is not None and r <= 5 for r in ranks) / n,
        recall10=sum(r is not None and r <= 10 for r in ranks) / n,
        mrr=sum(1 / r for r in ranks if r is not None) / n,
        own_entities=sum(kept) / len(kept) if kept else None,
        ranks=tuple(ranks),
    )


async def build(rag: LightRAG, items: Sequence[FaqItem]) -> float:
    """Index the passages (documents already in the workspace are skipped); seconds taken."""
    started = time.perf_counter()
    result = await rag.ainsert(
        [i.answer for i in items],
        ids=[f"faq-{i.number}" for i in items],
        file_paths=[passage_path(i) for i in items],
    )
    if getattr(result, "failed", None):
        print(f"failed documents: {result.failed}", file=sys.stderr)
    return time.perf_counter() - started


def rank_rows(
    results: dict[tuple[str, str, bool], Score], sets: dict[str, list[Question]]
) -> list[dict[str, object]]:
    """One row per question set, mode, switch and question: the rank of its passage."""
    return [
        {"set": name, "mode": mode, "lexical": lexical, "question": q.text, "rank": rank}
        for (name, mode, lexical), s in results.items()
        for q, rank in zip(sets[name], s.ranks, strict=True)
    ]


def differences(rows: Sequence[dict[str, object]], first: str, second: str, depth: int = 5) -> list[str]:
    """The questions (per set and switch) whose passage one of ``first`` and ``second``
    ranks within ``depth`` and the other does not, with both ranks."""
    ranks: dict[tuple[object, ...], dict[object, object]] = {}
    for r in rows:
        ranks.setdefault((r["set"], r["lexical"], r["question"]), {})[r["mode"]] = r["rank"]

    def found(rank: object) -> bool:
        return isinstance(rank, int) and rank <= depth

    lines = []
    for (name, lexical, question), by_mode in ranks.items():
        a, b = by_mode.get(first), by_mode.get(second)
        if found(a) != found(b):
            who = first if found(a) else second
            lines.append(f"only {who}: {name}, lexical {'on' if lexical else 'off'}: {a} | {b}: {question}")
    return lines


def table(
    results: dict[tuple[str, str, bool], Score],
    sets: Sequence[str],
    modes: Sequence[str],
    switches: Sequence[bool],
) -> str:
    """A markdown table: one row per question set, mode and lexical switch."""
    lines = [
        "| questions | mode | lexical | recall@5 | recall@10 | MRR | local: own entities kept |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in sets:
        for mode in modes:
            for lexical in switches:
                s = results[(name, mode, lexical)]
                own = "" if s.own_entities is None else f"{s.own_entities:.0%}"
                lines.append(
                    f"| {name} | {mode} | {'on' if lexical else 'off'} | {s.recall5:.0%} | "
                    f"{s.recall10:.0%} | {s.mrr:.2f} | {own} |"
                )
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    cache: Path = args.cache
    items = parse_faq(fetch_faq_text(cache))
    if args.limit:
        items = items[: args.limit]
    sets = question_sets(items)
    data_dir = cache / "pgdata"
    dsn = args.dsn or os.environ.get(DSN_ENV) or embedded_dsn(data_dir)
    embedding = local_embedding_func()
    workspace = args.workspace or (WORKSPACE if args.extractor == "nlp" else f"{WORKSPACE}_llm")
    conn = await connect(dsn, timeout=30)
    try:
        await create_workspace(
            conn, dsn, workspace, embedding.embedding_dim, embedding.model_name, args.backend
        )
    finally:
        await conn.close()
    llm = RecordedLLM() if args.extractor == "llm" else None
    rag = LightRAG(
        dsn=dsn, workspace=workspace, embedding_func=embedding, extractor=args.extractor, llm_model_func=llm
    )
    try:
        await rag.initialize()
        print(f"{len(items)} passages; questions: " + ", ".join(f"{k} {len(v)}" for k, v in sets.items()))
        print(f"indexing took {await build(rag, items):.1f} s")
        async with rag.pool.acquire() as conn:
            names = [r[0] for r in await conn.fetch("SELECT name FROM entities")]
            backend = await conn.fetchval("SELECT lexical_backend FROM workspace_info")
        print(f"{len(names)} entities; lexical backend: {backend}")
        switches = {"both": (False, True), "off": (False,), "on": (True,)}[args.lexical]
        results: dict[tuple[str, str, bool], Score] = {}
        started = time.perf_counter()
        for name, questions in sets.items():
            for mode in args.modes:
                for lexical in switches:
                    results[(name, mode, lexical)] = await score(rag, questions, mode, lexical, names)
        asked = sum(len(v) for v in sets.values()) * len(args.modes) * len(switches)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{asked} queries in {time.perf_counter() - started:.1f} s; load average {load}")
        print(table(results, list(sets), args.modes, switches))
        rows = rank_rows(results, sets)
        if args.ranks:
            args.ranks.write_text(json.dumps(rows, indent=1))
        if args.compare:
            print("\n".join(differences(rows, *args.compare)))
    finally:
        await rag.finalize()
        if not (args.dsn or os.environ.get(DSN_ENV)) and args.stop:
            stop_server(data_dir)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="corpus and server data")
    parser.add_argument("--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else embedded)")
    parser.add_argument(
        "--workspace", default=None, help=f"default {WORKSPACE}, {WORKSPACE}_llm for --extractor llm"
    )
    parser.add_argument(
        "--extractor",
        default="nlp",
        choices=["nlp", "llm"],
        help="nlp: the offline extractor; llm: the recorded LLM answers (bench/recorded_llm.py)",
    )
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=VARIANTS)
    parser.add_argument(
        "--backend", default=None, choices=["bm25", "tsvector"], help="of a new workspace (default tsvector)"
    )
    parser.add_argument("--lexical", default="both", choices=["both", "off", "on"], help="lexical fusion")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N passages")
    parser.add_argument("--stop", action="store_true", help="stop the embedded server at the end")
    parser.add_argument("--ranks", type=Path, default=None, help="write each question's ranks (JSON)")
    parser.add_argument(
        "--compare", nargs=2, metavar=("MODE", "MODE"), choices=VARIANTS, help="questions only one finds in 5"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    asyncio.run(main(parse_args()))
