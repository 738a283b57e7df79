"""Workspaces on a Citus cluster: coordinator overhead, many workspaces, moving one.

Starts a coordinator and two workers from ``../shared/citus`` (built once and cached, as
the tests do; see ``tests/citus_cluster.py``), then measures, in one run:

1. **Coordinator overhead per query.** The same generated corpus indexed twice on the
   coordinator node: once as a plain workspace (its tables on the coordinator, a single
   PostgreSQL node) and once as a distributed workspace (its tables on a worker, every
   statement routed by the coordinator). ``aquery_data`` per mode, median and p95 of
   each, and the distributed/plain ratio.
2. **Many workspaces.** ``--workspaces`` distributed workspaces (spread over the two
   workers by Citus), each with ``--docs-each`` documents, queried by ``--clients``
   concurrent clients, each asking a random workspace a mix question: queries per
   second, median and p95, and the workspaces per worker.
3. **Moving a workspace.** A distributed workspace filled with ``--move-entities``
   synthetic entities (and as many relations, entity and relation vectors of
   ``--dim`` dimensions) by set-based SQL, moved to the other worker with
   ``citus_schema_move`` (block_writes) while a writer inserts one row every 20 ms:
   the move's time, the workspace's size, seconds per MB, and the longest time one
   write waited.

The LLM is the instant scripted one of ``bench/corpus.py`` and embeddings are hashed, so
the times are those of lightrag_pg, Citus and PostgreSQL. All nodes share this
machine's cores: the figures say what routing through a coordinator costs, not what a
cluster of separate machines would serve.

    python bench/cluster.py                          # defaults
    python bench/cluster.py --move-entities 20000    # a quicker move
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import asyncpg

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import CorpusLLM, documents, questions, vocabulary
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.citus import move_workspace, placement
from lightrag_pg.db.identifiers import schema_of
from lightrag_pg.db.workspace import create_workspace
from lightrag_pg.testing import hashed_embedding_func
from tests.citus_cluster import running_cluster

MODES = ("local", "global", "hybrid", "naive", "mix")


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] if ordered else float("nan")


async def open_rag(dsn: str, name: str, vocab: list, *, distributed: bool, dim: int = 64) -> LightRAG:
    embedder = hashed_embedding_func(dim)
    conn = await asyncpg.connect(dsn)
    try:
        await create_workspace(conn, dsn, name, dim, embedder.model_name, distributed=distributed)
    finally:
        await conn.close()
    rag = LightRAG(dsn=dsn, workspace=name, llm_model_func=CorpusLLM(vocab), embedding_func=embedder)
    await rag.initialize()
    return rag


async def settle(rag: LightRAG) -> None:
    """Planner statistics current on both kinds of workspace (on a worker, its shards')."""
    async with rag.session() as s:
        await s.conn.execute(
            "ANALYZE text_chunks, chunk_terms, chunk_vectors, entities, relations, entity_vectors, "
            "relation_vectors"
        )


async def overhead(dsn: str, args: argparse.Namespace) -> None:
    vocab = vocabulary(seed=1)
    texts = documents(args.docs, words=600, seed=1, vocab=vocab)
    asked = questions(args.queries, texts, vocab, seed=1)
    rags = {
        "plain": await open_rag(dsn, "bench_plain", vocab, distributed=False),
        "distributed": await open_rag(dsn, "bench_dist", vocab, distributed=True),
    }
    for kind, rag in rags.items():
        started = time.perf_counter()
        await rag.ainsert(texts)
        await settle(rag)
        print(
            f"indexed {len(texts)} documents into the {kind} workspace "
            f"in {time.perf_counter() - started:.1f} s"
        )
    print(f"\n1. coordinator overhead per query ({len(asked)} questions per mode, aquery_data)")
    print(f"{'mode':<8} {'plain p50':>10} {'p95':>8} {'distributed p50':>16} {'p95':>8} {'ratio p50':>10}")
    for mode in MODES:
        timings: dict[str, list[float]] = {}
        for kind, rag in rags.items():
            await rag.aquery_data(asked[0], QueryParam(mode=mode))  # warm the pool and caches
            spent = []
            for question in asked:
                started = time.perf_counter()
                await rag.aquery_data(question, QueryParam(mode=mode))
                spent.append((time.perf_counter() - started) * 1000)
            timings[kind] = spent
        plain, dist = timings["plain"], timings["distributed"]
        print(
            f"{mode:<8} {median(plain):>8.2f}ms {p95(plain):>6.2f}ms {median(dist):>14.2f}ms "
            f"{p95(dist):>6.2f}ms {median(dist) / median(plain):>9.2f}x"
        )
    for rag in rags.values():
        await rag.finalize()


async def many(dsn: str, args: argparse.Namespace) -> None:
    vocab = vocabulary(seed=2)
    rags: list[LightRAG] = []
    started = time.perf_counter()
    for i in range(args.workspaces):
        rag = await open_rag(dsn, f"bench_ws{i:03d}", vocab, distributed=True)
        await rag.ainsert(documents(args.docs_each, words=400, seed=100 + i, vocab=vocab))
        await settle(rag)
        rags.append(rag)
    print(f"\nindexed {args.workspaces} workspaces in {time.perf_counter() - started:.1f} s")
    conn = await asyncpg.connect(dsn)
    try:
        where = [await placement(conn, r.workspace) for r in rags]
    finally:
        await conn.close()
    per_worker: dict[str, int] = {}
    for node in where:
        key = f"{node[0]}:{node[1]}" if node else "?"
        per_worker[key] = per_worker.get(key, 0) + 1
    asked = questions(200, documents(args.docs_each, words=400, seed=100, vocab=vocab), vocab, seed=2)
    rng = random.Random(0)
    latencies: list[float] = []
    deadline = time.perf_counter() + args.seconds

    async def client() -> None:
        while time.perf_counter() < deadline:
            rag = rng.choice(rags)
            question = rng.choice(asked)
            t0 = time.perf_counter()
            await rag.aquery_data(question, QueryParam(mode="mix"))
            latencies.append((time.perf_counter() - t0) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(args.clients)))
    wall = time.perf_counter() - began
    print(f"2. {args.workspaces} workspaces, {args.clients} clients, mix, {wall:.0f} s")
    print(f"   workspaces per worker: {per_worker}")
    print(
        f"   {len(latencies) / wall:.1f} queries/s, "
        f"p50 {median(latencies):.1f} ms, p95 {p95(latencies):.1f} ms"
    )
    for rag in rags:
        await rag.finalize()


