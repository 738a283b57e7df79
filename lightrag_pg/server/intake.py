"""From files to pending documents: convert, enqueue, and record what could not be read."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import InvalidInput
from ..index.intake import md5_id
from .convert import Converter
from .runtime import WorkspaceRuntime

log = logging.getLogger(__name__)

BATCH_CHARS = 16_000_000
"""Converted text held before it is enqueued, when a scan reads many files."""

Source = tuple[str, Callable[[], Awaitable[bytes]]]
"""A file's name and how to read it."""


@dataclass
class Ingested:
    """What became of a batch of files besides the new documents."""

    skipped_ids: list[str] = field(default_factory=list)
    """Documents already in the workspace with the content of one of the files."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """``(name, reason)`` of the files recorded as failed documents."""


def failed_id(name: str, data: bytes) -> str:
    """The id of the failed document recording that file ``name`` could not be read."""
    return md5_id("doc-", "unreadable\0", name, "\0", hashlib.md5(data).hexdigest())


async def ingest_files(
    runtime: WorkspaceRuntime, converter: Converter, files: Sequence[tuple[str, bytes]], track_id: str
) -> Ingested:
    """Convert ``(name, content)`` files, enqueue their text and start processing.

    A file that cannot be converted or enqueued becomes a failed document with
    the reason. Runs as a task of the workspace's runtime, so it finishes even
    when the request that started it is gone.
    """
    return await _ingest(runtime, converter, [(name, _given(data)) for name, data in files], track_id)


async def ingest_folder(
    runtime: WorkspaceRuntime, converter: Converter, names: Sequence[str], track_id: str, limit: int
) -> Ingested:
    """Like :func:`ingest_files` for files of the workspace's input folder, each read
    (at most ``limit`` bytes, never through a link out of the folder) when its turn comes."""

    def reader(name: str) -> Callable[[], Awaitable[bytes]]:
        return lambda: asyncio.to_thread(runtime.folder.read, name, limit)

    return await _ingest(runtime, converter, [(name, reader(name)) for name in names], track_id)


def _given(data: bytes) -> Callable[[], Awaitable[bytes]]:
    async def read() -> bytes:
        return data

    return read


async def _ingest(
    runtime: WorkspaceRuntime, converter: Converter, sources: Iterable[Source], track_id: str
) -> Ingested:
    ingested = Ingested()
    failures: list[tuple[str, str, str, str]] = []
    texts: list[tuple[str, str]] = []
    held = 0
    for name, read in sources:
        data = b""
        try:
            data = await read()
            text = await converter.convert(runtime.name, name, data)
        except InvalidInput as exc:
            failures.append((failed_id(name, data), name, track_id, str(exc)))
            continue
        texts.append((name, text))
        held += len(text)
        if held >= BATCH_CHARS:
            failures += await _enqueue_all(runtime, texts, track_id, ingested.skipped_ids)
            texts, held = [], 0
    failures += await _enqueue_all(runtime, texts, track_id, ingested.skipped_ids)
    if failures:
        await runtime.rag.arecord_failed_files(failures)
        for _, name, _, reason in failures:
            runtime.job.say(f"{name}: failed: {reason}")
            ingested.failures.append((name, reason))
    runtime.kick("indexing uploaded files")
    return ingested


async def _enqueue_all(
    runtime: WorkspaceRuntime, texts: Sequence[tuple[str, str]], track_id: str, skipped: list[str]
) -> list[tuple[str, str, str, str]]:
    """Enqueue ``texts`` in one statement; if one is refused, each on its own to find
    it. The failures, as failed documents; the ids of documents that already had the
    content of one of them are added to ``skipped``."""
    if not texts:
        return []
    try:
        skipped += await _enqueue(runtime, texts, track_id)
        return []
    except InvalidInput:
        pass
    failures = []
    for name, text in texts:
        try:
            skipped += await _enqueue(runtime, [(name, text)], track_id)
        except InvalidInput as exc:
            failures.append((failed_id(name, text.encode()), name, track_id, str(exc)))
    return failures


async def _enqueue(runtime: WorkspaceRuntime, texts: Sequence[tuple[str, str]], track_id: str) -> list[str]:
    """Enqueue the texts; the ids of the documents that already had their content."""
    result = await runtime.rag.aenqueue(
        [t for _, t in texts], file_paths=[n for n, _ in texts], track_id=track_id
    )
    skipped = [*result.skipped_ids, *(d.duplicate_of for d in result.duplicates)]
    for doc_id in skipped:
        runtime.job.say(f"document {doc_id} is already in the workspace (same content); not added again")
    return skipped
