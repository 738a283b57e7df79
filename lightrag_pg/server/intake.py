"""From files to pending documents: convert, enqueue, and record what could not be read."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InvalidInput
from ..index.intake import md5_id
from . import doc_status
from .convert import convert
from .runtime import WorkspaceRuntime

log = logging.getLogger(__name__)


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
    runtime: WorkspaceRuntime, files: Sequence[tuple[str, bytes]], track_id: str
) -> Ingested:
    """Convert ``(name, content)`` files, enqueue their text and start processing.

    A file that cannot be converted or enqueued becomes a failed document with
    the reason. Runs as a task of the workspace's runtime, so it finishes even
    when the request that started it is gone.
    """
    job = runtime.job
    ingested = Ingested()
    texts: list[tuple[str, str]] = []
    failures: list[tuple[str, str, str, str]] = []
    for name, data in files:
        try:
            texts.append((name, await asyncio.to_thread(convert, name, data)))
        except InvalidInput as exc:
            failures.append((failed_id(name, data), name, track_id, str(exc)))
    if texts:
        try:
            ingested.skipped_ids += await _enqueue(runtime, texts, track_id)
        except InvalidInput:  # one bad text: enqueue the rest one by one to find it
            for name, text in texts:
                try:
                    ingested.skipped_ids += await _enqueue(runtime, [(name, text)], track_id)
                except InvalidInput as exc:
                    failures.append((failed_id(name, text.encode()), name, track_id, str(exc)))
    if failures:
        await doc_status.record_failed(runtime.rag, failures)
        for _, name, _, reason in failures:
            job.say(f"{name}: failed: {reason}")
            ingested.failures.append((name, reason))
    runtime.kick("indexing uploaded files")
    return ingested


async def _enqueue(runtime: WorkspaceRuntime, texts: Sequence[tuple[str, str]], track_id: str) -> list[str]:
    """Enqueue the texts; the ids of the documents that already had their content."""
    result = await runtime.rag.aenqueue(
        [t for _, t in texts], file_paths=[n for n, _ in texts], track_id=track_id
    )
    skipped = [*result.skipped_ids, *(d.duplicate_of for d in result.duplicates)]
    for doc_id in skipped:
        runtime.job.say(f"document {doc_id} is already in the workspace (same content); not added again")
    return skipped
