"""Plain records the storage layer hands to the query pipeline.

The database layer turns rows into these dataclasses; everything in
``lightrag_pg.query`` except the orchestration works on them without touching
the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..store.rows import EntityRow, RelationRow
from ..types import UNKNOWN_SOURCE


class TokenEncoder(Protocol):
    """The part of a tokenizer the query pipeline needs."""

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        ...


def count_tokens(tokenizer: TokenEncoder, text: str) -> int:
    """Tokens in ``text``, through the tokenizer's (cached) ``count`` when it has one."""
    count = getattr(tokenizer, "count", None)
    return count(text) if callable(count) else len(tokenizer.encode(text))


EntityHit = EntityRow
"""An entity retrieved for a query: the stored row with its degree and, when it
came from a vector search, its similarity."""

RelationHit = RelationRow
"""A relation retrieved for a query: the stored row with its edge degree (sum of
the endpoint degrees) and, when it came from a vector search, its similarity."""


@dataclass(slots=True)
class ChunkHit:
    """A text chunk retrieved for a query (by vector search or via the graph)."""

    id: str
    content: str
    file_path: str = UNKNOWN_SOURCE
    doc_id: str = ""
    chunk_order_index: int = 0
    tokens: int = 0
    similarity: float | None = None
