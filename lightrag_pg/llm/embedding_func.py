"""The embedding function contract and its output validation."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigurationError, EmbeddingError, InvalidInput

EmbeddingResult = np.ndarray | Sequence[Sequence[float]]
RawEmbeddingFunc = Callable[[list[str]], Awaitable[EmbeddingResult] | EmbeddingResult]
Truncate = Callable[[list[str]], list[str]]


@dataclass
class EmbeddingFunc:
    """An embedding callable with its declared dimension.

    ``func`` takes a list of texts and returns (or returns an awaitable of) one
    vector per text, as a NumPy array or nested lists. Calling the
    ``EmbeddingFunc`` checks the result and returns a ``float32`` array of
    shape ``(len(texts), embedding_dim)``; anything else raises
    :class:`~lightrag_pg.errors.EmbeddingError`.

    What the model reads of a text decides whether a stored vector is still
    current: ``truncate``, when given, returns each text cut to what the model
    reads (the local MiniLM keeps 256 word pieces, cut at a word boundary), so
    two texts it maps to the same string get the same vector. Without it the
    indexer cuts at ``max_token_size`` tokens of the workspace tokenizer, or
    not at all when that is ``None``.
    """

    embedding_dim: int
    func: RawEmbeddingFunc
    max_token_size: int | None = None
    model_name: str = "custom"
    truncate: Truncate | None = None

    def __post_init__(self) -> None:
        if isinstance(self.embedding_dim, bool) or not isinstance(self.embedding_dim, int):
            raise ConfigurationError(f"embedding_dim must be a positive integer, got {self.embedding_dim!r}")
        if self.embedding_dim <= 0:
            raise ConfigurationError(f"embedding_dim must be a positive integer, got {self.embedding_dim!r}")
        if not callable(self.func):
            raise ConfigurationError("func must be callable")
        if self.truncate is not None and not callable(self.truncate):
            raise ConfigurationError("truncate must be callable or None")

    async def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` and return a validated ``(n, embedding_dim)`` float32 array."""
        batch = _check_texts(texts)
        if not batch:
            return np.zeros((0, self.embedding_dim), dtype=np.float32)
        result: Any = self.func(batch)
        if inspect.isawaitable(result):
            result = await result
        return validate_embeddings(result, len(batch), self.embedding_dim, self.model_name)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise InvalidInput("embedding input must be a list of strings, not a single string")
    batch = list(texts)
    for i, text in enumerate(batch):
        if not isinstance(text, str):
            raise InvalidInput(f"embedding input #{i} is {type(text).__name__}, expected str")
    return batch


def validate_embeddings(result: Any, count: int, dim: int, name: str = "custom") -> np.ndarray:
    """Convert ``result`` to a ``(count, dim)`` float32 array or raise EmbeddingError."""
    who = f"embedding function {name!r}"
    if result is None:
        raise EmbeddingError(f"{who} returned None for {count} texts")
    try:
        array = np.asarray(result, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(
            f"{who} returned {type(result).__name__}, which is not a 2-D array of numbers: {exc}"
        ) from exc
    if array.ndim != 2:
        raise EmbeddingError(
            f"{who} returned a {array.ndim}-D array of shape {array.shape}; expected shape ({count}, {dim})"
        )
    if array.shape[0] != count:
        raise EmbeddingError(f"{who} returned {array.shape[0]} vectors for {count} texts")
    if array.shape[1] != dim:
        raise EmbeddingError(f"{who} returned {array.shape[1]}-dimensional vectors, expected {dim}")
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        bad = [int(i) for i in np.flatnonzero(~finite)[:5]]
        raise EmbeddingError(f"{who} returned NaN or infinite values (vectors {bad})")
    zero = ~array.any(axis=1)
    if zero.any():
        bad = [int(i) for i in np.flatnonzero(zero)[:5]]
        raise EmbeddingError(
            f"{who} returned all-zero vectors (vectors {bad}), whose cosine similarity is undefined: "
            "they would never be found"
        )
    return np.ascontiguousarray(array)
