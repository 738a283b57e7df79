"""The same answers on one node and on a Citus cluster, before and after a move and ANALYZE.

Starts a coordinator and two workers from ``../shared/citus`` (built once and cached, as
the tests do; see ``tests/citus_cluster.py``), indexes the generated corpus of
``bench/corpus.py`` twice on the coordinator, as a plain workspace (a single PostgreSQL
node) and as a distributed one (its tables on a worker), and asks both the same questions
with ``aquery_data`` in the five retrieval modes. A question counts as *different* when,
in any mode, its entities, relations or chunks (names, pairs, chunk ids, in order) differ.
It reports how many of the questions differ:

1. between the plain and the distributed workspace, as indexed (the statistics as the
   batch and autovacuum left them) and after ANALYZE of both;
2. on the distributed workspace, before and after ``lightrag-pg workspace move`` to the
   other worker, and between it and the plain workspace after the move;
3. on the plain workspace, before and after ANALYZE (one node, statistics alone).

Every figure is 0 when ranking reads no planner statistics. The LLM is the instant
scripted one of ``bench/corpus.py``; embeddings are hashed bags of words (``--embedding
hashed``, the default: instant, but many relations share a distance to a question, and an
HNSW search then misses some of them) or the local MiniLM (``--embedding minilm``).

    python bench/cluster_answers.py                 # 30 documents, 40 questions
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import asyncpg

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import CorpusLLM, documents, questions, vocabulary
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.citus import move_workspace, placement
from lightrag_pg.db.workspace import create_workspace
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.testing import hashed_embedding_func
from tests.citus_cluster import running_cluster

MODES = ("local", "global", "hybrid", "naive", "mix")
Answers = list[dict[str, Any]]


def embedder_of(kind: str, dim: int) -> EmbeddingFunc:
    """Hashed bags of words of ``dim`` dimensions, or the local MiniLM (384)."""
    return local_embedding_func() if kind == "minilm" else hashed_embedding_func(dim)


async def open_rag(
    dsn: str, name: str, vocab: list, *, distributed: bool, embedder: EmbeddingFunc
) -> LightRAG:
    conn = await asyncpg.connect(dsn)
    try:
        await create_workspace(
            conn, dsn, name, embedder.embedding_dim, embedder.model_name, distributed=distributed
        )
    finally:
        await conn.close()
    rag = LightRAG(dsn=dsn, workspace=name, llm_model_func=CorpusLLM(vocab), embedding_func=embedder)
    await rag.initialize()
    return rag


async def answers(rag: LightRAG, asked: list[str]) -> Answers:
    """For each question, per mode: entity names, relation pairs and chunk ids, in order."""
    found: Answers = []
    for question in asked:
        per_mode: dict[str, Any] = {}
        for mode in MODES:
            data = (await rag.aquery_data(question, QueryParam(mode=mode)))["data"]
            per_mode[mode] = (
                [e["entity_name"] for e in data["entities"]],
                [(r["src_id"], r["tgt_id"]) for r in data["relationships"]],
                [c["chunk_id"] for c in data["chunks"]],
            )
        found.append(per_mode)
    return found


def differing(a: Answers, b: Answers) -> tuple[int, dict[str, int]]:
    """Questions that differ in any mode, and per mode."""
    per_mode = {mode: sum(x[mode] != y[mode] for x, y in zip(a, b, strict=True)) for mode in MODES}
    return sum(x != y for x, y in zip(a, b, strict=True)), per_mode


async def analyze(rag: LightRAG) -> None:
    async with rag.session() as s:
        await s.conn.execute(
            "ANALYZE text_chunks, chunk_terms, chunk_vectors, entities, relations, entity_vectors, "
            "relation_vectors"
        )


def report(label: str, a: Answers, b: Answers) -> None:
    total, per_mode = differing(a, b)
    modes = ", ".join(f"{mode} {n}" for mode, n in per_mode.items())
    print(f"{label:<58} {total:>3} of {len(a)}   ({modes})")


async def run(dsn: str, workers: list[int], args: argparse.Namespace) -> None:
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, words=args.words, seed=args.seed, vocab=vocab)
    asked = questions(args.questions, texts, vocab, seed=args.seed)
    embedder = embedder_of(args.embedding, args.dim)
    plain = await open_rag(dsn, "answers_plain", vocab, distributed=False, embedder=embedder)
    cluster = await open_rag(dsn, "answers_dist", vocab, distributed=True, embedder=embedder)
    try:
        for rag in (plain, cluster):
            await rag.ainsert(texts)
        print(
            f"{args.docs} documents, {len(asked)} questions, {embedder.model_name} embeddings, "
            f"modes {', '.join(MODES)}; questions differing:"
        )
        plain_indexed, cluster_indexed = await answers(plain, asked), await answers(cluster, asked)
        report("1. plain vs distributed, as indexed", plain_indexed, cluster_indexed)
        for rag in (plain, cluster):
            await analyze(rag)
        plain_analyzed, cluster_analyzed = await answers(plain, asked), await answers(cluster, asked)
        report("   plain vs distributed, after ANALYZE", plain_analyzed, cluster_analyzed)
        conn = await asyncpg.connect(dsn)
        try:
            source = await placement(conn, cluster.workspace)
            target = next(p for p in workers if source != ("127.0.0.1", p))
            await move_workspace(conn, cluster.workspace, "127.0.0.1", target)
        finally:
            await conn.close()
        cluster_moved = await answers(cluster, asked)
        report("2. distributed before vs after the move", cluster_analyzed, cluster_moved)
        report("   plain vs distributed, after the move", plain_analyzed, cluster_moved)
        await analyze(cluster)
        report(
            "   plain vs distributed, after the move and ANALYZE",
            plain_analyzed,
            await answers(cluster, asked),
        )
        report("3. plain, as indexed vs after ANALYZE", plain_indexed, plain_analyzed)
    finally:
        for rag in (plain, cluster):
            await rag.finalize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=30)
    parser.add_argument("--words", type=int, default=600)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dim", type=int, default=64, help="dimensions of the hashed embeddings")
    parser.add_argument(
        "--embedding", choices=("hashed", "minilm"), default="hashed", help="hashed bags of words or MiniLM"
    )
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="lightrag-citus-") as base,
        running_cluster(Path(base)) as cluster,
    ):
        workers = [w.port for w in cluster.workers]
        asyncio.run(run(cluster.dsn, workers, args))


if __name__ == "__main__":
    main()
