"""Plain records passed between the indexing, storage and query layers."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

UNKNOWN_SOURCE = "unknown_source"
"""The file path recorded for text given without one."""

NO_KEYWORDS = "related"
"""The keywords of a relation its text names no word for (the offline extractor's)."""

GRAPH_FIELD_SEP = "<SEP>"
"""Joins several source ids, file paths or description fragments in one text field."""


class DocStatus(str, Enum):
    """Where a document is in the pipeline (``doc_status.status``)."""

    PENDING = "pending"
    PROCESSING = "processing"
    PROCESSED = "processed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """One entity mention produced by an extractor for one chunk."""

    name: str
    entity_type: str
    description: str
    chunk_id: str
    file_path: str = UNKNOWN_SOURCE


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """One relation mention produced by an extractor for one chunk.

    ``src`` and ``tgt`` are as written by the extractor; storage puts the pair
    in canonical order because relations are undirected.
    """

    src: str
    tgt: str
    keywords: str
    description: str
    weight: float
    chunk_id: str
    file_path: str = UNKNOWN_SOURCE


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of a document, as produced by the chunker."""

    tokens: int
    content: str
    chunk_order_index: int


MAX_MALFORMED = 32
"""Malformed record lines an :class:`Extraction` keeps for a gleaning pass to correct."""
MAX_MALFORMED_CHARS = 500
"""Characters kept of each malformed record line."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything one extractor call produced for one chunk."""

    entities: tuple[ExtractedEntity, ...]
    relations: tuple[ExtractedRelation, ...]
    dropped_lines: int = 0
    malformed: tuple[str, ...] = field(default=(), compare=False)
    """The record lines dropped as malformed (cut off, fields missing), for a gleaning
    pass to correct; at most :data:`MAX_MALFORMED` of them, each cut to
    :data:`MAX_MALFORMED_CHARS` characters."""
