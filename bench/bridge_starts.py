"""Where the bridge starts: the share of entities whose home each rule finds.

An entity's home (``QueryParam.bridge``'s article, ``store/retrieval.sql`` fragment
``entity_homes``) is the chunk that introduces it: its title (rule 1), a heading (2), its
file name (3) or, failing those, the chunk that mentions it most (4, central). For a
development set indexed by ``bench/multihop.py`` (``--set``, any of :mod:`bench.sets`,
at its full size; same cache options) this prints the share of each rule among the
entities the questions name (the bridge's starts) and among all entities in at most
``Bridge.fanout`` chunks; with
``--docs``, it indexes this repository's README.md and docs/*.md offline (MiniLM, NLP
extractor; file paths relative to the repository) and prints the same over all their
entities (``--central``: the least mentions of the central rule, 0: off). Recall and
latency per mode are ``bench/multihop.py``'s. Usage:
``python bench/bridge_starts.py --set hotpotqa [--central 2]``,
``python bench/bridge_starts.py --docs``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.multihop import DEFAULT_CACHE, add_workspace_args, indexed, open_workspace
from bench.sets import ALL
from bench.sets import load as sets_load
from lightrag_pg import LightRAG
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.query import retrieve
from lightrag_pg.store.retrieval import HOME_RULES, Bridge, EntityHome

REPOSITORY = Path(__file__).resolve().parents[1]


def shares(homes: Sequence[EntityHome]) -> str:
    """``rule share, ...`` of ``homes``, with those that have none."""
    counts = Counter(HOME_RULES.get(h.rule, "none") if h.rule else "none" for h in homes)
    total = max(len(homes), 1)
    order = [*HOME_RULES.values(), "none"]
    return f"{len(homes)} entities: " + ", ".join(f"{r} {counts[r] / total:.1%}" for r in order)


async def open_rag(args: argparse.Namespace, workspace: str) -> LightRAG:
    dsn = args.dsn or os.environ.get(DSN_ENV) or embedded_dsn(args.cache / "pgdata")
    return await open_workspace(dsn, local_embedding_func(), workspace)


async def docs(args: argparse.Namespace, bridge: Bridge) -> None:
    files = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
    rag = await open_rag(args, args.workspace or "bridge_docs")
    try:
        await rag.ainsert(
            [f.read_text(encoding="utf-8") for f in files],
            file_paths=[str(f.relative_to(REPOSITORY)) for f in files],
        )
        async with rag.unit_of_work() as uow:
            homes = await uow.retrieval.homes(None, bridge)
            chunks = await uow.conn.fetchval("SELECT count(*) FROM text_chunks")
        print(f"README.md and docs/*.md: {len(files)} files, {chunks} chunks")
        print(f"all entities in at most {bridge.fanout} chunks: {shares(homes)}")
    finally:
        await rag.finalize()


async def multihop(args: argparse.Namespace, bridge: Bridge) -> None:
    s = sets_load(args.set, args.data, args.cache / "docs")
    rag = await open_rag(args, args.workspace or f"mh_{s.corpus.replace('-', '_')}_all")
    try:
        done = await indexed(rag)
        questions = [q for q in s.asks if set(q.gold) <= done]
        named: list[EntityHome] = []
        async with rag.unit_of_work() as uow:
            for q in questions:
                named.extend(await uow.retrieval.homes(q.text, bridge))
            every = await uow.retrieval.homes(None, bridge)
        print(f"{args.set}: {len(done)} passages, {len(questions)} questions")
        print(f"entities the questions name (the starts): {shares(named)}")
        print(f"all entities in at most {bridge.fanout} chunks: {shares(every)}")
    finally:
        await rag.finalize()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workspace_args(parser, ALL)
    parser.add_argument("--docs", action="store_true", help="README.md and docs/*.md instead of a set")
    parser.add_argument("--central", type=int, default=Bridge().central, help="0: no central rule")
    args = parser.parse_args(argv)
    if args.docs and args.cache == DEFAULT_CACHE:
        args.cache = DEFAULT_CACHE.with_name("bridge_docs")
    return args


def main(args: argparse.Namespace) -> None:
    bridge = Bridge(central=args.central)
    retrieve.BRIDGE = bridge
    asyncio.run(docs(args, bridge) if args.docs else multihop(args, bridge))


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    main(parse_args())
