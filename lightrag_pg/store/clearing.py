"""Emptying a workspace in one transaction: documents, chunks, vectors, graph, fragments,
the AGE mirror and (unless kept) the LLM cache; the workspace itself and its settings stay."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from ..db.advisory import XACT_LOCK, lock_key
from ..db.identifiers import WorkspaceName, graph_of
from ..db.sqlfile import load_queries, render
from ..errors import DocumentBusy, ReembedConflict

SQL = load_queries(__package__, "clearing.sql")


@dataclass(frozen=True, slots=True)
class ClearResult:
    """What emptying a workspace removed."""

    documents: int
    """How many documents (any status) there were."""
    cache_cleared: bool
    """Whether the cached LLM answers went too."""


async def clear_workspace(
    conn: asyncpg.Connection, workspace: WorkspaceName, *, graph_enabled: bool, keep_cache: bool
) -> ClearResult:
    """Empty ``workspace`` on ``conn``, which must be in a transaction.

    Holds the workspace's lock (as migrations, repairs and drops take it), then
    refuses with :class:`DocumentBusy` while another session indexes documents
    and with :class:`ReembedConflict` while a re-embed runs; nothing is changed
    then. Four or five statements besides the lock, each on whole tables.
    """
    await conn.execute(XACT_LOCK, lock_key("workspace", workspace))
    docs = await conn.fetchrow(SQL["documents"])
    found = await conn.fetchrow(
        SQL["blockers"], lock_key("doc", workspace, ""), lock_key("reembed", workspace), docs["processing"]
    )
    if found["indexing"]:
        raise DocumentBusy(
            f"{found['indexing']} document(s) of workspace {workspace!r} are being indexed; "
            "nothing was cleared (retry when the pipeline is idle)"
        )
    if found["reembedding"]:
        raise ReembedConflict(f"a re-embed of workspace {workspace!r} is running; nothing was cleared")
    await conn.execute(SQL["truncate_content"])
    if not keep_cache:
        await conn.execute(SQL["truncate_cache"])
    if graph_enabled:
        await conn.execute(render(SQL["truncate_graph"], graph=graph_of(workspace)))
    return ClearResult(documents=int(docs["documents"]), cache_cleared=not keep_cache)
