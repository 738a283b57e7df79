"""How far a graph re-ranker could lift multi-hop passage recall: an oracle bound.

A graph signal that re-ranks (a walk, a bridge hop, a fusion) can only put first a
passage it can reach. For each question of a set indexed by ``bench/multihop.py`` this
takes naive's ranked passages (``chunk_top_k`` 50: its first 50 are the control, what
a deeper text search alone reaches) and the entities local mode matches
for the question, then reads in one statement (``multihop_bound.sql``) every chunk
reachable from them: naive's first k chunks, the chunks sharing an entity row with those
(one hop through ``entity_fragments`` and the entity's ``source_ids``; "capped": only
through entities in at most 32 chunks, the walk's hub cap) and the chunks of the
matched entities. The bound is the recall@5 an oracle would reach by putting the gold
passages of that candidate set first: the share of gold passages in the set (at most 5).
The budgeted bound keeps at most ``--budget`` candidates, as a real re-ranker must:
naive's k first, then the other candidates most similar to the question.

If the bound over a realistic candidate set is below naive + 10 points, no re-ranking
signal over this graph reaches the issue's target on that set. Usage:
``python bench/multihop_bound.py --set musique --cache /tmp/mh-musique``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.multihop import Question, add_workspace_args, distinct_passages, indexed, load_set, passage_path
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn
from lightrag_pg.db.sqlfile import load_queries
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.store.rows import vectors as vector_values

SQL = load_queries("bench", "multihop_bound.sql")
NAIVE_DEPTH = 50
HUB_CAP = 32
BUDGETS: tuple[int, ...] = (20, 30, 50, 100)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk a graph signal can reach for one question (``multihop_bound.sql``)."""

    path: str
    naive_rank: int | None
    hop_rank: int | None
    hop_rank_capped: int | None
    entity_rank: int | None
    entity_rank_capped: int | None
    similarity: float


def _within(rank: int | None, depth: int) -> bool:
    return rank is not None and rank <= depth


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """Naive's first ``depth`` chunks, with the one-hop chunks of those (``hop``: all
    entities, capped: only those in at most :data:`HUB_CAP` chunks) and the matched
    entities' chunks (``entities``) when asked for."""

    depth: int
    hop: Literal["", "all", "capped"] = ""
    entities: Literal["", "all", "capped"] = ""

    @property
    def label(self) -> str:
        """How the tables name it."""
        parts = [f"naive's first {self.depth}"]
        if self.hop:
            parts.append("one hop" + (", capped" if self.hop == "capped" else ""))
        if self.entities:
            parts.append("matched entities' chunks" + (", capped" if self.entities == "capped" else ""))
        return " + ".join(parts)

    def holds(self, c: Candidate) -> bool:
        """Whether ``c`` is in the set."""
        hop = {"": None, "all": c.hop_rank, "capped": c.hop_rank_capped}[self.hop]
        entity = {"": None, "all": c.entity_rank, "capped": c.entity_rank_capped}[self.entities]
        return _within(c.naive_rank, self.depth) or _within(hop, self.depth) or entity is not None


CANDIDATE_SETS: tuple[CandidateSet, ...] = (
    *(CandidateSet(k) for k in (5, 10, 20, NAIVE_DEPTH)),
    *(
        s
        for k in (10, 20)
        for s in (
            CandidateSet(k, hop="all"),
            CandidateSet(k, hop="capped"),
            CandidateSet(k, entities="all"),
            CandidateSet(k, hop="capped", entities="capped"),
        )
    ),
)


def oracle(candidates: Sequence[Candidate], gold: set[str], depth: int = 5) -> float:
    """Recall@``depth`` of an oracle that puts the gold passages of ``candidates`` first."""
    return min(depth, len(gold & {c.path for c in candidates})) / len(gold)


