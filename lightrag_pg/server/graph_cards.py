"""An entity's card: what an agent reads about one entity, from two facade calls."""

from __future__ import annotations

from typing import Any

from ..rag import LightRAG

MAX_SOURCES = 100
"""The most source documents a card lists (``sources_total`` counts them all)."""


async def entity_card(rag: LightRAG, name: str, max_neighbours: int) -> dict[str, Any]:
    """Entity ``name``: type, description, degree, the documents (and chunks) it comes
    from, and up to ``max_neighbours`` neighbours, most connected first, each with the
    relation to it. :class:`~lightrag_pg.errors.GraphItemNotFound` for an unknown name."""
    info = await rag.aget_entity_info(name)
    entity = info["entity_name"]
    data = info["graph_data"]
    graph = await rag.aget_knowledge_graph(entity, max_depth=1, max_nodes=max_neighbours + 1)
    nodes = {n.id: n.properties for n in graph.nodes}
    neighbours: list[dict[str, Any]] = []
    for edge in graph.edges:
        if entity not in (edge.source, edge.target):
            continue
        other = edge.target if edge.source == entity else edge.source
        neighbours.append(
            {
                "entity_name": other,
                "entity_type": nodes.get(other, {}).get("entity_type"),
                "degree": nodes.get(other, {}).get("degree"),
                "relation": {
                    "description": edge.properties.get("description"),
                    "keywords": edge.properties.get("keywords"),
                    "weight": edge.properties.get("weight"),
                },
            }
        )
    neighbours.sort(key=lambda n: (-(n["degree"] or 0), n["entity_name"]))
    sources: dict[str, dict[str, Any]] = {}
    for contribution in info["contributions"]:
        if contribution["manual"]:
            continue
        source = sources.setdefault(
            contribution["doc_id"],
            {"doc_id": contribution["doc_id"], "file_path": contribution["file_path"], "chunk_ids": []},
        )
        source["chunk_ids"].append(contribution["chunk_id"])
    return {
        "entity_name": entity,
        "entity_type": data["entity_type"],
        "description": data["description"],
        "degree": data["degree"],
        "edited_by_hand": any(c["manual"] for c in info["contributions"]),
        "sources": list(sources.values())[:MAX_SOURCES],
        "sources_total": len(sources),
        "neighbours": neighbours,
        "neighbours_truncated": graph.is_truncated,
    }
