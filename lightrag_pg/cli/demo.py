"""``lightrag-pg demo``: the main job, end to end, on a fresh machine.

Starts the embedded PostgreSQL (or uses $LIGHTRAG_PG_DSN), ingests the
bundled sample corpus (this project's own documentation), answers a
question and prints the entities, relations and sources it used. With an
LLM endpoint in the environment it extracts and answers with the LLM;
without one it uses the NLP extractor and shows the retrieved knowledge.
"""

from __future__ import annotations

import argparse
import time
from importlib import resources
from pathlib import Path

from ..query.param import QueryParam
from .admin import print_tables
from .common import describe_setup, make_rag, print_knowledge, reachable_database, workspace_of
from .ingest import ingest_files

DEFAULT_QUESTION = "How does lightrag_pg keep the knowledge graph consistent after a crash?"


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", parents=parents, help="ingest the sample corpus and answer a question")
    p.add_argument("question", nargs="?", default=DEFAULT_QUESTION)
    p.add_argument("--mode", default="mix", choices=["local", "global", "hybrid", "naive", "mix"])
    p.add_argument("--extractor", choices=["llm", "nlp"], help="default: llm when configured, else nlp")
    p.set_defaults(run=run)


def sample_files() -> list[Path]:
    """The bundled sample documents."""
    folder = resources.files("lightrag_pg") / "sample"
    return sorted(Path(str(f)) for f in folder.iterdir() if f.name.endswith(".md"))


async def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    workspace = workspace_of(args, default="demo")
    db = await reachable_database(args)
    async with make_rag(args, db, workspace) as rag:
        print(describe_setup(rag))
        print(f"database: {db.describe()}")
        failures = await ingest_files(rag, sample_files())
        async with rag.pool.acquire() as conn:
            await print_tables(conn, rag.workspace)
        print(f"\nQuestion: {args.question}\n")
        param = QueryParam(mode=args.mode)
        print(await rag.aquery(args.question, param))
        if rag.llm_model_func is not None:
            print_knowledge(await rag.aquery_data(args.question, param))
    print(f"\ndone in {time.monotonic() - started:.1f} s")
    return 1 if failures else 0
