"""``lightrag-pg insert PATH...``: ingest text and Markdown files and folders."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from .common import ProgressBar, connected, describe_created, describe_setup, make_rag, workspace_of

SUFFIXES = (".txt", ".md", ".markdown")
NOT_TEXT = {
    ".pdf": "a PDF",
    ".doc": "a Word document",
    ".docx": "a Word document",
    ".odt": "an OpenDocument text",
    ".rtf": "an RTF document",
    ".epub": "an EPUB book",
    ".pptx": "a PowerPoint file",
    ".xlsx": "an Excel file",
}
_PDF_MAGIC = b"%PDF-"

if TYPE_CHECKING:
    from ..rag import InsertResult, LightRAG


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("insert", parents=parents, help="ingest .txt and .md files and folders")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--extractor", choices=["llm", "nlp"], help="default: llm when configured, else nlp")
    p.set_defaults(run=run)


def _refusal(path: Path, kind: str) -> str:
    advice = "convert it to .txt or .md first (e.g. pdftotext, pandoc)"
    return f"{path}: {kind} is not plain text; {advice}; skipped"


def collect(paths: list[Path]) -> tuple[list[Path], list[str], list[str]]:
    """Files to ingest, notes on files left out of folders, and complaints about named paths."""
    files: list[Path] = []
    notes: list[str] = []
    problems: list[str] = []
    for path in paths:
        if path.is_dir():
            hidden = 0
            for f in sorted(f for f in path.rglob("*") if f.is_file()):
                if any(part.startswith(".") for part in f.relative_to(path).parts):
                    hidden += 1
                elif f.suffix.lower() in SUFFIXES:
                    files.append(f)
                else:
                    notes.append(f"{f}: not {'/'.join(SUFFIXES)}; skipped")
            if hidden:
                notes.append(f"{path}: {hidden} hidden file(s) skipped")
        elif path.is_file():
            kind = NOT_TEXT.get(path.suffix.lower())
            if kind:
                problems.append(_refusal(path, kind))
            else:
                files.append(path)
        else:
            problems.append(f"{path}: no such file or directory")
    return files, notes, problems


def read_texts(files: list[Path]) -> tuple[list[str], list[str], list[str]]:
    """Texts and their paths; files that are not UTF-8 text or are empty are reported, not read."""
    texts, names, problems = [], [], []
    for f in files:
        data = f.read_bytes()
        if data.startswith(_PDF_MAGIC):
            problems.append(_refusal(f, "a PDF"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{f}: not valid UTF-8 (byte {exc.start}); skipped")
            continue
        if not text.strip():
            problems.append(f"{f}: empty; skipped")
            continue
        texts.append(text)
        names.append(str(f))
    return texts, names, problems


def report(result: InsertResult) -> int:
    """Print what the insert did; return how many of the given documents failed.

    Documents that failed in an earlier run are retried by every insert; when
    they fail again they are reported once, apart, and not counted. Documents
    another process was indexing are left to it and counted apart.
    """
    p = result.progress
    given = set(result.new_ids) | set(result.skipped_ids)
    failed_now = {i: m for i, m in p.failures.items() if i in given}
    failed_before = {i: m for i, m in p.failures.items() if i not in given}
    elsewhere = f", {p.docs_skipped} indexed by another process" if p.docs_skipped else ""
    print(
        f"{len(result.new_ids)} new, {len(result.skipped_ids)} already present; "
        f"{p.docs_done} processed, {len(failed_now)} failed{elsewhere}; "
        f"{p.chunks_done} chunks, {p.entities} entity merges, {p.relations} relation merges"
    )
    for dup in result.duplicates:
        print(f"note: {dup.file_path}: same content as {dup.duplicate_of_path}; stored once")
    for doc_id, message in failed_now.items():
        print(f"failed: {doc_id}: {message}")
    if failed_before:
        print(f"{len(failed_before)} document(s) from earlier runs were retried and failed again:")
        for doc_id, message in failed_before.items():
            print(f"  still failing: {doc_id}: {message}")
    return len(failed_now)


async def ingest_files(rag: LightRAG, files: list[Path]) -> int:
    """Ingest ``files`` with a progress bar; returns the number of problems."""
    texts, names, problems = readable(files)
    if not texts:
        print("nothing to ingest")
        return len(problems)
    return len(problems) + await ingest_texts(rag, texts, names)


def readable(files: list[Path]) -> tuple[list[str], list[str], list[str]]:
    """:func:`read_texts`, each file left out printed as a warning."""
    texts, names, problems = read_texts(files)
    for problem in problems:
        print(f"warning: {problem}")
    return texts, names, problems


async def ingest_texts(rag: LightRAG, texts: list[str], names: list[str]) -> int:
    """Insert ``texts`` with a progress bar and print the summary; returns how many failed."""
    bar = ProgressBar("indexing")
    try:
        result = await rag.ainsert(texts, file_paths=names, progress=bar)
    except asyncio.CancelledError:
        bar.close()
        print("interrupted: documents not yet indexed stay in the workspace; insert again to finish them")
        raise
    finally:
        bar.close()
    return report(result)


async def run(args: argparse.Namespace) -> int:
    from ..db.workspace import read_info

    workspace = workspace_of(args)
    files, notes, problems = collect(args.paths)
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(f"warning: {problem}")
    texts, names, unreadable = readable(files)
    async with connected(args) as (conn, db):
        existed = await read_info(conn, workspace) is not None
    if not texts:
        print("nothing to ingest" if existed else f"nothing to ingest; workspace {workspace!r} not created")
        return 1 if unreadable or problems else 0
    async with make_rag(args, db, workspace) as rag:
        if not existed:
            print(describe_created(rag))
        print(describe_setup(rag))
        failures = await ingest_texts(rag, texts, names)
    return 1 if failures or unreadable or problems else 0
