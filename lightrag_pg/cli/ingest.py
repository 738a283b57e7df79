"""``lightrag-pg insert PATH...``: ingest text and Markdown files and folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..rag import LightRAG
from .common import ProgressBar, describe_setup, make_rag

SUFFIXES = (".txt", ".md", ".markdown")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("insert", help="ingest .txt and .md files and folders")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--extractor", choices=["llm", "nlp"], help="default: llm when configured, else nlp")
    p.set_defaults(run=run)


def collect(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """Files to ingest, and complaints about paths that cannot be used."""
    files: list[Path] = []
    problems: list[str] = []
    for path in paths:
        if path.is_dir():
            files += sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            problems.append(f"{path}: no such file or directory")
    return files, problems


def read_texts(files: list[Path]) -> tuple[list[str], list[str], list[str]]:
    """Texts and their paths; files that are not UTF-8 or are empty are reported, not read."""
    texts, names, problems = [], [], []
    for f in files:
        try:
            text = f.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{f}: not valid UTF-8 (byte {exc.start}); skipped")
            continue
        if not text.strip():
            problems.append(f"{f}: empty; skipped")
            continue
        texts.append(text)
        names.append(str(f))
    return texts, names, problems


async def ingest_files(rag: LightRAG, files: list[Path]) -> int:
    """Ingest ``files`` with a progress bar; returns the number of problems."""
    texts, names, problems = read_texts(files)
    for problem in problems:
        print(f"warning: {problem}")
    if not texts:
        print("nothing to ingest")
        return len(problems)
    bar = ProgressBar("indexing")
    try:
        result = await rag.ainsert(texts, file_paths=names, progress=bar)
    finally:
        bar.close()
    p = result.progress
    print(
        f"{len(result.new_ids)} new, {len(result.skipped_ids)} already present; "
        f"{p.docs_done} processed, {p.docs_failed} failed; "
        f"{p.chunks_done} chunks, {p.entities} entity merges, {p.relations} relation merges"
    )
    for doc_id, message in p.failures.items():
        print(f"failed: {doc_id}: {message}")
    return len(problems) + p.docs_failed


async def run(args: argparse.Namespace) -> int:
    files, problems = collect(args.paths)
    for problem in problems:
        print(f"warning: {problem}")
    async with make_rag(args) as rag:
        print(describe_setup(rag))
        failures = await ingest_files(rag, files)
    return 1 if failures or problems else 0
