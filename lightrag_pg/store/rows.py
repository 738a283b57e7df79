"""Rows of the workspace tables, as the stores return and accept them.

Each table has one row type, built from a database record in one place (its
``from_record``). Batches travel to PostgreSQL one way: as parallel typed
arrays, unpacked with ``unnest($1::text[], $2::int[], ...)``; :func:`columns`
turns rows into those arrays. A list-valued column (``source_ids``) goes as
``jsonb[]``, one JSON list per row; a vector column as ``vector[]``
(:func:`vectors`), through pgvector's binary codec.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np
from pgvector import Vector

from ..jsonline import json_line
from ..types import UNKNOWN_SOURCE, DocStatus

R = TypeVar("R", "EntityRow", "RelationRow")
K = TypeVar("K", str, tuple[str, str])


def columns(rows: Iterable[Sequence[Any]], width: int) -> list[list[Any]]:
    """``rows`` (tuples of ``width`` values) as ``width`` parallel lists, one per column.

    These are the parameters of a batch statement reading ``unnest($1, $2, ...)``.
    A value that is itself a list must be given as a tuple (asyncpg reads a list
    inside an array parameter as a sub-array; a tuple is encoded by the column's codec).
    """
    cols: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for col, value in zip(cols, row, strict=True):
            col.append(value)
    return cols


def pair_columns(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Undirected pairs, put in canonical order, as two parallel lists (sources, targets)."""
    return columns((canonical_pair(a, b) for a, b in pairs), 2)


def vectors(embeddings: Any) -> list[Vector]:
    """The rows of a 2-D array as pgvector values, for a ``$n::vector[]`` parameter."""
    return [Vector(row) for row in np.asarray(embeddings, dtype=np.float32)]


def vector_columns(
    keys: Sequence[K], given: Mapping[K, tuple[str, Any]]
) -> tuple[list[str | None], list[Vector | None]]:
    """The texts and vectors ``given`` for ``keys``, as two parallel lists for
    ``$n::text[], $m::vector[]`` parameters; None where a key has no vector."""
    texts: list[str | None] = []
    values: list[Vector | None] = []
    for key in keys:
        text, value = given.get(key, (None, None))
        texts.append(text)
        values.append(None if value is None else Vector(np.asarray(value, dtype=np.float32)))
    return texts, values


def vectors_by_id(records: Iterable[Mapping[str, Any]], key: str) -> dict[str, np.ndarray]:
    """Rows of ``key`` and ``embedding`` (read as ``real[]``) as float32 vectors by ``key``."""
    return {r[key]: np.asarray(r["embedding"], dtype=np.float32) for r in records}


def canonical_pair(a: str, b: str) -> tuple[str, str]:
    """Order an undirected pair the way ``relations`` stores it (byte order, like COLLATE "C")."""
    return (a, b) if a < b else (b, a)


def entity_context_line(name: str, entity_type: str | None, description: str | None) -> str:
    """The JSON line an entity contributes to a query context (upstream's form: no
    file_path or created_at; non-ASCII kept). Its token count, with the newline that joins it
    to the next line, is stored as ``context_tokens``."""
    return json_line(
        {"entity": name, "type": entity_type or "UNKNOWN", "description": description or "UNKNOWN"}
    )


def relation_context_line(src: str, tgt: str, description: str | None) -> str:
    """The JSON line a relation contributes to a query context; see :func:`entity_context_line`."""
    return json_line({"entity1": src, "entity2": tgt, "description": description or "UNKNOWN"})


def _similarity(record: Mapping[str, Any]) -> float | None:
    value = record.get("similarity")
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class EntityRow:
    """One row of ``entities``.

    ``degree`` is filled in by reads; ``similarity`` (cosine to the query) by
    vector searches, and is None for entities reached through the graph.
    ``context_tokens`` is the token count of :meth:`context_line` and its newline, set by the
    writer once the description is final (None: not counted).
    """

    name: str
    entity_type: str = "UNKNOWN"
    description: str = ""
    source_ids: list[str] = field(default_factory=list)
    file_paths: list[str] = field(default_factory=list)
    version: int = 0
    degree: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    similarity: float | None = None
    context_tokens: int | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> EntityRow:
        """Build from a database row holding the entity columns, ``degree`` and maybe ``similarity``."""
        return cls(
            name=record["name"],
            entity_type=record["entity_type"],
            description=record["description"],
            source_ids=list(record["source_ids"]),
            file_paths=list(record["file_paths"]),
            version=record["version"],
            degree=record["degree"],
            created_at=record["created_at"],
            updated_at=record["updated_at"],
            similarity=_similarity(record),
            context_tokens=record.get("context_tokens"),
        )

    def context_line(self) -> str:
        """The JSON line this entity contributes to a query context."""
        return entity_context_line(self.name, self.entity_type, self.description)

    def values(self) -> tuple[Any, ...]:
        """The written columns: name, entity_type, description, source_ids, file_paths, version,
        context_tokens."""
        return (
            self.name,
            self.entity_type,
            self.description,
            tuple(self.source_ids),
            tuple(self.file_paths),
            self.version,
            self.context_tokens,
        )


@dataclass(frozen=True, slots=True)
class RelationRow:
    """One row of ``relations`` (``src < tgt``); ``degree`` is the edge degree
    (sum of the endpoint degrees), ``similarity`` and ``context_tokens`` as for
    :class:`EntityRow`."""

    src: str
    tgt: str
    keywords: str = ""
    description: str = ""
    weight: float = 1.0
    source_ids: list[str] = field(default_factory=list)
    file_paths: list[str] = field(default_factory=list)
    version: int = 0
    degree: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    similarity: float | None = None
    context_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.src == self.tgt:
            raise ValueError(f"a relation needs two distinct entities, got {self.src!r} twice")
        src, tgt = canonical_pair(self.src, self.tgt)
        object.__setattr__(self, "src", src)  # frozen: put the pair in canonical order once
        object.__setattr__(self, "tgt", tgt)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RelationRow:
        """Build from a database row holding the relation columns, ``degree`` and maybe ``similarity``."""
        return cls(
            src=record["src"],
            tgt=record["tgt"],
            keywords=record["keywords"],
            description=record["description"],
            weight=record["weight"],
            source_ids=list(record["source_ids"]),
            file_paths=list(record["file_paths"]),
            version=record["version"],
            degree=record["degree"],
            created_at=record["created_at"],
            updated_at=record["updated_at"],
            similarity=_similarity(record),
            context_tokens=record.get("context_tokens"),
        )

    @property
    def pair(self) -> tuple[str, str]:
        return (self.src, self.tgt)

    def context_line(self) -> str:
        """The JSON line this relation contributes to a query context."""
        return relation_context_line(self.src, self.tgt, self.description)

    def values(self) -> tuple[Any, ...]:
        """The written columns: src, tgt, keywords, description, weight, source_ids, file_paths, version,
        context_tokens."""
        return (
            self.src,
            self.tgt,
            self.keywords,
            self.description,
            self.weight,
            tuple(self.source_ids),
            tuple(self.file_paths),
            self.version,
            self.context_tokens,
        )


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One row of ``text_chunks``; ``similarity`` (cosine to the query) is set by
    reads that compare with a query vector, else None."""

    id: str
    doc_id: str
    chunk_order_index: int
    tokens: int
    content: str
    file_path: str = UNKNOWN_SOURCE
    created_at: datetime | None = None
    similarity: float | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ChunkRow:
        """Build from a database row holding the chunk columns and maybe ``similarity``."""
        return cls(
            id=record["id"],
            doc_id=record["doc_id"],
            chunk_order_index=record["chunk_order_index"],
            tokens=record["tokens"],
            content=record["content"],
            file_path=record["file_path"],
            created_at=record["created_at"],
            similarity=_similarity(record),
        )

    def values(self) -> tuple[Any, ...]:
        """The written columns: id, doc_id, chunk_order_index, tokens, content, file_path."""
        return (self.id, self.doc_id, self.chunk_order_index, self.tokens, self.content, self.file_path)


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One row of ``full_docs``, with the ``track_id`` of the insert that enqueued it."""

    id: str
    content: str
    file_path: str = UNKNOWN_SOURCE
    track_id: str | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> DocumentRow:
        """Build from a database row holding the document columns and ``track_id``."""
        return cls(
            id=record["id"],
            content=record["content"],
            file_path=record["file_path"],
            track_id=record["track_id"],
        )

    def values(self) -> tuple[Any, ...]:
        """The written columns: id, content, file_path, track_id."""
        return (self.id, self.content, self.file_path, self.track_id)


@dataclass(frozen=True, slots=True)
class StatusRow:
    """One row of ``doc_status``: where a document is in the pipeline."""

    id: str
    status: DocStatus
    content_summary: str
    content_length: int
    chunks_count: int | None
    chunks_list: list[str]
    file_path: str
    track_id: str | None
    error_msg: str | None
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> StatusRow:
        """Build from a ``doc_status`` row."""
        return cls(
            id=record["id"],
            status=DocStatus(record["status"]),
            content_summary=record["content_summary"],
            content_length=record["content_length"],
            chunks_count=record["chunks_count"],
            chunks_list=list(record["chunks_list"] or []),
            file_path=record["file_path"],
            track_id=record["track_id"],
            error_msg=record["error_msg"],
            metadata=dict(record["metadata"] or {}),
            created_at=record["created_at"],
            updated_at=record["updated_at"],
        )


@dataclass(frozen=True, slots=True)
class MergeState(Generic[R]):
    """What a merge needs to know about one stored entity or relation before writing."""

    row: R | None
    linked: bool
    vector_content: str | None
    existing_endpoints: frozenset[str] = frozenset()
    unrecorded: bool = False
    """The row holds contributions merged before fragments were recorded."""


@dataclass(frozen=True, slots=True)
class EntityFragmentRow:
    """One row of ``entity_fragments``: what one chunk said about one entity.

    ``seq`` numbers the mentions of the entity within the chunk (an extractor
    may describe it more than once). A fragment with type ``UNKNOWN`` and the
    relation's description stands for an entity a relation names without the
    chunk describing it.
    """

    entity_name: str
    chunk_id: str
    seq: int
    doc_id: str
    entity_type: str
    description: str
    file_path: str = UNKNOWN_SOURCE

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> EntityFragmentRow:
        """Build from an ``entity_fragments`` row."""
        return cls(
            entity_name=record["entity_name"],
            chunk_id=record["chunk_id"],
            seq=record["seq"],
            doc_id=record["doc_id"],
            entity_type=record["entity_type"],
            description=record["description"],
            file_path=record["file_path"],
        )

    def values(self) -> tuple[Any, ...]:
        """The written columns: entity_name, chunk_id, seq, doc_id, entity_type, description, file_path."""
        return (
            self.entity_name,
            self.chunk_id,
            self.seq,
            self.doc_id,
            self.entity_type,
            self.description,
            self.file_path,
        )


@dataclass(frozen=True, slots=True)
class RelationFragmentRow:
    """One row of ``relation_fragments``: what one chunk said about one relation
    (``src < tgt``, like ``relations``)."""

    src: str
    tgt: str
    chunk_id: str
    seq: int
    doc_id: str
    keywords: str
    description: str
    weight: float
    file_path: str = UNKNOWN_SOURCE

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RelationFragmentRow:
        """Build from a ``relation_fragments`` row."""
        return cls(
            src=record["src"],
            tgt=record["tgt"],
            chunk_id=record["chunk_id"],
            seq=record["seq"],
            doc_id=record["doc_id"],
            keywords=record["keywords"],
            description=record["description"],
            weight=record["weight"],
            file_path=record["file_path"],
        )

    @property
    def pair(self) -> tuple[str, str]:
        return (self.src, self.tgt)

    def values(self) -> tuple[Any, ...]:
        """The written columns: src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path."""
        return (
            self.src,
            self.tgt,
            self.chunk_id,
            self.seq,
            self.doc_id,
            self.keywords,
            self.description,
            self.weight,
            self.file_path,
        )


@dataclass(frozen=True, slots=True)
class TouchedRow(Generic[R]):
    """A stored entity or relation some documents contributed to, with the text
    its vector was computed from, and whether it holds contributions merged
    before fragments were recorded (links without fragments)."""

    row: R
    vector_content: str | None
    unrecorded: bool
