"""Upstream LightRAG's PostgreSQL storages, read: the ``LIGHTRAG_*`` tables and its graph.

These are another system's tables (lightrag-hku 1.5.7), in a database lightrag_pg
does not own; this store only reads them, one keyed page per statement, inside one
read-only snapshot (:meth:`UpstreamTables.begin_snapshot`). Table and graph names
come from the source's own catalog.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from ..db.identifiers import Identifier
from ..db.sqlfile import load_queries, render

SQL = load_queries(__package__, "upstream_tables.sql")

KEYED_PAGES = (
    "documents",
    "statuses",
    "chunks",
    "cache",
    "entity_chunks",
    "relation_chunks",
    "pgtable_nodes",
)
"""The pages keyed by one ``id`` column of a fixed table, in a workspace."""

VECTOR_PAGES = ("chunk_vectors", "entity_vectors", "relation_vectors")
"""The pages of a vector table named after its model."""


class UpstreamTables:
    """The reads of upstream's PostgreSQL storages, on one connection to the source database."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def begin_snapshot(self, statement_timeout_ms: int) -> None:
        """Bound every statement, then open the read-only repeatable-read transaction the whole
        import reads in; decode ``vector`` columns as arrays when the source has the type."""
        await self.conn.execute(f"SET statement_timeout = {int(statement_timeout_ms)}")
        await self.conn.execute(SQL["begin_snapshot"])

    async def register_vectors(self) -> None:
        """Read ``vector`` columns with pgvector's binary codec."""
        from pgvector.asyncpg import register_vector

        await register_vector(self.conn)

    async def end(self) -> None:
        """Leave the snapshot (nothing was written)."""
        if self.conn.is_in_transaction():
            await self.conn.execute("ROLLBACK")

    async def tables(self) -> list[asyncpg.Record]:
        """The LIGHTRAG tables the session sees: name, vector type, whether keyed by workspace."""
        return list(await self.conn.fetch(SQL["tables"]))

    async def has_rows(self, table: Identifier, workspace: str) -> bool:
        return bool(await self.conn.fetchval(render(SQL["has_rows"], table=table), workspace))

    async def count_rows(self, table: Identifier, workspace: str) -> int:
        return int(await self.conn.fetchval(render(SQL["count_rows"], table=table), workspace))

    async def age_graph(self, graph: str) -> bool:
        """Whether AGE holds the graph ``graph``."""
        return bool(await self.conn.fetchval(SQL["age_graph"], graph))

    async def age_counts(self, graph: Identifier) -> tuple[int, int]:
        """Vertices and edges of an AGE graph."""
        vertices = await self.conn.fetchval(render(SQL["age_count_vertices"], graph=graph))
        edges = await self.conn.fetchval(render(SQL["age_count_edges"], graph=graph))
        return int(vertices), int(edges)

    async def pgtable_graph(self, workspace: str, namespace: str) -> bool:
        """Whether the plain-table graph holds nodes of the workspace (its tables must exist)."""
        return bool(await self.conn.fetchval(SQL["pgtable_graph"], workspace, namespace))

    async def pgtable_counts(self, workspace: str, namespace: str) -> tuple[int, int]:
        nodes = await self.conn.fetchval(SQL["pgtable_count_nodes"], workspace, namespace)
        edges = await self.conn.fetchval(SQL["pgtable_count_edges"], workspace, namespace)
        return int(nodes), int(edges)

    async def page(
        self, kind: str, workspace: str, after: Any, limit: int, *extra: Any, table: Identifier | None = None
    ) -> list[asyncpg.Record]:
        """A page of ``kind`` (:data:`KEYED_PAGES`, or :data:`VECTOR_PAGES` of ``table``) of the
        workspace, after the key ``after`` (None: from the start: every key is above '')."""
        sql = render(SQL[kind], table=table) if table is not None else SQL[kind]
        return list(await self.conn.fetch(sql, workspace, "" if after is None else after, limit, *extra))

    async def age_page(
        self, kind: str, graph: Identifier, after: str | None, limit: int
    ) -> list[asyncpg.Record]:
        """A page of the AGE graph's ``age_vertices`` or ``age_edges``, after a graph id (as text)."""
        return list(await self.conn.fetch(render(SQL[kind], graph=graph), after or "0", limit))

    async def pgtable_edges(
        self, workspace: str, after: tuple[str | None, str | None], limit: int, namespace: str
    ) -> list[asyncpg.Record]:
        """A page of the plain-table graph's edges, after the pair ``after``."""
        src, tgt = after[0] or "", after[1] or ""
        return list(await self.conn.fetch(SQL["pgtable_edges"], workspace, src, tgt, limit, namespace))
