"""The workspace as a whole: the names of the database's workspaces, its tables and their
row counts, dropping it, and emptying it in one transaction (documents, chunks, vectors,
graph, fragments, the AGE mirror and, unless kept, the LLM cache; the workspace itself and
its settings stay)."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from ..db.advisory import XACT_LOCK, lock_key
from ..db.identifiers import WorkspaceName, graph_of
from ..db.sqlfile import load_queries, render
from ..db.workspace import TableStat, drop_workspace, list_workspaces, table_stats
from ..errors import DocumentBusy, ReembedConflict

SQL = load_queries(__package__, "clearing.sql")


@dataclass(frozen=True, slots=True)
class ClearResult:
    """What emptying a workspace removed."""

    documents: int
    """How many documents (any status) there were."""
    cache_cleared: bool
    """Whether the cached LLM answers went too."""


class WorkspaceStore:
    """One workspace as a whole, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection, workspace: WorkspaceName) -> None:
        self.conn = conn
        self.workspace = workspace

    async def names(self) -> list[WorkspaceName]:
        """Every lightrag_pg workspace in the database."""
        return await list_workspaces(self.conn)

    async def tables(self) -> list[TableStat]:
        """Every table and view of the workspace with its exact row count and comment."""
        return await table_stats(self.conn, self.workspace)

    async def drop(self) -> None:
        """Drop the workspace (schema and graph), in a transaction of its own."""
        await drop_workspace(self.conn, self.workspace)

    async def clear(self, *, graph_enabled: bool, keep_cache: bool) -> ClearResult:
        """Empty the workspace; the connection must be in a transaction.

        Holds the workspace's lock (as migrations, repairs and drops take it), then
        refuses with :class:`DocumentBusy` while another session indexes documents
        and with :class:`ReembedConflict` while a re-embed runs; nothing is changed
        then. Four or five statements besides the lock, each on whole tables.
        """
        conn, workspace = self.conn, self.workspace
        await conn.execute(XACT_LOCK, lock_key("workspace", workspace))
        docs = await conn.fetchrow(SQL["documents"])
        found = await conn.fetchrow(
            SQL["blockers"],
            lock_key("doc", workspace, ""),
            lock_key("reembed", workspace),
            docs["processing"],
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
