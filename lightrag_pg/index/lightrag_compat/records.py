"""The records an upstream LightRAG source yields, whatever its shape (files or PostgreSQL).

Each reader turns upstream's fields into these once; the importer sees nothing else.
Text is already made storable (:func:`~.formats.text`), vectors are float32.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np

from ...store.transfer import StatusImport


@dataclass(frozen=True, slots=True)
class SourceDoc:
    """One document (``full_docs``)."""

    id: str
    content: str
    file_path: str


@dataclass(frozen=True, slots=True)
class SourceChunk:
    """One chunk (``text_chunks``)."""

    id: str
    doc_id: str
    order: int
    tokens: int
    content: str
    file_path: str


@dataclass(frozen=True, slots=True)
class SourceVector:
    """One stored vector: its key (a chunk id, an entity name, or a relation's two
    endpoints), the text it was computed from and its values."""

    key: tuple[str, ...]
    content: str
    vector: np.ndarray


@dataclass(frozen=True, slots=True)
class SourceCacheEntry:
    """One cached LLM answer (``llm_response_cache``)."""

    id: str
    cache_type: str
    mode: str
    chunk_id: str | None
    prompt: str
    response: str
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class SourceEntity:
    """One graph node."""

    name: str
    entity_type: str
    description: str
    source_ids: list[str]
    file_paths: list[str]
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class SourceRelation:
    """One graph edge (endpoints as upstream gave them)."""

    src: str
    tgt: str
    keywords: str
    description: str
    weight: float
    source_ids: list[str]
    file_paths: list[str]
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class ChunkList:
    """The chunks an entity (one name) or a relation (two) was extracted from."""

    key: tuple[str, ...]
    chunk_ids: list[str]


@dataclass(frozen=True, slots=True)
class Embedding:
    """What a source says about its vectors: their dimension, and the model when recorded."""

    dim: int | None
    model: str | None = None
    """The model as upstream records it (its vector tables' suffix), or None."""
    where: str = ""
    """Where the facts were read, for messages."""


@dataclass
class SourceStats:
    """Rows a reader passed over as unreadable, by kind, with a few examples."""

    unreadable: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, kind: str, example: str) -> None:
        self.unreadable[kind] = self.unreadable.get(kind, 0) + 1
        shown = self.examples.setdefault(kind, [])
        if len(shown) < 5:
            shown.append(example[:200])


class Source(Protocol):
    """An upstream workspace read as streams of batches of at most ``size`` records.

    Every stream reads its rows in a fixed order and keeps no more than one batch;
    calling it again starts it again.
    """

    description: str
    """What is read, for messages and the import marker (no password)."""
    tag: str
    """A stable name of the source, recorded with every imported document."""
    stats: SourceStats
    position: dict[str, tuple[int, int]]
    """By stream: how far it has read and of how much (0: unknown), in :attr:`unit`."""
    unit: str
    """``B`` (bytes of files) or ``rows`` (of tables)."""

    async def embedding(self) -> Embedding: ...

    async def totals(self) -> dict[str, int | None]:
        """Rows (or bytes, for files) each stream will read, when cheap to know."""
        ...

    def documents(self, size: int) -> AsyncIterator[Sequence[SourceDoc]]: ...

    def statuses(self, size: int) -> AsyncIterator[Sequence[StatusImport]]: ...

    def chunks(self, size: int) -> AsyncIterator[Sequence[SourceChunk]]: ...

    def chunk_vectors(self, size: int) -> AsyncIterator[Sequence[SourceVector]]: ...

    def cache(self, size: int) -> AsyncIterator[Sequence[SourceCacheEntry]]: ...

    def entities(self, size: int) -> AsyncIterator[Sequence[SourceEntity]]: ...

    def entity_vectors(self, size: int) -> AsyncIterator[Sequence[SourceVector]]: ...

    def entity_chunks(self, size: int) -> AsyncIterator[Sequence[ChunkList]]: ...

    def relations(self, size: int) -> AsyncIterator[Sequence[SourceRelation]]: ...

    def relation_vectors(self, size: int) -> AsyncIterator[Sequence[SourceVector]]: ...

    def relation_chunks(self, size: int) -> AsyncIterator[Sequence[ChunkList]]: ...

    async def close(self) -> None: ...
