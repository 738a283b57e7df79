"""Document store: full documents, their processing status and their graph links."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
import numpy as np

from ..db.sqlfile import load_queries
from ..types import DocStatus
from .rows import ChunkRow, DocumentRow, StatusRow, columns, pair_columns, vectors
from .usage import UsageRow, usage_columns

SQL = load_queries(__package__, "documents.sql")


class DocumentStore:
    """``full_docs``, ``doc_status``, ``doc_entities`` and ``doc_relations``, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def insert(self, docs: Sequence[DocumentRow]) -> set[str]:
        """Store new documents as pending; return the ids actually inserted (known ids are left alone)."""
        if not docs:
            return set()
        rows = await self.conn.fetch(SQL["insert_docs"], *columns((d.values() for d in docs), 4))
        return {r["id"] for r in rows}

    async def get(self, ids: Sequence[str]) -> list[DocumentRow]:
        """Documents in the order given; unknown ids are skipped."""
        return [DocumentRow.from_record(r) for r in await self.conn.fetch(SQL["docs_by_ids"], list(ids))]

    async def statuses(self, ids: Sequence[str]) -> list[StatusRow]:
        """Status rows, in the order given; unknown ids are skipped."""
        return [StatusRow.from_record(r) for r in await self.conn.fetch(SQL["status_by_ids"], list(ids))]

    async def record_failed(self, failures: Sequence[tuple[str, str, str, str]]) -> set[str]:
        """Record ``(id, file_path, track_id, reason)`` as failed documents without a text
        (files that could not be converted), in one statement; ids already present are
        left alone. Returns the ids recorded."""
        columns = [list(c) for c in zip(*failures, strict=True)] if failures else [[], [], [], []]
        return {r["id"] for r in await self.conn.fetch(SQL["record_failed"], *columns)}

    async def ids_with_status(self, *statuses: DocStatus) -> list[str]:
        """Ids of documents in any of ``statuses``, oldest first."""
        rows = await self.conn.fetch(SQL["ids_by_status"], [DocStatus(s).value for s in statuses])
        return [r["id"] for r in rows]

    async def unfinished_ids(self) -> list[str]:
        """Ids of pending, processing or failed documents that have a text, oldest first."""
        return [r["id"] for r in await self.conn.fetch(SQL["unfinished_ids"])]

    async def claim(self, ids: Sequence[str]) -> list[DocumentRow]:
        """Mark unprocessed documents as processing, skipping those locked elsewhere;
        return the documents claimed, in id order."""
        return [DocumentRow.from_record(r) for r in await self.conn.fetch(SQL["claim_docs"], list(ids))]

    async def mark_processed(self, doc_id: str, chunk_ids: Sequence[str], details: dict[str, Any]) -> None:
        """Record a document as processed."""
        await self.conn.execute(SQL["mark_processed"], doc_id, list(chunk_ids), details)

    async def finish(
        self,
        doc_id: str,
        chunks: Sequence[ChunkRow],
        embeddings: np.ndarray,
        details: dict[str, Any],
        chunk_ids: Sequence[str] | None = None,
        usage: Sequence[UsageRow] = (),
    ) -> None:
        """Store the chunks of ``doc_id`` with their embeddings (one row per chunk) and
        record the document as processed with ``chunk_ids`` (default: those chunks' ids;
        the others stored before in the same transaction) and the LLM and embedding calls
        its processing made (``usage``, counted), in one statement."""
        await self.conn.execute(
            SQL["finish_doc"],
            doc_id,
            *columns((c.values() for c in chunks), 6),
            vectors(embeddings) if chunks else [],
            details,
            list(chunk_ids) if chunk_ids is not None else [c.id for c in chunks],
            *_document_calls(usage),
        )

    async def record_progress(self, doc_id: str, progress: dict[str, Any]) -> None:
        """Record how far the processing of ``doc_id`` has come (``metadata.progress``,
        dropped when it is claimed again or finished)."""
        await self.conn.execute(SQL["record_progress"], doc_id, progress)

    async def mark_failed(
        self,
        doc_id: str,
        error: str,
        usage: Sequence[UsageRow] = (),
        totals: dict[str, Any] | None = None,
    ) -> None:
        """Record a document as failed with its error message, and the LLM and embedding
        calls its processing made (``usage``, counted; ``totals`` in its metadata)."""
        await self.conn.execute(
            SQL["mark_failed"], doc_id, error[:4000], totals or {}, *_document_calls(usage)
        )

    async def link_entities(self, doc_id: str, names: Sequence[str]) -> None:
        """Record the entities a document contributed to."""
        if names:
            await self.conn.execute(SQL["link_entities"], doc_id, sorted(set(names)))

    async def link_relations(self, doc_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """Record the relations a document contributed to."""
        if pairs:
            await self.conn.execute(SQL["link_relations"], doc_id, *pair_columns(pairs))

    async def find(self, ids: Sequence[str] = (), file_paths: Sequence[str] = ()) -> list[tuple[str, str]]:
        """``(id, file_path)`` of the documents with one of ``ids`` or one of ``file_paths``."""
        rows = await self.conn.fetch(SQL["docs_by_ids_or_paths"], list(ids), list(file_paths))
        return [(r["id"], r["file_path"]) for r in rows]

    async def known_file_paths(self, file_paths: Sequence[str]) -> set[str]:
        """Which of ``file_paths`` a stored document has (any status)."""
        return {path for _, path in await self.find(file_paths=file_paths)}

    async def delete(self, ids: Sequence[str], *, keep_cache: bool) -> set[str]:
        """Delete documents with their status, chunks, vectors, links and fragments, and
        (unless ``keep_cache``) their chunks' cached LLM answers; return the ids deleted."""
        if not ids:
            return set()
        rows = await self.conn.fetch(SQL["delete_docs"], list(ids), keep_cache)
        return {r["id"] for r in rows}


def _document_calls(usage: Sequence[UsageRow]) -> list[list[Any]]:
    """The columns of ``usage`` a document's statement writes (its own id aside, no query)."""
    cols = usage_columns(usage)
    return [c for i, c in enumerate(cols) if i not in (3, 4)]