FILL = """
INSERT INTO entities (name, entity_type, description, source_ids, file_paths, context_tokens)
SELECT 'entity ' || i, 'concept', 'Entity number ' || i || ' of the synthetic graph, described once.',
       ARRAY['chunk-' || (i % 1000)], ARRAY['synthetic.txt'], 20
FROM generate_series($1::int, $2::int) i;
"""
FILL_RELATIONS = """
INSERT INTO relations (src, tgt, keywords, description, weight, source_ids, file_paths, context_tokens)
SELECT least(a, b), greatest(a, b), 'related', 'Synthetic relation.', 1.0,
       ARRAY['chunk-0'], ARRAY['synthetic.txt'], 20
FROM (SELECT 'entity ' || i AS a, 'entity ' || (1 + (i * 7919) % $3::int) AS b
      FROM generate_series($1::int, $2::int) i) p
WHERE a <> b
ON CONFLICT DO NOTHING;
"""
FILL_VECTORS = """
INSERT INTO entity_vectors (name, content, embedding)
SELECT 'entity ' || i, 'entity ' || i,
       (SELECT array_agg(sin(i * 0.37 + d))::vector FROM generate_series(1, $3::int) d)
FROM generate_series($1::int, $2::int) i;
"""


async def move(dsn: str, args: argparse.Namespace, workers: list[int]) -> None:
    name = "bench_move"
    conn = await asyncpg.connect(dsn)
    await create_workspace(conn, dsn, name, args.dim, "synthetic", distributed=True)
    await conn.execute("SELECT set_config('search_path', $1, false)", f"{schema_of(name).quoted}, public")
    started = time.perf_counter()
    step = 10_000
    for first in range(1, args.move_entities + 1, step):
        last = min(args.move_entities, first + step - 1)
        await conn.execute(FILL, first, last)
        await conn.execute(FILL_VECTORS, first, last, args.dim)
    for first in range(1, args.move_entities + 1, step):
        last = min(args.move_entities, first + step - 1)
        await conn.execute(FILL_RELATIONS, first, last, args.move_entities)
    await conn.execute("ANALYZE")
    print(f"\nfilled {args.move_entities} entities in {time.perf_counter() - started:.1f} s")
    source = await placement(conn, name)
    target = next(p for p in workers if source != ("127.0.0.1", p))
    writer = await asyncpg.connect(dsn, server_settings={"search_path": f"{name}, public"})
    waits: list[float] = []
    done = asyncio.Event()

    async def write() -> None:
        n = 0
        while not done.is_set():
            n += 1
            t0 = time.perf_counter()
            await writer.execute(
                "INSERT INTO llm_cache (id, cache_type, prompt, response) VALUES ($1, 'query', '', '')",
                f"bench-{n}",
            )
            waits.append(time.perf_counter() - t0)
            await asyncio.sleep(0.02)

    writing = asyncio.ensure_future(write())
    await asyncio.sleep(0.2)
    moved = await move_workspace(conn, name, "127.0.0.1", target, "block_writes")
    done.set()
    await writing
    written = await conn.fetchval("SELECT count(*) FROM llm_cache")
    mb = moved.size_bytes / 1e6
    print(f"3. move of {args.move_entities} entities ({mb:.1f} MB, {args.dim}-dim vectors, block_writes)")
    print(f"   {moved.seconds:.2f} s, {moved.seconds / mb:.3f} s/MB; longest write wait {max(waits):.2f} s")
    print(f"   ({len(waits)} writes during the run, {written} rows there after it: nothing lost)")
    await writer.close()
    await conn.close()


async def main_async(args: argparse.Namespace, dsn: str, workers: list[int]) -> None:
    await overhead(dsn, args)
    await many(dsn, args)
    await move(dsn, args, workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=30, help="documents of the overhead workspace")
    parser.add_argument("--queries", type=int, default=40, help="questions per mode")
    parser.add_argument("--workspaces", type=int, default=40)
    parser.add_argument("--docs-each", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--move-entities", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="lightrag-citus-") as base,
        running_cluster(Path(base)) as cluster,
    ):
        workers = [w.port for w in cluster.workers]
        print(f"cluster: coordinator {cluster.dsn}, workers {workers}")
        asyncio.run(main_async(args, cluster.dsn, workers))


if __name__ == "__main__":
    main()
