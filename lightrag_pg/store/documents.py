"""Document store: full documents, their processing status and their graph links."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from ..db.sqlfile import load_queries
from ..db.translate import translating
from ..types import UNKNOWN_SOURCE
from .rows import canonical_pair

SQL = load_queries(__package__, "documents.sql")

PENDING, PROCESSING, PROCESSED, FAILED = "pending", "processing", "processed", "failed"


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A cleaned document ready to be stored."""

    id: str
    content: str
    file_path: str = UNKNOWN_SOURCE
    track_id: str | None = None


class DocumentStore:
    """``full_docs``, ``doc_status``, ``doc_entities`` and ``doc_relations``, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @translating
    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are already known to the workspace."""
        return {r["id"] for r in await self.conn.fetch(SQL["existing_doc_ids"], list(ids))}

    @translating
    async def insert(self, docs: Sequence[NewDocument]) -> set[str]:
        """Store new documents as pending; return the ids actually inserted."""
        if not docs:
            return set()
        rows = [
            {"id": d.id, "content": d.content, "file_path": d.file_path, "track_id": d.track_id} for d in docs
        ]
        return {r["id"] for r in await self.conn.fetch(SQL["insert_docs"], rows)}

    @translating
    async def get(self, ids: Sequence[str]) -> list[asyncpg.Record]:
        """Documents with their status, in the order given."""
        return await self.conn.fetch(SQL["docs_by_ids"], list(ids))

    @translating
    async def statuses(self, ids: Sequence[str]) -> list[asyncpg.Record]:
        """Status rows, in the order given."""
        return await self.conn.fetch(SQL["status_by_ids"], list(ids))

    @translating
    async def ids_with_status(self, *statuses: str) -> list[str]:
        """Ids of documents in any of ``statuses``, oldest first."""
        return [r["id"] for r in await self.conn.fetch(SQL["ids_by_status"], list(statuses))]

    @translating
    async def claim(self, ids: Sequence[str]) -> list[str]:
        """Mark unprocessed documents as processing, skipping those locked elsewhere."""
        return sorted(r["id"] for r in await self.conn.fetch(SQL["claim_docs"], list(ids)))

    @translating
    async def mark_processed(self, doc_id: str, chunk_ids: Sequence[str], details: dict[str, Any]) -> None:
        """Record a document as processed."""
        await self.conn.execute(SQL["mark_processed"], doc_id, list(chunk_ids), details)

    @translating
    async def mark_failed(self, doc_id: str, error: str) -> None:
        """Record a document as failed with its error message."""
        await self.conn.execute(SQL["mark_failed"], doc_id, error[:4000])

    @translating
    async def link_entities(self, doc_id: str, names: Sequence[str]) -> None:
        """Record the entities a document contributed to."""
        if names:
            await self.conn.execute(SQL["link_entities"], doc_id, sorted(set(names)))

    @translating
    async def link_relations(self, doc_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """Record the relations a document contributed to."""
        if pairs:
            canonical = sorted({canonical_pair(a, b) for a, b in pairs})
            await self.conn.execute(
                SQL["link_relations"], doc_id, [p[0] for p in canonical], [p[1] for p in canonical]
            )
