"""Plain records the storage layer hands to the query pipeline.

The database layer turns rows into these dataclasses; everything in
``lightrag_pg.query`` except the orchestration works on them without touching
the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol


class TokenEncoder(Protocol):
    """The part of a tokenizer the query pipeline needs."""

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        ...


@dataclass(slots=True)
class EntityHit:
    """An entity (graph vertex) retrieved for a query.

    ``degree`` is the vertex degree in the graph; ``similarity`` is the cosine
    similarity to the keyword embedding when the entity came from a vector
    search, ``None`` when it was reached through a relation.
    """

    name: str
    entity_type: str
    description: str
    source_ids: list[str] = field(default_factory=list)
    file_paths: list[str] = field(default_factory=list)
    degree: int = 0
    created_at: datetime | None = None
    similarity: float | None = None


@dataclass(slots=True)
class RelationHit:
    """A relation (undirected graph edge) retrieved for a query.

    ``degree`` is the edge degree: the sum of the degrees of both endpoints.
    """

    src: str
    tgt: str
    keywords: str
    description: str
    weight: float = 1.0
    source_ids: list[str] = field(default_factory=list)
    file_paths: list[str] = field(default_factory=list)
    degree: int = 0
    created_at: datetime | None = None
    similarity: float | None = None

    @property
    def pair(self) -> tuple[str, str]:
        """The endpoints in canonical (sorted) order, identifying the edge."""
        a, b = sorted((self.src, self.tgt))
        return a, b


@dataclass(slots=True)
class ChunkHit:
    """A text chunk retrieved for a query (by vector search or via the graph)."""

    id: str
    content: str
    file_path: str = "unknown_source"
    doc_id: str = ""
    chunk_order_index: int = 0
    tokens: int = 0
    similarity: float | None = None
