"""Check one workspace's tables, vectors, AGE mirror and doc_status against each other.

Usage::

    conn = await asyncpg.connect(dsn)
    report = await check(conn, "books")
    if not report.ok:
        print(report.summary())
        outcome = await repair(conn, "books")   # one transaction
        print(outcome.after.summary())          # what is left needs re-indexing

The checks are set-based statements: one over the tables (two with the graph mirror)
and, when documents are in ``processing``, one that finds those whose lock nobody
holds; that one names no table, so on a Citus cluster it reads the coordinator's
locks, where every client takes them. ``repair``
re-creates missing vertices and edges (by re-running the mirror triggers),
deletes extra ones, deletes vectors whose row is gone, recounts stored entity
degrees that disagree with the relations (``entities.degree``, kept by triggers;
only a load with triggers disabled can leave one wrong) and puts documents stuck
in ``processing`` with no lock holder back to ``pending``. Rows without a
vector are only reported: embedding them needs the model (re-insert, or run
the pipeline again).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import asyncpg

from ..errors import StorageError, WorkspaceNotFound
from .advisory import XACT_LOCK, lock_key
from .identifiers import Identifier, WorkspaceName, graph_of, schema_of
from .sqlfile import load_queries, render
from .translate import translated
from .workspace import read_info

SQL = load_queries(__package__, "doctor.sql")

Pair = tuple[str, str]
MIRROR_REPAIRS = ("delete_extra_edges", "delete_extra_vertices", "remirror_entities", "remirror_relations")


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """What disagrees in one workspace; every list empty means healthy."""

    workspace: WorkspaceName
    graph_enabled: bool
    entities_without_vector: list[str] = field(default_factory=list)
    entity_vectors_without_entity: list[str] = field(default_factory=list)
    relations_without_vector: list[Pair] = field(default_factory=list)
    relation_vectors_without_relation: list[Pair] = field(default_factory=list)
    relations_without_endpoint: list[Pair] = field(default_factory=list)
    wrong_degrees: list[str] = field(default_factory=list)
    chunks_without_vector: list[str] = field(default_factory=list)
    chunk_vectors_without_chunk: list[str] = field(default_factory=list)
    stuck_documents: list[str] = field(default_factory=list)
    missing_vertices: list[str] = field(default_factory=list)
    extra_vertices: list[int] = field(default_factory=list)
    missing_edges: list[Pair] = field(default_factory=list)
    extra_edges: list[int] = field(default_factory=list)

    @property
    def problems(self) -> dict[str, int]:
        """Number of findings per kind, for the kinds that have any."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: len(v) for name, v in found.items() if isinstance(v, list) and v}

    @property
    def ok(self) -> bool:
        """Whether nothing disagrees."""
        return not self.problems

    def summary(self) -> str:
        """One line per kind of finding, or ``ok``."""
        if self.ok:
            return f"{self.workspace}: ok"
        return "\n".join(
            f"{self.workspace}: {n} {kind.replace('_', ' ')}" for kind, n in self.problems.items()
        )


@dataclass(frozen=True, slots=True)
class RepairOutcome:
    """The findings before the repair and what is left after it (same transaction)."""

    before: DoctorReport
    after: DoctorReport
    released_documents: list[str]


_FIELDS = {
    "entity_without_vector": "entities_without_vector",
    "entity_vector_without_entity": "entity_vectors_without_entity",
    "relation_without_vector": "relations_without_vector",
    "relation_vector_without_relation": "relation_vectors_without_relation",
    "relation_without_endpoint": "relations_without_endpoint",
    "wrong_degree": "wrong_degrees",
    "chunk_without_vector": "chunks_without_vector",
    "chunk_vector_without_chunk": "chunk_vectors_without_chunk",
    "stuck_document": "stuck_documents",
    "missing_vertex": "missing_vertices",
    "extra_vertex": "extra_vertices",
    "missing_edge": "missing_edges",
    "extra_edge": "extra_edges",
}


