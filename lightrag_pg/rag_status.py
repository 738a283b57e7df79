"""The facade's document status methods: pages, tracks and counts of ``doc_status``,
the failed records of files that had no text, and the sums of the ``usage`` table."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from .handle import Facade
from .llm.usage import UsageMeter
from .store.rows import DocumentRow, StatusRow
from .store.uow import session, unit_of_work
from .store.usage import Grouping, UsageSum
from .types import DocStatus


class StatusMethods(Facade):
    """The document status half of :class:`~lightrag_pg.rag.LightRAG`'s API."""

    async def aget_docs_paginated(
        self,
        status: DocStatus | str | Sequence[DocStatus | str] | None = None,
        page: int = 1,
        page_size: int = 50,
        sort_field: str = "updated_at",
        sort_direction: str = "desc",
    ) -> dict[str, Any]:
        """One page of documents with status ``status`` (a list: any of them; ``None``: all), in upstream's
        ``/documents/paginated`` shape: ``documents``, ``pagination``, ``status_counts``. Each
        document also carries ``entities_count`` and ``relations_count``: how many entities and
        relations it contributed to the graph.

        ``sort_field`` is one of ``created_at``, ``updated_at``, ``id``, ``file_path``;
        ``sort_direction`` ``asc`` or ``desc``; ties are broken by id. One statement.
        """
        async with session(self._run.pool) as s:
            return await s.status.page(status, page, page_size, sort_field, sort_direction)

    async def aget_docs_by_track_id(self, track_id: str) -> dict[str, Any]:
        """The documents enqueued by one insert call (``InsertResult.track_id``), with a
        summary by status: ``track_id``, ``documents``, ``total_count``, ``status_summary``."""
        async with session(self._run.pool) as s:
            return await s.status.by_track(track_id)

    async def aget_status_counts(self) -> dict[str, int]:
        """Number of documents in each status (zero included) and ``all``."""
        async with session(self._run.pool) as s:
            return await s.status.counts()

    async def aget_doc_statuses(self, doc_ids: Sequence[str]) -> list[StatusRow]:
        """The status rows of ``doc_ids``, in the order given; unknown ids are left out."""
        async with session(self._run.pool) as s:
            return await s.docs.statuses(doc_ids)

    async def aget_documents(self, doc_ids: Sequence[str]) -> list[DocumentRow]:
        """The stored documents of ``doc_ids`` (their full text, file path and track id), in
        the order given; unknown ids are left out. One statement."""
        async with session(self._run.pool) as s:
            return await s.docs.get(doc_ids)

    async def aknown_file_paths(self, file_paths: Sequence[str]) -> set[str]:
        """Which of ``file_paths`` a stored document has (any status)."""
        async with session(self._run.pool) as s:
            return await s.docs.known_file_paths(file_paths)

    async def arecord_failed_files(self, failures: Sequence[tuple[str, str, str, str]]) -> set[str]:
        """Record files that could not be turned into text as failed documents, given as
        ``(id, file_path, track_id, reason)``, in one statement; return the ids recorded.

        There is no text, so nothing processes them and the reason stays in
        ``doc_status`` (as upstream's clients expect to see such files); ids
        already present are left alone. Deleting them works as for any document.
        """
        async with unit_of_work(self._run.pool) as uow:
            return await uow.docs.record_failed(failures)

    @property
    def usage_meter(self) -> UsageMeter:
        """Where the workspace's LLM and embedding calls are recorded (:mod:`.llm.usage`)."""
        return self._run.meter

    async def ausage(self, *, by: Grouping = "kind", since: datetime | None = None) -> list[UsageSum]:
        """The workspace's LLM and embedding calls since ``since`` (default: all), summed by
        ``kind``, ``day`` (UTC) or ``doc`` (document; key ``None``: queries and other calls):
        calls that reached a model with their tokens, and the calls the cache answered.
        Calls not yet written are written first."""
        await self.usage_meter.flush()
        async with session(self._run.pool) as s:
            return await s.usage.sums(by, since or datetime.min.replace(tzinfo=timezone.utc))
