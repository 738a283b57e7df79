"""An upstream LightRAG's PostgreSQL storages read as streams, one page per statement.

Upstream keeps every workspace in shared ``LIGHTRAG_*`` tables keyed by a
``workspace`` column; its vector tables carry the embedding model and dimension
in their names (``lightrag_vdb_entity_<model>_<dim>d``), so the model is read
from the data. The graph is in Apache AGE (graph ``<workspace>_chunk_entity_relation``,
or ``chunk_entity_relation`` for the default workspace) or in upstream's plain
tables ``lightrag_graph_nodes`` / ``lightrag_graph_edges``.

The source is only read: the session is read-only, and the whole import reads one
snapshot (a repeatable-read transaction held until :meth:`PgSource.close`), so
upstream writing meanwhile cannot tear it. Pages are keyed by the tables' own keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import asyncpg
import numpy as np

from ...db.connect import connect
from ...db.embedded import redact_dsn
from ...db.identifiers import Identifier, catalog_name
from ...errors import SourceFormatError
from ...store.transfer import StatusImport
from ...store.upstream_tables import UpstreamTables
from . import convert
from .formats import GRAPH_NAMESPACE, model_suffix, split_relation_key
from .records import (
    ChunkList,
    Embedding,
    SourceCacheEntry,
    SourceChunk,
    SourceDoc,
    SourceEntity,
    SourceRelation,
    SourceStats,
    SourceVector,
)

T = TypeVar("T")
GraphKind = Literal["auto", "age", "pgtable"]
GRAPH_KINDS: tuple[GraphKind, ...] = ("auto", "age", "pgtable")

VECTOR_BASES = {
    "chunks": "lightrag_vdb_chunks",
    "entities": "lightrag_vdb_entity",
    "relationships": "lightrag_vdb_relation",
}
_VECTOR_TYPE = re.compile(r"vector\((\d+)\)")


def upstream_graph_name(workspace: str) -> str:
    """The AGE graph upstream 1.5.7 keeps a workspace's graph in."""
    if workspace.strip() and workspace.strip().lower() != "default":
        return re.sub(r"[^a-zA-Z0-9_]", "_", workspace.strip()) + "_" + GRAPH_NAMESPACE
    return GRAPH_NAMESPACE


@dataclass(frozen=True, slots=True)
class _VectorTable:
    name: str
    model: str | None
    dim: int | None


