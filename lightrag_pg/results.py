"""What the facade returns: its result types and the dicts shaped like upstream LightRAG's."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .index.progress import Progress
from .store.rows import EntityFragmentRow, EntityRow, RelationFragmentRow, RelationRow
from .types import GRAPH_FIELD_SEP as SEP

if TYPE_CHECKING:
    from .index.graph_edit import GraphItem
    from .index.intake import SkippedDuplicate


@dataclass(frozen=True, slots=True)
class InsertResult:
    """What an insert did: the ids it added, those it skipped, and the run's counters.

    ``skipped_ids`` were already in the workspace (with this content, or
    without ``replace``); ``replaced_ids`` were in the workspace with other
    content and were replaced; ``duplicates`` are texts of this call whose
    content equals an earlier text of the same call, with the document they
    duplicate.
    """

    track_id: str
    new_ids: list[str]
    skipped_ids: list[str]
    progress: Progress
    duplicates: list[SkippedDuplicate] = field(default_factory=list)
    replaced_ids: list[str] = field(default_factory=list)


def new_track_id() -> str:
    """A fresh id for the documents of one insert call: ``insert-<UTC time>-<random>``."""
    return f"insert-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"


def entity_info(item: GraphItem, include_vector_data: bool) -> dict[str, Any]:
    """An entity as upstream's ``get_entity_info`` shows it, plus its ``contributions``."""
    row = item.row
    assert isinstance(row, EntityRow)
    info: dict[str, Any] = {
        "entity_name": row.name,
        "source_id": SEP.join(row.source_ids),
        "graph_data": entity_graph_data(row),
        "contributions": [fragment_dict(f) for f in item.fragments],
    }
    return _with_vector(info, item, include_vector_data)


def relation_info(src: str, tgt: str, item: GraphItem, include_vector_data: bool) -> dict[str, Any]:
    """A relation as upstream's ``get_relation_info`` shows it (``src``, ``tgt`` as asked),
    plus its ``contributions``."""
    row = item.row
    assert isinstance(row, RelationRow)
    info: dict[str, Any] = {
        "src_entity": src,
        "tgt_entity": tgt,
        "source_id": SEP.join(row.source_ids),
        "graph_data": relation_graph_data(row),
        "contributions": [fragment_dict(f) for f in item.fragments],
    }
    return _with_vector(info, item, include_vector_data)


def _with_vector(info: dict[str, Any], item: GraphItem, include_vector_data: bool) -> dict[str, Any]:
    if include_vector_data:
        vector = item.vector
        info["vector_data"] = None if vector is None else {"content": vector[0], "vector": vector[1]}
    return info


def entity_deleted(name: str, relations: int) -> dict[str, Any]:
    """The answer of a deleted entity."""
    return {
        "status": "success",
        "entity_name": name,
        "relations_deleted": relations,
        "message": f"entity {name!r} and {relations} relations deleted",
    }


def relation_deleted(src: str, tgt: str) -> dict[str, Any]:
    """The answer of a deleted relation."""
    return {
        "status": "success",
        "src_entity": src,
        "tgt_entity": tgt,
        "message": f"relation {src!r} - {tgt!r} deleted",
    }


def entity_graph_data(row: EntityRow) -> dict[str, Any]:
    """An entity's properties as upstream's graph node carries them."""
    return {
        "entity_id": row.name,
        "entity_type": row.entity_type,
        "description": row.description,
        "source_id": SEP.join(row.source_ids),
        "file_path": SEP.join(row.file_paths),
        "created_at": int(row.created_at.timestamp()) if row.created_at else None,
        "degree": row.degree,
    }


def relation_graph_data(row: RelationRow) -> dict[str, Any]:
    """A relation's properties as upstream's graph edge carries them."""
    return {
        "src_id": row.src,
        "tgt_id": row.tgt,
        "keywords": row.keywords,
        "description": row.description,
        "weight": row.weight,
        "source_id": SEP.join(row.source_ids),
        "file_path": SEP.join(row.file_paths),
        "created_at": int(row.created_at.timestamp()) if row.created_at else None,
    }


def fragment_dict(f: EntityFragmentRow | RelationFragmentRow) -> dict[str, Any]:
    """One contribution as JSON: which chunk of which document said what (``manual``:
    a manual edit)."""
    from .index.merge import MANUAL_CHUNK_ID, is_manual_override

    out: dict[str, Any] = {
        "chunk_id": f.chunk_id,
        "doc_id": f.doc_id,
        "file_path": f.file_path,
        "manual": f.chunk_id == MANUAL_CHUNK_ID,
        "pinned": is_manual_override(f),
        "description": f.description,
    }
    if isinstance(f, EntityFragmentRow):
        out["entity_type"] = f.entity_type
    else:
        out["keywords"] = f.keywords
        out["weight"] = f.weight
    return out


def target_data(data: dict[str, Any] | None, merge_strategy: object) -> dict[str, Any] | None:
    """``merge_entities``' ``target_entity_data``, once its ``merge_strategy`` (accepted for
    compatibility with upstream, where it is deprecated, and not used) is found a dict or None."""
    if merge_strategy is not None and not isinstance(merge_strategy, dict):
        raise InvalidInput("merge_strategy must be a dict or None")
    return data
