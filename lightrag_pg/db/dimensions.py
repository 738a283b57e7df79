"""The embedding widths pgvector's HNSW indexes accept (no heavy imports: read at start-up)."""

from __future__ import annotations

VECTOR_HNSW_MAX_DIM = 2000
"""pgvector's HNSW limit for ``vector``; wider embeddings are indexed as ``halfvec``."""

HALFVEC_HNSW_MAX_DIM = 4000
"""pgvector's HNSW limit for ``halfvec``: the widest embedding a workspace can index."""
