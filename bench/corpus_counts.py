"""What exact corpus counts cost writers and readers (migration 0016 against 0015).

Two ``tsvector`` workspaces in one database: one at revision 0015 (lexical ranking reads
``pg_class.reltuples``) and one at head (the ``chunk_terms`` triggers and new ``entities``
triggers keep ``corpus_counts``). On each, in turns so that both see the same machine:

1. **Chunk inserts**: ``--statements`` transactions, each inserting one document's
   ``--chunks`` chunks of about 200 words (the trigger writes their terms and, at head, a
   count delta); then the same chunks deleted, a document per transaction.
2. **Entity inserts**: as many transactions inserting ``--chunks`` entities each.
3. **Concurrent writers**: ``--writers`` connections inserting documents at once; the
   longest statement shows whether any writer waited on another's counter row.
4. **Lexical search**: ``lexical_chunks`` and ``lexical_entities`` for 50 queries.

Medians per statement (ms) and the head/0015 ratios are printed, with the size of
``corpus_counts`` after the run.

    python bench/corpus_counts.py                  # embedded server
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import database, workspace_name
from lightrag_pg.db.identifiers import search_path
from lightrag_pg.db.migrate import MigrationTarget, upgrade
from lightrag_pg.db.workspace import drop_workspace

WORDS = [f"w{i}" for i in range(3000)]
DOC = "INSERT INTO full_docs (id, content) VALUES ($1, 'x')"
CHUNKS = """
INSERT INTO text_chunks (id, doc_id, chunk_order_index, tokens, content)
SELECT $1 || '-' || i, $1, i, 250, t FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i)
"""
ENTITIES = """
INSERT INTO entities (name, entity_type, description, source_ids, file_paths)
SELECT $1 || '-' || i, 'concept', t, ARRAY[$1], ARRAY['x'] FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i)
"""


def text(rng: random.Random, words: int = 200) -> str:
    return " ".join(rng.choices(WORDS, weights=[1 / (i + 1) for i in range(len(WORDS))], k=words))


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def connect(dsn: str, workspace: str) -> asyncpg.Connection:
    return await asyncpg.connect(dsn, server_settings={"search_path": search_path(workspace)})


async def writes(conn: asyncpg.Connection, tag: str, args: argparse.Namespace) -> dict[str, list[float]]:
    rng = random.Random(1)
    found: dict[str, list[float]] = {"chunk insert": [], "chunk delete": [], "entity insert": []}
    for n in range(args.statements):
        doc, texts = f"{tag}-d{n}", [text(rng) for _ in range(args.chunks)]

        async def insert(doc: str = doc, texts: list[str] = texts) -> None:
            async with conn.transaction():
                await conn.execute(DOC, doc)
                await conn.execute(CHUNKS, doc, texts)

        found["chunk insert"].append(await timed(insert))
        names = [text(rng, 30) for _ in range(args.chunks)]
        found["entity insert"].append(
            await timed(lambda doc=doc, names=names: conn.execute(ENTITIES, doc, names))  # type: ignore[misc]
        )
    for n in range(args.statements):
        doc = f"{tag}-d{n}"
        found["chunk delete"].append(
            await timed(lambda doc=doc: conn.execute("DELETE FROM full_docs WHERE id = $1", doc))  # type: ignore[misc]
        )
    return found


async def concurrent(dsn: str, workspace: str, tag: str, args: argparse.Namespace) -> tuple[float, float]:
    """Documents per second with ``--writers`` connections at once, and the longest statement (ms)."""
    conns = [await connect(dsn, workspace) for _ in range(args.writers)]
    longest = 0.0
    try:
        rng = random.Random(2)
        batches = [[text(rng) for _ in range(args.chunks)] for _ in range(args.statements)]

        async def writer(k: int) -> None:
            nonlocal longest
            conn = conns[k]
            for n in range(k, args.statements, args.writers):
                doc = f"{tag}-c{n}"

                async def insert(doc: str = doc, n: int = n) -> None:
                    async with conn.transaction():
                        await conn.execute(DOC, doc)
                        await conn.execute(CHUNKS, doc, batches[n])

                longest = max(longest, await timed(insert))

        started = time.perf_counter()
        await asyncio.gather(*(writer(k) for k in range(args.writers)))
        return args.statements / (time.perf_counter() - started), longest
    finally:
        for conn in conns:
            await conn.close()


async def searches(conn: asyncpg.Connection) -> dict[str, list[float]]:
    rng = random.Random(3)
    queries = [" ".join(rng.choices(WORDS[:500], k=4)) for _ in range(50)]
    found: dict[str, list[float]] = {"lexical_chunks": [], "lexical_entities": []}
    for function in found:
        for query in queries:
            found[function].append(
                await timed(lambda q=query, f=function: conn.fetch(f"SELECT * FROM {f}($1, 20)", q))  # type: ignore[misc]
            )
    return found


async def run(dsn: str, args: argparse.Namespace) -> None:
    names = {"0015": workspace_name("counts_old"), "head": workspace_name("counts_new")}
    for revision, name in names.items():
        await upgrade(dsn, MigrationTarget(name, 16, lexical="tsvector"), revision)
    conns = {rev: await connect(dsn, name) for rev, name in names.items()}
    try:
        medians: dict[str, dict[str, float]] = {}
        for rev, conn in conns.items():
            found = await writes(conn, rev, args)
            rate, longest = await concurrent(dsn, names[rev], rev, args)
            await conn.execute("ANALYZE")
            found.update(await searches(conn))
            medians[rev] = {k: statistics.median(v) for k, v in found.items()}
            medians[rev]["concurrent docs/s"] = rate
            medians[rev]["concurrent longest ms"] = longest
        rows = await conns["head"].fetchval("SELECT count(*) FROM corpus_counts")
        exact = await conns["head"].fetchval(
            "SELECT (SELECT sum(chunks) FROM corpus_counts) = (SELECT count(*) FROM text_chunks)"
        )
        print(
            f"{args.statements} transactions of {args.chunks} chunks (about 200 words each) or entities; "
            f"{args.writers} concurrent writers"
        )
        print(f"{'median per statement':<24} {'0015':>10} {'head':>10} {'head/0015':>10}")
        for key in medians["head"]:
            old, new = medians["0015"][key], medians["head"][key]
            unit = "" if "docs/s" in key else " ms"
            print(f"{key:<24} {old:>8.2f}{unit:>2} {new:>8.2f}{unit:>2} {new / old:>9.2f}x")
        print(f"corpus_counts after the run: {rows} rows, sums exact: {exact}")
    finally:
        for conn in conns.values():
            await conn.close()
        admin = await asyncpg.connect(dsn)
        try:
            for name in names.values():
                await drop_workspace(admin, name)
        finally:
            await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--dsn", default=None)
    args = parser.parse_args()
    with database(args.dsn) as dsn:
        asyncio.run(run(dsn, args))


if __name__ == "__main__":
    main()