class PgSource:
    """Upstream's PostgreSQL storages of one workspace, read as :class:`~.records.Source`."""

    def __init__(
        self,
        dsn: str,
        workspace: str | None,
        *,
        embedding_model: str | None = None,
        graph: GraphKind = "auto",
        connect_timeout: float = 10.0,
        statement_timeout_ms: int = 300_000,
    ) -> None:
        self.dsn = dsn
        self.workspace = workspace or "default"
        self.description = f"LightRAG PostgreSQL storages at {redact_dsn(dsn)}, workspace {self.workspace!r}"
        self.tag = f"postgres:{_location(dsn)}:{self.workspace}"
        self.stats = SourceStats()
        self.model = embedding_model
        self.graph_kind = graph
        self.connect_timeout = connect_timeout
        self.statement_timeout_ms = statement_timeout_ms
        self.position: dict[str, tuple[int, int]] = {}
        self.unit = "rows"
        self._conn: asyncpg.Connection | None = None
        self._tables: dict[str, tuple[str | None, bool]] = {}
        self._vectors: dict[str, _VectorTable | None] = {}
        self._graph: tuple[str, Identifier | None] | None = None
        self.db: UpstreamTables

    async def open(self) -> None:
        """Connect, read-only, in one snapshot; find the tables, vector tables and graph."""
        conn = await connect(self.dsn, timeout=self.connect_timeout, where=redact_dsn(self.dsn))
        self._conn = conn
        self.db = UpstreamTables(conn)
        try:
            await self.db.begin_snapshot(self.statement_timeout_ms)
            rows = await self.db.tables()
            self._tables = {r["name"]: (r["vector_type"], r["keyed"]) for r in rows}
            if "lightrag_doc_full" not in self._tables:
                raise SourceFormatError(f"{self.description}: no LIGHTRAG_DOC_FULL table is visible")
            if any(t[0] for t in self._tables.values()):
                await self.db.register_vectors()
            for kind in VECTOR_BASES:
                self._vectors[kind] = await self._vector_table(kind)
            self._graph = await self._find_graph()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await UpstreamTables(conn).end()
            finally:
                await conn.close()

    # ------------------------------------------------------------ facts

    async def _vector_table(self, kind: str) -> _VectorTable | None:
        base = VECTOR_BASES[kind]
        candidates = [n for n in self._tables if n == base or n.startswith(base + "_")]
        used = []
        for name in candidates:
            if await self.db.has_rows(catalog_name(name), self.workspace):
                used.append(name)
        if self.model and len(used) > 1:
            wanted = [
                n for n in used if n.endswith("_" + model_suffix(self.model, _dim_of(self._tables[n][0])))
            ]
            used = wanted or used
        if len(used) > 1:
            raise SourceFormatError(
                f"{self.description}: vectors of several models ({', '.join(used)}); "
                "name the one to import as the embedding model"
            )
        if not used:
            return None
        name = used[0]
        dim = _dim_of(self._tables[name][0])
        suffix = name[len(base) :].removeprefix("_")
        model = suffix[: -len(f"_{dim}d")] if dim and suffix.endswith(f"_{dim}d") else None
        return _VectorTable(name, model, dim)

    async def _find_graph(self) -> tuple[str, Identifier | None] | None:
        graph = upstream_graph_name(self.workspace)
        age = self.graph_kind in ("auto", "age") and await self.db.age_graph(graph)
        table = (
            self.graph_kind in ("auto", "pgtable")
            and "lightrag_graph_nodes" in self._tables
            and "lightrag_graph_edges" in self._tables
            and await self.db.pgtable_graph(self.workspace, GRAPH_NAMESPACE)
        )
        if age and table and self.graph_kind == "auto":
            raise SourceFormatError(
                f"{self.description}: the graph is both in AGE ({graph}) and in lightrag_graph_nodes; "
                "choose one (graph='age' or 'pgtable')"
            )
        if age:
            return "age", catalog_name(graph)
        if table:
            return "pgtable", None
        return None

    async def embedding(self) -> Embedding:
        tables = {k: v for k, v in self._vectors.items() if v is not None}
        dims = {v.dim for v in tables.values() if v.dim}
        models = {v.model for v in tables.values() if v.model}
        if len(dims) > 1 or len(models) > 1:
            raise SourceFormatError(f"{self.description}: the vector tables disagree: {tables}")
        where = ", ".join(v.name for v in tables.values()) or "no vector tables"
        return Embedding(dims.pop() if dims else None, models.pop() if models else None, where)

    async def totals(self) -> dict[str, int | None]:
        async def count(table: str | None) -> int:
            if table is None or table not in self._tables:
                return 0
            return await self.db.count_rows(catalog_name(table), self.workspace)

        out: dict[str, int | None] = {
            "documents": await count("lightrag_doc_full"),
            "statuses": await count("lightrag_doc_status"),
            "chunks": await count("lightrag_doc_chunks"),
            "cache": await count("lightrag_llm_cache"),
            "entity_chunks": await count("lightrag_entity_chunks"),
            "relation_chunks": await count("lightrag_relation_chunks"),
        }
        for kind, key in (
            ("chunks", "chunk_vectors"),
            ("entities", "entity_vectors"),
            ("relationships", "relation_vectors"),
        ):
            table = self._vectors.get(kind)
            out[key] = await count(table.name if table else None)
        vertices, edges = await self._graph_counts()
        out["entities"], out["relations"] = vertices, edges
        if not out["entity_chunks"]:
            out["entity_chunks"] = vertices
        if not out["relation_chunks"]:
            out["relation_chunks"] = edges
        return out

    async def _graph_counts(self) -> tuple[int, int]:
        if self._graph is None:
            return 0, 0
        kind, graph = self._graph
        if kind == "age":
            assert graph is not None
            return await self.db.age_counts(graph)
        return await self.db.pgtable_counts(self.workspace, GRAPH_NAMESPACE)

    # ------------------------------------------------------------ readers

    async def _pages(
        self, kind: str, page: str, size: int, key: str, *extra: Any, table: Identifier | None = None
    ) -> AsyncIterator[Sequence[asyncpg.Record]]:
        last: Any = None
        done = 0
        while True:
            rows = await self.db.page(page, self.workspace, last, size, *extra, table=table)
            if not rows:
                return
            done += len(rows)
            self.position[kind] = (done, 0)
            last = rows[-1][key]
            yield rows

    async def _records(
        self, kind: str, table: str, page: str, size: int, build: Callable[[asyncpg.Record], T | None]
    ) -> AsyncIterator[list[T]]:
        if table not in self._tables:
            return
        async for rows in self._pages(kind, page, size, "id"):
            out = []
            for row in rows:
                record = build(row)
                if record is None:
                    self.stats.skip(kind, str(row["id"]))
                else:
                    out.append(record)
            yield out

    def documents(self, size: int) -> AsyncIterator[list[SourceDoc]]:
        return self._records(
            "documents",
            "lightrag_doc_full",
            "documents",
            size,
            lambda r: convert.document(r["id"], dict(r)),
        )

    def statuses(self, size: int) -> AsyncIterator[list[StatusImport]]:
        return self._records(
            "statuses",
            "lightrag_doc_status",
            "statuses",
            size,
            lambda r: convert.status(r["id"], dict(r)),
        )

    def chunks(self, size: int) -> AsyncIterator[list[SourceChunk]]:
        return self._records(
            "chunks", "lightrag_doc_chunks", "chunks", size, lambda r: convert.chunk(r["id"], dict(r))
        )

    async def cache(self, size: int) -> AsyncIterator[list[SourceCacheEntry]]:
        def build(row: asyncpg.Record) -> SourceCacheEntry | None:
            return next(convert.cache_entries(row["id"], dict(row)), None)

        async for batch in self._records("cache", "lightrag_llm_cache", "cache", size, build):
            yield batch

    async def _vector_pages(self, kind: str, namespace: str, size: int) -> AsyncIterator[list[SourceVector]]:
        table = self._vectors.get(namespace)
        if table is None:
            return
        async for rows in self._pages(kind, kind, size, "id", table=catalog_name(table.name)):
            out = []
            for row in rows:
                values = row["content_vector"]
                if values is not None and hasattr(values, "to_numpy"):
                    values = values.to_numpy()
                found = (
                    None
                    if values is None
                    else convert.vector(namespace, dict(row), np.asarray(values, np.float32))
                )
                if found is None:
                    self.stats.skip(kind, str(row["id"]))
                else:
                    out.append(found)
            yield out

    def chunk_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return self._vector_pages("chunk_vectors", "chunks", size)

    def entity_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return self._vector_pages("entity_vectors", "entities", size)

    def relation_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return self._vector_pages("relation_vectors", "relationships", size)

    async def _nodes(self, kind: str, size: int) -> AsyncIterator[list[SourceEntity]]:
        if self._graph is None:
            return
        graph_kind, graph = self._graph
        if graph_kind == "age":
            assert graph is not None
            last: str | None = None
            while True:
                rows = await self.db.age_page("age_vertices", graph, last, size)
                if not rows:
                    return
                last = rows[-1]["gid"]
                yield self._entities(kind, [(None, r["properties"]) for r in rows])
        else:
            async for page in self._pages(kind, "pgtable_nodes", size, "id", GRAPH_NAMESPACE):
                yield self._entities(kind, [(r["id"], r["properties"]) for r in page])

    def _entities(self, kind: str, rows: list[tuple[str | None, str]]) -> list[SourceEntity]:
        out = []
        for name, props in rows:
            found = convert.entity(name, _properties(props))
            if found is None:
                self.stats.skip(kind, str(props)[:100])
            else:
                out.append(found)
        return out

    async def _edges(self, kind: str, size: int) -> AsyncIterator[list[SourceRelation]]:
        if self._graph is None:
            return
        graph_kind, graph = self._graph
        if graph_kind == "age":
            assert graph is not None
            last = None
            while True:
                rows = await self.db.age_page("age_edges", graph, last, size)
                if not rows:
                    return
                last = rows[-1]["gid"]
                triples = [(r["src"], r["tgt"], r["properties"]) for r in rows]
                yield self._relations(kind, triples)
            return
        after: tuple[str | None, str | None] = (None, None)
        while True:
            rows = await self.db.pgtable_edges(self.workspace, after, size, GRAPH_NAMESPACE)
            if not rows:
                return
            after = (rows[-1]["src_id"], rows[-1]["tgt_id"])
            yield self._relations(kind, [(r["src_id"], r["tgt_id"], r["properties"]) for r in rows])

    def _relations(self, kind: str, rows: list[tuple[Any, Any, str]]) -> list[SourceRelation]:
        out = []
        for src, tgt, props in rows:
            found = convert.relation(src, tgt, _properties(props))
            if found is None:
                self.stats.skip(kind, f"{src} - {tgt}")
            else:
                out.append(found)
        return out

    def entities(self, size: int) -> AsyncIterator[list[SourceEntity]]:
        return self._nodes("entities", size)

    def relations(self, size: int) -> AsyncIterator[list[SourceRelation]]:
        return self._edges("relations", size)

    async def entity_chunks(self, size: int) -> AsyncIterator[list[ChunkList]]:
        if "lightrag_entity_chunks" not in self._tables:
            async for entities in self._nodes("entity_chunks", size):
                yield [ChunkList((e.name,), e.source_ids) for e in entities]
            return

        def build(row: asyncpg.Record) -> ChunkList | None:
            return convert.chunk_list((row["id"],), row["chunk_ids"]) if row["id"] else None

        async for batch in self._records(
            "entity_chunks", "lightrag_entity_chunks", "entity_chunks", size, build
        ):
            yield batch

    async def relation_chunks(self, size: int) -> AsyncIterator[list[ChunkList]]:
        if "lightrag_relation_chunks" not in self._tables:
            async for relations in self._edges("relation_chunks", size):
                yield [ChunkList((r.src, r.tgt), r.source_ids) for r in relations]
            return

        def build(row: asyncpg.Record) -> ChunkList | None:
            pair = split_relation_key(row["id"] or "")
            return convert.chunk_list(pair, row["chunk_ids"]) if pair else None

        async for batch in self._records(
            "relation_chunks", "lightrag_relation_chunks", "relation_chunks", size, build
        ):
            yield batch


def _dim_of(vector_type: str | None) -> int:
    match = _VECTOR_TYPE.search(vector_type or "")
    return int(match.group(1)) if match else 0


def _properties(value: Any) -> dict[str, Any]:
    """A graph element's properties (AGE's agtype or pgtable's JSON, as text), or {}."""
    if isinstance(value, dict):
        return value
    try:
        found = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        found = None
    return found if isinstance(found, dict) else {}


def _location(dsn: str) -> str:
    """Host, port and database of a DSN, without user or password (for the import marker)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(dsn)
    host = parts.hostname or ",".join(parse_qs(parts.query).get("host", [])) or "localhost"
    return f"{host}:{parts.port or 5432}{parts.path or '/'}"