def budgeted(candidates: Sequence[Candidate], k: int, budget: int) -> list[Candidate]:
    """At most ``budget`` candidates: naive's first ``k`` in naive's order, then the others
    most similar to the question."""
    first = sorted((c for c in candidates if _within(c.naive_rank, k)), key=lambda c: c.naive_rank or 0)
    rest = sorted(
        (c for c in candidates if not _within(c.naive_rank, k)), key=lambda c: (-c.similarity, c.path)
    )
    return (first + rest)[:budget]


async def gather(
    rag: LightRAG, embedding: EmbeddingFunc, questions: Sequence[Question]
) -> list[list[Candidate]]:
    """Each question's reachable candidates: two queries per question, one statement for all."""
    naive_q: list[int] = []
    naive_path: list[str] = []
    naive_rank: list[int] = []
    ent_q: list[int] = []
    ent_name: list[str] = []
    ent_rank: list[int] = []
    for i, q in enumerate(questions):
        data = await rag.aquery_data(q.text, QueryParam(mode="naive", chunk_top_k=NAIVE_DEPTH))
        paths = distinct_passages(data["data"]["chunks"])
        for r, p in enumerate(paths, 1):
            naive_q.append(i)
            naive_path.append(p)
            naive_rank.append(r)
        data = await rag.aquery_data(q.text, QueryParam(mode="local"))
        for r, e in enumerate(data["data"]["entities"], 1):
            ent_q.append(i)
            ent_name.append(e["entity_name"])
            ent_rank.append(r)
    embedded = await embedding([q.text for q in questions])
    async with rag.pool.acquire() as c:
        rows = await c.fetch(
            SQL["reachable"],
            naive_q,
            naive_path,
            naive_rank,
            ent_q,
            ent_name,
            ent_rank,
            list(range(len(questions))),
            vector_values(embedded),
            HUB_CAP,
        )
    out: list[list[Candidate]] = [[] for _ in questions]
    for r in rows:
        out[r["q"]].append(
            Candidate(
                r["file_path"],
                r["naive_rank"],
                r["hop_rank"],
                r["hop_rank_capped"],
                r["entity_rank"],
                r["entity_rank_capped"],
                float(r["similarity"] if r["similarity"] is not None else -1.0),
            )
        )
    return out


async def main(args: argparse.Namespace) -> None:
    _, questions = load_set(args.data, args.set)
    dsn = args.dsn or os.environ.get(DSN_ENV) or embedded_dsn(args.cache / "pgdata")
    workspace = args.workspace or f"mh_{args.set}_{args.limit or 'all'}"
    embedding = local_embedding_func()
    rag = LightRAG(dsn=dsn, workspace=workspace, embedding_func=embedding, extractor="nlp")
    try:
        await rag.initialize()
        done = await indexed(rag)
        questions = [q for q in questions if all(passage_path(args.set, i) in done for i in q.gold)]
        found = await gather(rag, embedding, questions)
    finally:
        await rag.finalize()
    golds = [{passage_path(args.set, i) for i in q.gold} for q in questions]
    print(f"{args.set}: {len(done)} passages indexed, {len(questions)} questions")
    print("| candidate set | mean size | oracle R@5 | " + " | ".join(f"≤ {b}" for b in BUDGETS) + " |")
    print("|---|---|---|" + "---|" * len(BUDGETS))
    for chosen in CANDIDATE_SETS:
        k = chosen.depth
        sets = [[c for c in cands if chosen.holds(c)] for cands in found]
        full = statistics.fmean(oracle(s, g) for s, g in zip(sets, golds, strict=True))
        cut = [
            statistics.fmean(oracle(budgeted(s, k, b), g) for s, g in zip(sets, golds, strict=True))
            for b in BUDGETS
        ]
        size = statistics.fmean(len(s) for s in sets)
        print(f"| {chosen.label} | {size:.0f} | {full:.3f} | " + " | ".join(f"{x:.3f}" for x in cut) + " |")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workspace_args(parser)
    parser.add_argument("--limit", type=int, default=0, help="the --limit the set was indexed with")
    return parser.parse_args(argv)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    asyncio.run(main(parse_args()))
