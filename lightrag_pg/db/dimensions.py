"""The embedding widths pgvector's HNSW indexes accept (no heavy imports: read at start-up)."""

from __future__ import annotations

VECTOR_HNSW_MAX_DIM = 2000
"""pgvector's HNSW limit for ``vector``; wider embeddings are indexed as ``halfvec``."""

HALFVEC_HNSW_MAX_DIM = 4000
"""pgvector's HNSW limit for ``halfvec``: the widest embedding a workspace can index."""


class HalfvecCast:
    """The cast that makes a search match its workspace's HNSW index, vetted for SQL text.

    Rendered for a ``{halfvec}`` placeholder after ``embedding`` and after the query
    vector: nothing up to :data:`VECTOR_HNSW_MAX_DIM` dimensions (the index is on the
    column), ``::halfvec(dim)`` above (the index is on that expression).
    """

    __slots__ = ("embedding_dim", "sql")

    def __init__(self, embedding_dim: int) -> None:
        if type(embedding_dim) is not int or embedding_dim <= 0:
            raise ValueError(f"embedding_dim must be a positive integer, got {embedding_dim!r}")
        self.embedding_dim = embedding_dim
        self.sql = "" if embedding_dim <= VECTOR_HNSW_MAX_DIM else f"::halfvec({embedding_dim})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HalfvecCast) and other.embedding_dim == self.embedding_dim

    def __hash__(self) -> int:
        return hash(self.embedding_dim)

    def __repr__(self) -> str:
        return f"HalfvecCast({self.embedding_dim})"
