"""Files the server could not turn into text, recorded as failed documents.

The library stores documents from text; a file that cannot be converted (or
is too large to read) has none, yet upstream's clients expect to see it as a
failed document with its reason. No library call records a status without a
text, so this module keeps the one statement that does (``documents.sql``):
a ``doc_status`` row, status ``failed``, no ``full_docs`` row. The pipeline
only processes documents that have a text, so the reason stays as recorded;
deleting the document removes the row like any other.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..db.sqlfile import load_queries
from ..rag import LightRAG

SQL = load_queries(__package__, "documents.sql")


async def record_failed(rag: LightRAG, failures: Sequence[tuple[str, str, str, str]]) -> set[str]:
    """Record ``(id, file_path, track_id, reason)`` as failed documents without text;
    ids already present are left alone. Returns the ids recorded."""
    columns = [list(c) for c in zip(*failures, strict=True)] if failures else [[], [], [], []]
    async with rag.unit_of_work() as uow:
        rows = await uow.conn.fetch(SQL["record_failed"], *columns)
    return {r["id"] for r in rows}
