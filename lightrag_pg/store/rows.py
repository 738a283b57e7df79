"""Rows of the graph tables, as the stores return and accept them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

_ENTITY_COLUMNS = (
    "name",
    "entity_type",
    "description",
    "source_ids",
    "file_paths",
    "version",
    "created_at",
    "updated_at",
    "degree",
)
_RELATION_COLUMNS = (
    "src",
    "tgt",
    "keywords",
    "description",
    "weight",
    "source_ids",
    "file_paths",
    "version",
    "created_at",
    "updated_at",
    "degree",
)


R = TypeVar("R", "EntityRow", "RelationRow")


def _similarity(record: Mapping[str, Any]) -> float | None:
    value = record.get("similarity")
    return None if value is None else float(value)


def canonical_pair(a: str, b: str) -> tuple[str, str]:
    """Order an undirected pair the way ``relations`` stores it (byte order, like COLLATE "C")."""
    return (a, b) if a < b else (b, a)


@dataclass(slots=True)
class EntityRow:
    """One row of ``entities``.

    ``degree`` is filled in by reads; ``similarity`` (cosine to the query) by
    vector searches, and is None for entities reached through the graph.
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

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> EntityRow:
        """Build from a database row holding the entity columns, ``degree`` and maybe ``similarity``."""
        return cls(**{f: record[f] for f in _ENTITY_COLUMNS}, similarity=_similarity(record))

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entity_type": self.entity_type,
            "description": self.description,
            "source_ids": self.source_ids,
            "file_paths": self.file_paths,
            "version": self.version,
        }


@dataclass(slots=True)
class RelationRow:
    """One row of ``relations`` (``src < tgt``); ``degree`` is the edge degree
    (sum of the endpoint degrees), ``similarity`` as for :class:`EntityRow`."""

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

    def __post_init__(self) -> None:
        if self.src == self.tgt:
            raise ValueError(f"a relation needs two distinct entities, got {self.src!r} twice")
        self.src, self.tgt = canonical_pair(self.src, self.tgt)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RelationRow:
        """Build from a database row holding the relation columns, ``degree`` and maybe ``similarity``."""
        return cls(**{f: record[f] for f in _RELATION_COLUMNS}, similarity=_similarity(record))

    @property
    def pair(self) -> tuple[str, str]:
        return (self.src, self.tgt)

    def as_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "tgt": self.tgt,
            "keywords": self.keywords,
            "description": self.description,
            "weight": self.weight,
            "source_ids": self.source_ids,
            "file_paths": self.file_paths,
            "version": self.version,
        }


@dataclass(frozen=True, slots=True)
class MergeState(Generic[R]):
    """What a merge needs to know about one stored entity or relation before writing."""

    row: R | None
    linked: bool
    vector_content: str | None
    existing_endpoints: frozenset[str] = frozenset()


def vector_texts(embeddings: Any) -> list[str]:
    """pgvector text literals (``[1.0,2.0]``) for the rows of a 2-D array, for ``$n::text[]``."""
    import numpy as np

    rows = np.asarray(embeddings, dtype=np.float32)
    return ["[" + ",".join(map(repr, row.tolist())) + "]" for row in rows]
