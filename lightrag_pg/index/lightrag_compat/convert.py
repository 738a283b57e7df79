"""Upstream's stored values (a JSON record or a table row, same field names) as source records.

Every function takes what one upstream record holds and returns the record, or
``None`` when it is unusable (the caller counts it as skipped); none raises on
malformed data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ...store.transfer import StatusImport
from ...types import UNKNOWN_SOURCE
from .formats import as_float, as_int, cache_mode, split_field, status_of, text, timestamp
from .records import (
    ChunkList,
    SourceCacheEntry,
    SourceChunk,
    SourceDoc,
    SourceEntity,
    SourceRelation,
    SourceVector,
)


def _json(value: Any, default: Any) -> Any:
    """A JSON column read as text by the driver, or a value already decoded."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return default
    return default if value is None else value


def _path(value: Any) -> str:
    return text(value).strip() or UNKNOWN_SOURCE


def document(key: str, value: Mapping[str, Any]) -> SourceDoc | None:
    content = value.get("content")
    if not key or not isinstance(content, str):
        return None
    path = value.get("file_path", value.get("doc_name"))
    return SourceDoc(text(key), text(content), _path(path))


def status(key: str, value: Mapping[str, Any]) -> StatusImport | None:
    if not key:
        return None
    metadata = _json(value.get("metadata"), {})
    chunks = _json(value.get("chunks_list"), [])
    chunk_count = value.get("chunks_count")
    raw = text(value.get("status")).strip().lower()
    error = value.get("error_msg", value.get("error"))
    return StatusImport(
        id=text(key),
        status=status_of(raw),
        upstream_status=raw or "pending",
        content_summary=text(value.get("content_summary")),
        content_length=as_int(value.get("content_length")),
        chunks_count=None if chunk_count is None else as_int(chunk_count),
        chunks_list=[text(c) for c in chunks] if isinstance(chunks, list) else [],
        file_path=_path(value.get("file_path")),
        track_id=text(value["track_id"]) if value.get("track_id") else None,
        error_msg=text(error) if error else None,
        metadata=_plain(metadata) if isinstance(metadata, dict) else {},
        created_at=timestamp(value.get("created_at")),
        updated_at=timestamp(value.get("updated_at")),
    )


def _plain(value: Any) -> Any:
    """``value`` with every string made storable (JSON metadata)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def chunk(key: str, value: Mapping[str, Any]) -> SourceChunk | None:
    content, doc_id = value.get("content"), value.get("full_doc_id")
    if not key or not isinstance(content, str) or not doc_id:
        return None
    return SourceChunk(
        id=text(key),
        doc_id=text(doc_id),
        order=as_int(value.get("chunk_order_index")),
        tokens=as_int(value.get("tokens")),
        content=text(content),
        file_path=_path(value.get("file_path")),
    )


def cache_entries(key: str, value: Mapping[str, Any]) -> Iterator[SourceCacheEntry]:
    """The answers of one cache record; an older upstream's record nested by mode
    (``{mode: {hash: answer}}``) yields every answer it holds."""
    answer = value.get("return", value.get("return_value"))
    if isinstance(answer, str):
        cache_type = text(value.get("cache_type")) or "unknown"
        chunk_id = value.get("chunk_id")
        yield SourceCacheEntry(
            id=text(key),
            cache_type=cache_type,
            mode=text(value.get("mode")) or cache_mode(key),
            chunk_id=text(chunk_id) if chunk_id else None,
            prompt=text(value.get("original_prompt")),
            response=text(answer),
            created_at=timestamp(value.get("create_time")),
        )
        return
    for inner_key, inner in value.items():
        if isinstance(inner, Mapping) and isinstance(inner.get("return"), str):
            cache_type = text(inner.get("cache_type")) or "extract"
            yield from cache_entries(f"{key}:{cache_type}:{inner_key}", {"mode": key, **inner})


def entity(name: Any, props: Mapping[str, Any]) -> SourceEntity | None:
    entity_name = text(props.get("entity_id") or name).strip()
    if not entity_name:
        return None
    return SourceEntity(
        name=entity_name,
        entity_type=text(props.get("entity_type")).strip() or "UNKNOWN",
        description=text(props.get("description")),
        source_ids=split_field(props.get("source_id")),
        file_paths=split_field(props.get("file_path")),
        created_at=timestamp(props.get("created_at")),
    )


def relation(src: Any, tgt: Any, props: Mapping[str, Any]) -> SourceRelation | None:
    a, b = text(src).strip(), text(tgt).strip()
    if not a or not b or a == b:
        return None
    return SourceRelation(
        src=a,
        tgt=b,
        keywords=text(props.get("keywords")),
        description=text(props.get("description")),
        weight=as_float(props.get("weight")),
        source_ids=split_field(props.get("source_id")),
        file_paths=split_field(props.get("file_path")),
        created_at=timestamp(props.get("created_at")),
    )


def vector_key(kind: str, record: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The key of a vector record of ``kind`` (``chunks``, ``entities``, ``relationships``)."""
    if kind == "entities":
        name = text(record.get("entity_name")).strip()
        return (name,) if name else None
    if kind == "relationships":
        src, tgt = (
            text(record.get("src_id", record.get("source_id"))).strip(),
            text(record.get("tgt_id", record.get("target_id"))).strip(),
        )
        return (src, tgt) if src and tgt and src != tgt else None
    chunk_id = text(record.get("__id__", record.get("id"))).strip()
    return (chunk_id,) if chunk_id else None


def vector(kind: str, record: Mapping[str, Any], values: np.ndarray) -> SourceVector | None:
    key = vector_key(kind, record)
    if key is None or not np.all(np.isfinite(values)):
        return None
    return SourceVector(key, text(record.get("content")), np.asarray(values, dtype=np.float32))


def chunk_list(key: tuple[str, ...], value: Any) -> ChunkList | None:
    """An entity's or relation's chunk list (``{"chunk_ids": [...]}`` or the list itself)."""
    ids = _json(value.get("chunk_ids") if isinstance(value, Mapping) else value, [])
    if not isinstance(ids, list):
        return None
    return ChunkList(key, list(dict.fromkeys(text(i) for i in ids if i)))
