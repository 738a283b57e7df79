"""A deterministic local embedding for tests: hashed bag of words, L2-normalised."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from lightrag_pg import EmbeddingFunc

DIM = 32
_WORD = re.compile(r"\w+")


def hashed_vectors(texts: list[str], dim: int = DIM) -> np.ndarray:
    """Each word adds 1 to a bucket chosen by its hash; texts sharing words are similar."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            bucket = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little") % dim
            out[i, bucket] += 1.0
        norm = np.linalg.norm(out[i])
        out[i] = out[i] / norm if norm else np.eye(dim, dtype=np.float32)[0]
    return out


def embedding_func(dim: int = DIM) -> EmbeddingFunc:
    """An EmbeddingFunc over :func:`hashed_vectors`."""

    async def embed(texts: list[str]) -> np.ndarray:
        return hashed_vectors(texts, dim)

    return EmbeddingFunc(embedding_dim=dim, func=embed, model_name=f"hashed-bow-{dim}")
