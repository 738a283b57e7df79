"""What an export holds, and how its rows are read: streamed, batch by batch, from one snapshot."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from ..db.sqlfile import load_queries
from ..types import GRAPH_FIELD_SEP

SQL = load_queries(__package__, "export.sql")

BATCH_ROWS = 500
"""Rows fetched per cursor round trip and handed to a writer at once."""


@dataclass(frozen=True, slots=True)
class Section:
    """One table of the export: its name and columns (``vector`` last, when included)."""

    name: str
    columns: tuple[str, ...]

    def with_vectors(self, include: bool) -> Section:
        """This section, with or without its trailing ``vector`` column."""
        return self if include else Section(self.name, self.columns[:-1])


ENTITIES = Section(
    "entities",
    ("name", "entity_type", "description", "source_ids", "file_paths", "created_at", "updated_at", "vector"),
)
RELATIONS = Section(
    "relations",
    (
        "src",
        "tgt",
        "keywords",
        "description",
        "weight",
        "source_ids",
        "file_paths",
        "created_at",
        "updated_at",
        "vector",
    ),
)
CHUNKS = Section(
    "chunks",
    ("id", "doc_id", "chunk_order_index", "tokens", "content", "file_path", "created_at", "vector"),
)


def as_text(value: Any) -> str:
    """A cell as plain text: lists joined with ``<SEP>``, times in ISO 8601, None empty."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return GRAPH_FIELD_SEP.join(str(v) for v in value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


async def stream(
    conn: asyncpg.Connection, sections: Sequence[Section], include_vectors: bool
) -> AsyncIterator[tuple[Section, list[tuple[Any, ...]]]]:
    """Yield ``(section, rows)`` batches of every section in turn, from one consistent snapshot.

    Rows come through a server-side cursor, :data:`BATCH_ROWS` at a time, so
    the whole workspace is never held in memory. A section with no rows
    yields one empty batch, so writers still see it.
    """
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        for section in sections:
            chosen = section.with_vectors(include_vectors)
            width = len(chosen.columns)
            batch: list[tuple[Any, ...]] = []
            sent = False
            async for record in conn.cursor(SQL[section.name], include_vectors, prefetch=BATCH_ROWS):
                batch.append(tuple(record)[:width])
                if len(batch) >= BATCH_ROWS:
                    yield chosen, batch
                    batch, sent = [], True
            if batch or not sent:
                yield chosen, batch
