"""What exact corpus counts cost writers and readers (migration 0016 against 0015).

Two ``tsvector`` workspaces in one database: one at revision 0015 (lexical ranking reads
``pg_class.reltuples``) and one at head (the ``chunk_terms`` triggers and new ``entities``
triggers keep ``corpus_counts``). On each, in turns so that both see the same machine:

1. **Chunk inserts**: ``--statements`` transactions, each inserting one document's
   ``--chunks`` chunks of about 200 words (the trigger writes their terms and, at head, a
   count delta); then the same chunks deleted, a document per transaction.
2. **Entity inserts**: as many transactions inserting ``--chunks`` entities each.
3. **Concurrent writers**: ``--writers`` connections inserting a fifth as many documents
   at once, five rounds per workspace; the longest statement shows whether any writer
   waited on another's counter row.
4. **Lexical search**: ``lexical_chunks`` and ``lexical_entities`` for 50 queries.

Each statement runs on both workspaces one after the other, in alternating order, so that
both see the same load. Medians (ms per statement, documents per second) and the
head/0015 ratios are printed, with the size of ``corpus_counts`` after the run.

    python bench/corpus_counts.py                  # embedded server
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import database, workspace_name
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


async def insert_document(conn: asyncpg.Connection, doc: str, texts: list[str]) -> None:
    async with conn.transaction():
        await conn.execute(DOC, doc)
        await conn.execute(CHUNKS, doc, texts)


Timings = dict[str, dict[str, list[float]]]


async def interleaved(
    conns: dict[str, asyncpg.Connection], found: Timings, key: str, n: int, call: Any
) -> None:
    """``call(conn, tag)`` timed on each workspace, in alternating order (both see the same load)."""
    order = list(conns) if n % 2 == 0 else list(reversed(conns))
    for rev in order:
        found[rev].setdefault(key, []).append(await timed(lambda rev=rev: call(conns[rev], rev)))


async def writes(conns: dict[str, asyncpg.Connection], found: Timings, args: argparse.Namespace) -> None:
    rng = random.Random(1)
    for n in range(args.statements):
        texts, names = [text(rng) for _ in range(args.chunks)], [text(rng, 30) for _ in range(args.chunks)]
        await interleaved(
            conns,
            found,
            "chunk insert",
            n,
            lambda c, tag, n=n, texts=texts: insert_document(c, f"{tag}-d{n}", texts),
        )
        await interleaved(
            conns,
            found,
            "entity insert",
            n,
            lambda c, tag, n=n, names=names: c.execute(ENTITIES, f"{tag}-d{n}", names),
        )
    for n in range(args.statements):
        await interleaved(
            conns,
            found,
            "chunk delete",
            n,
            lambda c, tag, n=n: c.execute("DELETE FROM full_docs WHERE id = $1", f"{tag}-d{n}"),
        )


async def concurrent(
    dsn: str, workspace: str, tag: str, batches: list[list[str]], writers: int
) -> tuple[float, float]:
    """Documents per second with ``writers`` connections inserting ``batches`` at once, and the
    longest statement (ms)."""
    conns = [await connect(dsn, workspace) for _ in range(writers)]
    longest = 0.0
    try:

        async def writer(k: int) -> None:
            nonlocal longest
            for n in range(k, len(batches), writers):
                doc = f"{tag}-c{n}-{uuid.uuid4().hex[:6]}"
                longest = max(
                    longest, await timed(lambda doc=doc, n=n: insert_document(conns[k], doc, batches[n]))
                )

        started = time.perf_counter()
        await asyncio.gather(*(writer(k) for k in range(writers)))
        return len(batches) / (time.perf_counter() - started), longest
    finally:
        for conn in conns:
            await conn.close()


async def run(dsn: str, args: argparse.Namespace) -> None:
    names = {"0015": workspace_name("counts_old"), "head": workspace_name("counts_new")}
    for revision, name in names.items():
        await upgrade(dsn, MigrationTarget(name, 16, lexical="tsvector"), revision)
    conns = {rev: await connect(dsn, name) for rev, name in names.items()}
    try:
        found: Timings = {rev: {} for rev in conns}
        await writes(conns, found, args)
        rng = random.Random(2)
        batches = [[text(rng) for _ in range(args.chunks)] for _ in range(args.statements // 5)]
        for n in range(10):  # rounds of concurrent writers, alternating
            for rev in list(names) if n % 2 == 0 else list(reversed(names)):
                rate, longest = await concurrent(dsn, names[rev], rev, batches, args.writers)
                found[rev].setdefault("concurrent docs/s", []).append(rate)
                found[rev].setdefault("concurrent longest ms", []).append(longest)
        for conn in conns.values():
            await conn.execute("ANALYZE")
        queries = [" ".join(rng.choices(WORDS[:500], k=4)) for _ in range(50)]
        for function in ("lexical_chunks", "lexical_entities"):
            for n, query in enumerate(queries):
                await interleaved(
                    conns,
                    found,
                    function,
                    n,
                    lambda c, _, q=query, f=function: c.fetch(f"SELECT * FROM {f}($1, 20)", q),
                )
        rows = await conns["head"].fetchval("SELECT count(*) FROM corpus_counts")
        exact = await conns["head"].fetchval(
            "SELECT (SELECT sum(chunks) FROM corpus_counts) = (SELECT count(*) FROM text_chunks)"
        )
        print(
            f"{args.statements} transactions of {args.chunks} chunks (about 200 words each) or entities, "
            f"alternating between the workspaces; {args.writers} concurrent writers, 5 rounds each"
        )
        print(f"{'median':<24} {'0015':>11} {'head':>11} {'head/0015':>10}")
        for key in found["head"]:
            old, new = statistics.median(found["0015"][key]), statistics.median(found["head"][key])
            unit = "" if "docs/s" in key else " ms"
            print(f"{key:<24} {old:>8.2f}{unit:<3} {new:>8.2f}{unit:<3} {new / old:>9.2f}x")
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
