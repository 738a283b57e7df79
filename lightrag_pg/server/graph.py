"""``/graphs`` and ``/graph/*``: subgraphs, labels, and editing entities and relations.

Subgraphs and labels come from the library's calls; ``/graph/entity/exists``
reads the entity table. The editing routes call the library's graph-management
methods with upstream's bodies and answer in upstream's shapes and status codes:
an edit, creation or merge naming an unknown entity or relation, or a name that
exists, is a 400 like any bad data; a delete of an unknown one is a 404. Nothing
is written then.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ..errors import GraphItemExists, GraphItemNotFound, InvalidInput
from ..store.subgraph import MAX_LIMIT
from .deps import Workspace
from .validate import MAX_LIST_ITEMS, Bounded, Data, Key, Name

router = APIRouter(tags=["graph"])


class EntityUpdateRequest(BaseModel):
    entity_name: Name
    updated_data: Data
    allow_rename: bool = False
    allow_merge: bool = False


class RelationUpdateRequest(BaseModel):
    source_id: Name
    target_id: Name
    updated_data: Data


class EntityCreateRequest(BaseModel):
    entity_name: Name
    entity_data: Data


class RelationCreateRequest(BaseModel):
    source_entity: Name
    target_entity: Name
    relation_data: Data


class EntityMergeRequest(BaseModel):
    entities_to_change: list[Name] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    entity_to_change_into: Name


class DeleteEntityRequest(BaseModel):
    entity_name: Name


class DeleteRelationRequest(BaseModel):
    source_entity: Name
    target_entity: Name


@contextmanager
def _edit() -> Iterator[None]:
    """Upstream's status for an edit naming a missing or an existing item: 400."""
    try:
        yield
    except (GraphItemNotFound, GraphItemExists) as exc:
        raise InvalidInput(str(exc)) from exc


def _done(message: str, data: Any) -> dict[str, Any]:
    return {"status": "success", "message": message, "data": data}


def _deleted(message: str) -> dict[str, Any]:
    """Upstream's ``DeletionResult`` of a successful graph deletion."""
    return {"status": "success", "doc_id": "", "message": message, "status_code": 200, "file_path": None}


@router.get("/graph/label/list")
async def graph_labels(runtime: Workspace) -> list[str]:
    """Every entity name (label) of the graph."""
    return await runtime.rag.aget_graph_labels()


@router.get("/graph/label/popular")
async def popular_labels(
    runtime: Workspace, limit: Annotated[int, Bounded(1, 1000), Query()] = 300
) -> list[str]:
    """The labels of the most connected entities, highest degree first."""
    return await runtime.rag.aget_popular_labels(limit)


@router.get("/graph/label/search")
async def search_labels(
    runtime: Workspace, q: Annotated[Key, Query()], limit: Annotated[int, Bounded(1, 100), Query()] = 50
) -> list[str]:
    """Labels matching ``q``, best first (a blank ``q`` matches nothing, as upstream)."""
    return await runtime.rag.asearch_labels(q, limit)


@router.get("/graphs")
async def knowledge_graph(
    runtime: Workspace,
    label: Annotated[Key, Query(min_length=1)],
    max_depth: Annotated[int, Bounded(1, MAX_LIMIT), Query()] = 3,
    max_nodes: Annotated[int, Bounded(1, MAX_LIMIT), Query()] = 1000,
    max_neighbours: Annotated[int | None, Bounded(1, MAX_LIMIT), Query()] = None,
) -> dict[str, Any]:
    """The subgraph around ``label`` (``*`` for the whole graph) as ``nodes``, ``edges``
    and ``is_truncated``; an unknown label gives an empty graph. ``max_neighbours`` (not
    upstream's) caps the new neighbours each node adds, heaviest relations first."""
    graph = await runtime.rag.aget_knowledge_graph(
        node_label=label, max_depth=max_depth, max_nodes=max_nodes, max_neighbours=max_neighbours
    )
    return graph.to_dict()


@router.get("/graph/entity/exists")
async def entity_exists(runtime: Workspace, name: Annotated[Key, Query(min_length=1)]) -> dict[str, bool]:
    """Whether an entity of that name exists."""
    return {"exists": await runtime.rag.aentity_exists(name)}


@router.post("/graph/entity/edit")
async def edit_entity(request: EntityUpdateRequest, runtime: Workspace) -> dict[str, Any]:
    """Edit an entity's type or description, or rename it (``updated_data.entity_name``,
    with ``allow_rename``); onto an existing name only with ``allow_merge``."""
    new_name = str(request.updated_data.get("entity_name", request.entity_name)).strip()
    renamed = new_name != request.entity_name
    merged = False
    if renamed and request.allow_rename and request.allow_merge:
        merged = await runtime.rag.aentity_exists(new_name)
    with _edit():
        result = await runtime.rag.aedit_entity(
            request.entity_name,
            request.updated_data,
            allow_rename=request.allow_rename,
            allow_merge=request.allow_merge,
        )
    summary = {
        "merged": merged,
        "merge_status": "success" if merged else "not_attempted",
        "merge_error": None,
        "operation_status": "success",
        "target_entity": new_name if renamed else None,
        "final_entity": result["entity_name"],
        "renamed": renamed,
    }
    message = f"Entity merged successfully into '{new_name}'" if merged else "Entity updated successfully"
    return {**_done(message, result), "operation_summary": summary}


@router.post("/graph/relation/edit")
async def edit_relation(request: RelationUpdateRequest, runtime: Workspace) -> dict[str, Any]:
    with _edit():
        result = await runtime.rag.aedit_relation(request.source_id, request.target_id, request.updated_data)
    return _done("Relation updated successfully", result)


@router.post("/graph/entity/create")
async def create_entity(request: EntityCreateRequest, runtime: Workspace) -> dict[str, Any]:
    with _edit():
        result = await runtime.rag.acreate_entity(request.entity_name, request.entity_data)
    return _done(f"Entity '{request.entity_name}' created successfully", result)


@router.post("/graph/relation/create")
async def create_relation(request: RelationCreateRequest, runtime: Workspace) -> dict[str, Any]:
    with _edit():
        result = await runtime.rag.acreate_relation(
            request.source_entity, request.target_entity, request.relation_data
        )
    return _done(
        f"Relation created successfully between '{request.source_entity}' and '{request.target_entity}'",
        result,
    )


@router.post("/graph/entities/merge")
async def merge_entities(request: EntityMergeRequest, runtime: Workspace) -> dict[str, Any]:
    with _edit():
        result = await runtime.rag.amerge_entities(
            source_entities=request.entities_to_change, target_entity=request.entity_to_change_into
        )
    return _done(
        f"Successfully merged {len(request.entities_to_change)} entities "
        f"into '{request.entity_to_change_into}'",
        result,
    )


@router.delete("/graph/entity/delete")
async def delete_entity(request: DeleteEntityRequest, runtime: Workspace) -> dict[str, Any]:
    result = await runtime.rag.adelete_by_entity(request.entity_name)
    return _deleted(result["message"])


@router.delete("/graph/relation/delete")
async def delete_relation(request: DeleteRelationRequest, runtime: Workspace) -> dict[str, Any]:
    result = await runtime.rag.adelete_by_relation(request.source_entity, request.target_entity)
    return _deleted(result["message"])
