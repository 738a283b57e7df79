"""Graph views for visualisation: subgraphs in upstream LightRAG's JSON shape, and entity labels.

Reads the relational tables only, so it works with or without the AGE mirror.
A subgraph is two statements: the nodes (breadth-first in SQL, or the
highest-degree nodes for ``"*"``), then the edges among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from ..db.sqlfile import load_queries
from ..errors import InvalidInput
from ..types import GRAPH_FIELD_SEP
from .rows import EntityRow, RelationRow

SQL = load_queries(__package__, "subgraph.sql")

ALL_NODES = "*"
"""The label asking for the highest-degree nodes of the whole graph."""

EDGE_TYPE = "DIRECTED"
"""The ``type`` of every edge, as upstream LightRAG names it (relations are undirected)."""

FUZZY_SHARE = 0.5
"""Share of the query's trigrams a name must contain to match a label search fuzzily."""

MAX_LIMIT = 10_000
"""Largest ``max_nodes`` or ``limit`` accepted."""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A node of a :class:`KnowledgeGraph`: the entity name as ``id`` and label."""

    id: str
    labels: list[str]
    properties: dict[str, Any]


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An edge of a :class:`KnowledgeGraph`; ``source`` and ``target`` are node ids."""

    id: str
    type: str
    source: str
    target: str
    properties: dict[str, Any]


@dataclass(frozen=True, slots=True)
class KnowledgeGraph:
    """A subgraph in upstream LightRAG's shape; :meth:`to_dict` gives its JSON."""

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    is_truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": [...], "edges": [...], "is_truncated": bool}``, ready for ``json.dumps``."""
        return {
            "nodes": [{"id": n.id, "labels": n.labels, "properties": n.properties} for n in self.nodes],
            "edges": [
                {
                    "id": e.id,
                    "type": e.type,
                    "source": e.source,
                    "target": e.target,
                    "properties": e.properties,
                }
                for e in self.edges
            ],
            "is_truncated": self.is_truncated,
        }


def _epoch(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp())


def node_of(entity: EntityRow, depth: int) -> GraphNode:
    """The visualisation node of an entity found at ``depth`` from the start."""
    return GraphNode(
        id=entity.name,
        labels=[entity.name],
        properties={
            "entity_id": entity.name,
            "entity_type": entity.entity_type,
            "description": entity.description,
            "source_id": GRAPH_FIELD_SEP.join(entity.source_ids),
            "file_path": GRAPH_FIELD_SEP.join(entity.file_paths),
            "created_at": _epoch(entity.created_at),
            "degree": entity.degree,
            "depth": depth,
        },
    )


def edge_of(relation: RelationRow) -> GraphEdge:
    """The visualisation edge of a relation, identified by its endpoints."""
    return GraphEdge(
        id=f"{relation.src}-{relation.tgt}",
        type=EDGE_TYPE,
        source=relation.src,
        target=relation.tgt,
        properties={
            "weight": relation.weight,
            "keywords": relation.keywords,
            "description": relation.description,
            "source_id": GRAPH_FIELD_SEP.join(relation.source_ids),
            "file_path": GRAPH_FIELD_SEP.join(relation.file_paths),
            "created_at": _epoch(relation.created_at),
        },
    )


def _check_count(name: str, value: object, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= MAX_LIMIT:
        raise InvalidInput(f"{name} must be an integer in {low}..{MAX_LIMIT}, got {value!r}")
    return value


class SubgraphStore:
    """Subgraphs and labels of one workspace, bound to one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def knowledge_graph(
        self, label: str, max_depth: int = 3, max_nodes: int = 1000, max_neighbours: int | None = None
    ) -> KnowledgeGraph:
        """The subgraph around entity ``label`` (``"*"``: the highest-degree nodes); two statements.

        Breadth-first up to ``max_depth`` hops, both directions; with ``max_neighbours``,
        each node adds at most that many new neighbours, those of its heaviest relations
        first (a node's ``degree`` above its edges shown says some were left out). When
        more than ``max_nodes`` nodes are reachable the closest are kept, then those of
        highest degree, then by name, and ``is_truncated`` is set. The edges are every
        relation between kept nodes. An unknown label gives an empty graph.
        """
        if not isinstance(label, str) or not label:
            raise InvalidInput(f"node label must be a non-empty string, got {label!r}")
        _check_count("max_depth", max_depth, 0)
        _check_count("max_nodes", max_nodes, 1)
        if max_neighbours is not None:
            _check_count("max_neighbours", max_neighbours, 1)
        if label == ALL_NODES:
            rows = await self.conn.fetch(SQL["top_by_degree"], max_nodes)
        else:
            rows = await self.conn.fetch(SQL["neighbourhood"], label, max_depth, max_nodes, max_neighbours)
        if not rows:
            return KnowledgeGraph()
        nodes = [node_of(EntityRow.from_record(r), r["depth"]) for r in rows]
        edges = await self.conn.fetch(SQL["edges_among"], [n.id for n in nodes])
        return KnowledgeGraph(
            nodes=nodes,
            edges=[edge_of(RelationRow.from_record(r)) for r in edges],
            is_truncated=rows[0]["reached"] > len(nodes),
        )

    async def labels(self) -> list[str]:
        """Every entity name, in byte order."""
        return [r["name"] for r in await self.conn.fetch(SQL["all_labels"])]

    async def popular_labels(self, limit: int = 300) -> list[str]:
        """The ``limit`` entity names of highest degree, ties broken by name."""
        rows = await self.conn.fetch(SQL["popular_labels"], _check_count("limit", limit, 1))
        return [r["name"] for r in rows]

    async def search_labels(self, query: str, limit: int = 50) -> list[str]:
        """Entity names matching ``query``, best first: whole name, prefix, word start,
        substring, then fuzzy (trigram share), case-insensitive. Empty query: no names."""
        if not isinstance(query, str):
            raise InvalidInput(f"label search needs a string, got {type(query).__name__}")
        _check_count("limit", limit, 1)
        needle = " ".join(query.lower().split())
        if not needle:
            return []
        rows = await self.conn.fetch(SQL["search_labels"], needle, limit, FUZZY_SHARE)
        return [r["name"] for r in rows]
