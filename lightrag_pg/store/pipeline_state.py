"""Pipeline state for people and dashboards: document listings, status counts, LLM cache clearing.

Each method is one statement. Listings come back in the JSON shapes of
upstream LightRAG's ``/documents`` API (``documents``, ``pagination``,
``status_counts``; ``track_id``, ``total_count``, ``status_summary``), with
timestamps as ISO 8601 strings; a page's documents also carry ``entities_count``
and ``relations_count`` (what each contributed to the graph).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import asyncpg

from ..db.sqlfile import load_queries
from ..errors import InvalidInput
from ..types import DocStatus
from .rows import StatusRow

SQL = load_queries(__package__, "pipeline_state.sql")

SORT_FIELDS = ("created_at", "updated_at", "id", "file_path")
"""Fields a document page may be sorted by."""

SORT_DIRECTIONS = ("asc", "desc")

CACHE_TYPES = ("extract", "summary", "keywords", "query", "query_memo")
"""The kinds of cached LLM answers (``llm_cache.cache_type``)."""

MAX_PAGE_SIZE = 1000


def doc_status_dict(row: StatusRow) -> dict[str, Any]:
    """One document's status in upstream's ``DocStatusResponse`` shape."""
    return {
        "id": row.id,
        "content_summary": row.content_summary,
        "content_length": row.content_length,
        "status": row.status.value,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "track_id": row.track_id,
        "chunks_count": row.chunks_count,
        "error_msg": row.error_msg,
        "metadata": row.metadata,
        "file_path": row.file_path,
    }


def _counted(record: asyncpg.Record) -> dict[str, Any]:
    """A page row: its status, plus how many entities and relations the document contributed."""
    return {
        **doc_status_dict(StatusRow.from_record(record)),
        "entities_count": int(record["entities_count"]),
        "relations_count": int(record["relations_count"]),
    }


def status_counts(counts: dict[str, int]) -> dict[str, int]:
    """Counts of every status (zero when none), plus ``all``."""
    full = {s.value: int(counts.get(s.value, 0)) for s in DocStatus}
    full["all"] = sum(full.values())
    return full


StatusFilter = DocStatus | str | Sequence[DocStatus | str] | None
"""A status, several statuses (any of them), or ``None`` for every status."""


def _statuses(value: StatusFilter) -> list[str] | None:
    if value is None:
        return None
    chosen = [value] if isinstance(value, str) else list(value)
    if not chosen:
        raise InvalidInput("status filter is empty; pass None for every status")
    try:
        return sorted({DocStatus(v).value for v in chosen})
    except ValueError:
        known = ", ".join(s.value for s in DocStatus)
        raise InvalidInput(f"unknown document status in {value!r}; use one of {known}") from None


def _positive(name: str, value: object, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1 or (high and value > high):
        bound = f"1..{high}" if high else "at least 1"
        raise InvalidInput(f"{name} must be an integer in {bound}, got {value!r}")
    return value


def _choice(name: str, value: object, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value.lower() not in allowed:
        raise InvalidInput(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value.lower()


def cache_types(types: Iterable[str] | None) -> list[str] | None:
    """Validated cache types (``None``: all of them)."""
    if types is None:
        return None
    chosen = [types] if isinstance(types, str) else list(types)
    unknown = [t for t in chosen if t not in CACHE_TYPES]
    if unknown or not chosen:
        raise InvalidInput(f"cache types must be among {', '.join(CACHE_TYPES)}, got {chosen!r}")
    return sorted(set(chosen))


class PipelineStateStore:
    """Document listings and cache clearing of one workspace, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def page(
        self,
        status: StatusFilter = None,
        page: int = 1,
        page_size: int = 50,
        sort_field: str = "updated_at",
        sort_direction: str = "desc",
    ) -> dict[str, Any]:
        """One page of documents (``{"documents", "pagination", "status_counts"}``)
        whose status is ``status`` (or any of several; ``None``: all)."""
        wanted = _statuses(status)
        _positive("page", page)
        _positive("page_size", page_size, MAX_PAGE_SIZE)
        field = _choice("sort_field", sort_field, SORT_FIELDS)
        direction = _choice("sort_direction", sort_direction, SORT_DIRECTIONS)
        rows = await self.conn.fetch(SQL["page"], wanted, field, direction, page_size, (page - 1) * page_size)
        total = int(rows[0]["total"])
        pages = math.ceil(total / page_size)
        return {
            "documents": [_counted(r) for r in rows if r["id"] is not None],
            "pagination": {
                "page": page,
                "page_size": page_size,
                "total_count": total,
                "total_pages": pages,
                "has_next": page < pages,
                "has_prev": page > 1,
            },
            "status_counts": status_counts(rows[0]["counts"]),
        }

    async def by_track(self, track_id: str) -> dict[str, Any]:
        """The documents of one insert call (track_id, documents, total_count, status_summary)."""
        if not isinstance(track_id, str) or not track_id:
            raise InvalidInput(f"track id must be a non-empty string, got {track_id!r}")
        rows = [StatusRow.from_record(r) for r in await self.conn.fetch(SQL["by_track"], track_id)]
        return {
            "track_id": track_id,
            "documents": [doc_status_dict(r) for r in rows],
            "total_count": len(rows),
            "status_summary": dict(Counter(r.status.value for r in rows)),
        }

    async def counts(self) -> dict[str, int]:
        """Documents per status (every status, zero when none) and ``all``."""
        rows = await self.conn.fetch(SQL["status_counts"])
        return status_counts({r["status"]: r["n"] for r in rows})

    async def clear_cache(self, types: Iterable[str] | None = None) -> int:
        """Delete cached LLM answers of the given types (``None``: all); return how many."""
        return int(await self.conn.fetchval(SQL["clear_cache"], cache_types(types)))