def _item(kind: str, item: list[str]) -> str | Pair | int:
    if kind in ("extra_vertex", "extra_edge"):
        return int(item[0])
    if len(item) == 2:
        return (item[0], item[1])
    return item[0]


async def _names(
    conn: asyncpg.Connection, workspace: WorkspaceName
) -> tuple[bool, dict[str, Identifier | int]]:
    info = await read_info(conn, workspace)
    if info is None:
        raise WorkspaceNotFound(f"workspace {workspace!r} does not exist")
    names: dict[str, Identifier | int] = {"schema": schema_of(workspace)}
    if info.graph_enabled:
        graph = graph_of(workspace)
        labels = {r["name"]: int(r["id"]) for r in await conn.fetch(SQL["label_ids"], graph.name)}
        if not {"entity", "DIRECTED"} <= labels.keys():
            raise StorageError(
                f"workspace {workspace!r} mirrors into AGE graph {graph.name!r}, but that graph or its "
                "labels are gone; re-create the workspace (drop it and insert again)"
            )
        names.update(graph=graph, vlabel=labels["entity"], elabel=labels["DIRECTED"])
    return info.graph_enabled, names


async def _findings(
    conn: asyncpg.Connection,
    workspace: WorkspaceName,
    graph_enabled: bool,
    names: dict[str, Identifier | int],
) -> DoctorReport:
    rows = list(await conn.fetch(render(SQL["table_findings"], **names)))
    processing = sorted(r["item"][0] for r in rows if r["kind"] == "processing")
    rows = [r for r in rows if r["kind"] != "processing"]
    if processing:
        unlocked = await conn.fetch(SQL["unlocked_documents"], lock_key("doc", workspace, ""), processing)
        rows += [{"kind": "stuck_document", "item": [r[0]]} for r in unlocked]
    if graph_enabled:
        rows += await conn.fetch(render(SQL["mirror_findings"], **names))
    found: dict[str, list[str | Pair | int]] = {}
    for r in rows:
        found.setdefault(_FIELDS[r["kind"]], []).append(_item(r["kind"], r["item"]))
    return DoctorReport(workspace, graph_enabled, **found)  # type: ignore[arg-type]


async def check(conn: asyncpg.Connection, workspace: WorkspaceName) -> DoctorReport:
    """Report every disagreement between the workspace's tables, vectors, graph and doc_status."""
    async with translated():
        graph_enabled, names = await _names(conn, workspace)
        return await _findings(conn, workspace, graph_enabled, names)


async def repair(conn: asyncpg.Connection, workspace: WorkspaceName) -> RepairOutcome:
    """Fix what can be fixed without the models, in one transaction; see the module docstring."""
    doc_prefix = lock_key("doc", workspace, "")
    async with translated(), conn.transaction():
        await conn.execute(XACT_LOCK, lock_key("workspace", workspace))
        graph_enabled, names = await _names(conn, workspace)
        before = await _findings(conn, workspace, graph_enabled, names)
        if graph_enabled:
            for block in (
                "delete_extra_edges",
                "delete_extra_vertices",
                "remirror_entities",
                "remirror_relations",
            ):
                await conn.execute(render(SQL[block], **names))
        await conn.execute(render(SQL["delete_orphan_vectors"], **names))
        if before.wrong_degrees:
            await conn.execute(render(SQL["lock_relations"], **names))
            await conn.execute(render(SQL["recount_degrees"], **names))
        released: list[str] = []
        if before.stuck_documents:
            locked = [
                r[0] for r in await conn.fetch(SQL["lock_documents"], doc_prefix, before.stuck_documents)
            ]
            released = [
                r[0] for r in await conn.fetch(render(SQL["release_stuck_documents"], **names), locked)
            ]
        after = await _findings(conn, workspace, graph_enabled, names)
    return RepairOutcome(before, after, released)
