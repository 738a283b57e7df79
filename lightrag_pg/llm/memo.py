"""What a repeated question can reuse: the vectors of its texts and the token counts of its context.

Both are deterministic functions of a text: the embedding of a text under one
model, the token count of a text under one encoding. A process that answers one
question and exits (the command line) would otherwise load the embedding model
and build the tokenizer for every question. The memo of a question is one
entry of the answer cache (``llm_cache``), keyed by the query mode, the model,
its dimension, the encoding and the question. Inside it, vectors and
counts are keyed by a digest of their text, so a text that changed (a chunk
edited since) is simply not found: it is embedded or counted again, never
answered from another text's entry.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .cached import AnswerCache, cache_key
from .tokenizer import TokenEncoder, count_tokens


def text_digest(text: str) -> str:
    """The key of a text inside a memo."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class QueryMemo:
    """Opens the memo of one question (:meth:`open`), in the cache ``cache``."""

    cache: AnswerCache
    model_name: str
    embedding_dim: int
    encoding: str

    async def open(self, mode: str, question: str) -> OpenMemo:
        """The memo of ``question`` (the text searched for chunks) in ``mode`` (empty if never stored)."""
        key = cache_key("query_memo", mode, self.model_name, str(self.embedding_dim), self.encoding, question)
        stored = await self.cache.get(key)
        vectors, counts = _parse(stored, self.embedding_dim) if stored is not None else ({}, {})
        return OpenMemo(self.cache, key, mode, vectors, counts)


@dataclass(slots=True)
class OpenMemo:
    """One question's memo: read while the question is answered, written back by :meth:`save`
    when anything in it was computed this time. What the answer did not use is dropped."""

    cache: AnswerCache
    key: str
    mode: str
    stored_vectors: dict[str, bytes]
    stored_counts: dict[str, int]
    used_vectors: dict[str, bytes] = field(default_factory=dict)
    used_counts: dict[str, int] = field(default_factory=dict)
    computed: bool = False

    def vector(self, text: str) -> np.ndarray | None:
        """The stored float32 vector of ``text``, or None (the text is new: a question never
        asked, or keywords that changed since, a keyword answer cleared and asked again)."""
        raw = self.stored_vectors.get(text_digest(text))
        if raw is None:
            return None
        self.used_vectors[text_digest(text)] = raw
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)

    def keep_vectors(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Remember the vectors just computed for ``texts`` (one row each)."""
        rows = np.asarray(vectors, dtype="<f4")
        for text, row in zip(texts, rows, strict=True):
            self.used_vectors[text_digest(text)] = row.tobytes()
            self.computed = True

    def counter(self, tokenizer: TokenEncoder) -> MemoCounter:
        """A token counter that answers from this memo and asks ``tokenizer`` for the rest."""
        return MemoCounter(self, tokenizer)

    async def save(self) -> None:
        """Write the memo back if anything was computed for it this time."""
        if not self.computed:
            return
        payload = {
            "vectors": {k: base64.b64encode(v).decode("ascii") for k, v in self.used_vectors.items()},
            "counts": self.used_counts,
        }
        await self.cache.put(
            self.key,
            json.dumps(payload, separators=(",", ":")),
            cache_type="query_memo",
            mode=self.mode,
            prompt="",
            chunk_id=None,
        )


class MemoCounter:
    """A :class:`~lightrag_pg.llm.tokenizer.TokenEncoder` whose counts come from a memo when
    it holds them; the tokenizer is asked (and, if lazy, built) only for the others."""

    def __init__(self, memo: OpenMemo, tokenizer: TokenEncoder) -> None:
        self._memo = memo
        self._tokenizer = tokenizer

    def count(self, text: str) -> int:
        """The tokens of ``text``."""
        digest = text_digest(text)
        known = self._memo.stored_counts.get(digest)
        if known is None:
            known = count_tokens(self._tokenizer, text)
            self._memo.computed = True
        self._memo.used_counts[digest] = known
        return known

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (always from the tokenizer)."""
        return self._tokenizer.encode(text)


def _parse(stored: str, dim: int) -> tuple[dict[str, bytes], dict[str, int]]:
    """The vectors and counts of a stored memo; what does not have the expected shape is left out."""
    try:
        data = json.loads(stored)
        raw_vectors, raw_counts = data["vectors"], data["counts"]
    except (ValueError, TypeError, KeyError):
        return {}, {}
    if not (isinstance(raw_vectors, dict) and isinstance(raw_counts, dict)):
        return {}, {}
    vectors: dict[str, bytes] = {}
    for key, value in raw_vectors.items():
        try:
            raw = base64.b64decode(value, validate=True)
        except (ValueError, TypeError):
            continue
        if len(raw) == 4 * dim:
            vectors[key] = raw
    counts = {k: v for k, v in raw_counts.items() if type(v) is int and v >= 0}
    return vectors, counts
