"""Reads and writes the document routes need beyond the library's calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..db.sqlfile import load_queries
from ..rag import LightRAG
from ..store.rows import StatusRow

SQL = load_queries(__package__, "documents.sql")


def status_view(row: StatusRow) -> dict[str, Any]:
    """A status row in upstream's ``DocStatusResponse`` shape.

    A file that could not be converted keeps its conversion error as
    ``error_msg`` even after a retry of failed documents found no text to process.
    """
    error = row.metadata.get("conversion_error") or row.error_msg
    return {
        "id": row.id,
        "content_summary": row.content_summary,
        "content_length": row.content_length,
        "status": row.status.value,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "track_id": row.track_id,
        "chunks_count": row.chunks_count,
        "error_msg": error,
        "metadata": row.metadata,
        "file_path": row.file_path,
    }


async def status_counts(rag: LightRAG) -> dict[str, int]:
    """Documents per status, with ``all`` (upstream's key) for the total."""
    async with rag.session() as s:
        rows = await s.conn.fetch(SQL["status_counts"])
    counts = {r["status"]: r["n"] for r in rows}
    counts["all"] = sum(counts.values())
    return counts


async def by_track(rag: LightRAG, track_id: str) -> list[StatusRow]:
    async with rag.session() as s:
        rows = await s.conn.fetch(SQL["by_track"], track_id)
    return [StatusRow.from_record(r) for r in rows]


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[StatusRow]
    total: int


async def page(
    rag: LightRAG,
    statuses: Sequence[str] | None,
    sort_field: str,
    direction: str,
    size: int,
    number: int,
) -> Page:
    """Page ``number`` (1-based) of ``size`` status rows."""
    async with rag.session() as s:
        rows = await s.conn.fetch(
            SQL["page"],
            list(statuses) if statuses else None,
            sort_field,
            direction,
            size,
            (number - 1) * size,
        )
        total = rows[0]["total"] if rows else 0
        if not rows and number > 1:
            counts = await s.conn.fetch(SQL["status_counts"])
            total = sum(r["n"] for r in counts if not statuses or r["status"] in statuses)
    return Page([StatusRow.from_record(r) for r in rows], total)


async def known_file_paths(rag: LightRAG, paths: Sequence[str]) -> set[str]:
    async with rag.session() as s:
        rows = await s.conn.fetch(SQL["known_file_paths"], list(paths))
    return {r["file_path"] for r in rows}


async def file_paths_of(rag: LightRAG, doc_ids: Sequence[str]) -> dict[str, str]:
    async with rag.session() as s:
        rows = await s.conn.fetch(SQL["file_paths_of"], list(doc_ids))
    return {r["id"]: r["file_path"] for r in rows}


async def record_failed(rag: LightRAG, failures: Sequence[tuple[str, str, str, str]]) -> set[str]:
    """Record ``(id, file_path, track_id, reason)`` as failed documents without text."""
    columns = [list(c) for c in zip(*failures, strict=True)] if failures else [[], [], [], []]
    async with rag.unit_of_work() as uow:
        rows = await uow.conn.fetch(SQL["record_failed"], *columns)
    return {r["id"] for r in rows}


async def clear_cache(rag: LightRAG) -> int:
    async with rag.unit_of_work() as uow:
        return int(await uow.conn.fetchval(SQL["clear_cache"]))


async def ping(rag: LightRAG) -> None:
    async with rag.session() as s:
        await s.conn.fetchval(SQL["ping"])
