"""``lightrag-pg demo``: the main job, end to end, on a fresh machine.

Starts the embedded PostgreSQL (or uses $LIGHTRAG_PG_DSN), ingests the
bundled sample corpus (this project's own documentation, in short chunks so
that a question selects a few passages out of many), answers a question and
prints the entities, relations and source passages it used, the sentences
closest to the question marked. With an LLM endpoint in the environment it
extracts and answers with the LLM; without one it uses the NLP extractor and
shows the retrieved knowledge.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..query.param import QueryParam
from ..query.passages import Passage, passage, sentences_of_chunk
from .admin import print_tables
from .common import describe_setup, make_rag, reachable_database, workspace_of
from .ingest import ingest_files
from .passages import render

if TYPE_CHECKING:
    from ..rag import LightRAG

DEFAULT_QUESTION = "What happens to a document if the process indexing it crashes?"
CHUNK_TOKENS = 120
"""The demo's chunk size (the library's default is 1,200): about one paragraph."""
CHUNK_OVERLAP = 20
TOP_CHUNKS = 5
"""Chunks kept for the answer (``chunk_top_k``; the library's default is 20)."""
SHOWN = 8
"""Entities and relations listed."""


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
    files = sample_files()
    settings = {"chunk_token_size": CHUNK_TOKENS, "chunk_overlap_token_size": CHUNK_OVERLAP}
    async with make_rag(args, db, workspace, **settings) as rag:
        print(describe_setup(rag))
        print(f"database: {db.describe()}")
        print(f"sample: {len(files)} documents in {files[0].parent}, chunks of {CHUNK_TOKENS} tokens")
        failures = await ingest_files(rag, files)
        tables = await rag.atable_stats()
        print_tables(tables)
        counts = {t.name: t.row_count for t in tables}
        print(f"\nQuestion: {args.question}\n")
        param = QueryParam(mode=args.mode, chunk_top_k=TOP_CHUNKS)
        if rag.llm_model_func is not None:
            print(await rag.aquery(args.question, param))
        else:
            print("No LLM is configured: showing the knowledge retrieved for this question.")
        data = await rag.aquery_data(args.question, param)
        await print_retrieved(rag, args.question, data, counts.get("text_chunks"), files)
    print(f"\ndone in {time.monotonic() - started:.1f} s")
    return 1 if failures else 0


async def print_retrieved(
    rag: LightRAG, question: str, data: dict[str, Any], chunks_stored: int | None, files: list[Path]
) -> None:
    """The entities and relations used, then each source chunk as a passage of whole sentences
    with the ones closest to the question marked."""
    if data.get("status") != "success":
        print(f"(nothing retrieved: {data.get('message')})")
        return
    d = data["data"]
    width = min(shutil.get_terminal_size((100, 24)).columns, 100)
    entities = ", ".join(f"{e['entity_name']} ({e['entity_type']})" for e in d["entities"][:SHOWN])
    relations = "; ".join(f"{r['src_id']} - {r['tgt_id']}" for r in d["relationships"][:SHOWN])
    print()
    for label, count, listed in (
        ("Entities", len(d["entities"]), entities),
        ("Relations", len(d["relationships"]), relations),
    ):
        print(textwrap.fill(f"{label} ({count}): {listed or '-'}", width=width, subsequent_indent="    "))
    chunks = d["chunks"]
    out_of = f" of the {chunks_stored} in the workspace" if chunks_stored else ""
    print(f"\nSources: {len(chunks)} chunks{out_of}; the sentences closest to the question are marked >>")
    texts = {f.name: f.read_text(encoding="utf-8") for f in files}
    pairs = [(c["content"], texts.get(Path(c["file_path"]).name)) for c in chunks]
    passages = await best_passages(rag, question, pairs)
    shown: set[tuple[str, ...]] = set()
    for chunk, found in zip(chunks, passages, strict=True):
        print(f"\n  [{chunk['reference_id']}] {Path(chunk['file_path']).name}")
        if found is None:
            continue
        matches = tuple(found.sentences[i] for i in sorted(found.marked))
        if matches in shown:
            print("      (the same sentences as above: the two chunks overlap)")
        else:
            print("\n".join(render(found, width=width, highlight=highlighter())))
            shown.add(matches)


async def best_passages(
    rag: LightRAG, question: str, chunks: list[tuple[str, str | None]]
) -> list[Passage | None]:
    """For each ``(chunk content, document text or None)``, its passage around the sentences whose
    embeddings are closest to the question's (one embedding call for all of them)."""
    import numpy as np

    per_chunk = [sentences_of_chunk(content, document) for content, document in chunks]
    texts = [question] + [s.text for sentences in per_chunk for s in sentences]
    assert rag.embedding_func is not None
    vectors = np.asarray(await rag.embedding_func(texts), dtype=np.float32)
    vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
    scores = vectors[1:] @ vectors[0]
    found: list[Passage | None] = []
    offset = 0
    for sentences in per_chunk:
        found.append(passage(sentences, scores[offset : offset + len(sentences)].tolist()))
        offset += len(sentences)
    return found


def highlighter() -> Callable[[str], str] | None:
    """Bold yellow on a terminal (unless ``NO_COLOR`` is set); nothing otherwise."""
    if not sys.stdout.isatty() or os.environ.get("NO_COLOR"):
        return None
    return lambda line: f"\033[1;33m{line}\033[0m"
