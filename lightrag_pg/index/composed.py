"""Vectors of graph rows, composed from short parts where the text allows it.

A relation whose vector text is short (its keywords, a tab, its source, a newline,
its target, then its source chunk ids: the offline extractor's rows,
:data:`~.merge.VectorTexts`, :func:`short_relation_text`) gets no model call of its
own: its vector is composed from vectors of parts that repeat and of its chunks,

    normalize(v(src) + v(tgt) + normalize(v(keyword_1) + ... + v(keyword_k))
              + CONTEXT_WEIGHT * normalize(c(chunk_1) + ... + c(chunk_n)))

where ``v`` is the embedding model's unit vector of a string and ``c`` the stored
vector of a source chunk (the chunks the relation's fragments came from; ids without
a stored vector, such as manual edits', are left out). The endpoints' vectors are
their entities' (an offline entity is embedded by its name) and keywords are lemmas
from a small vocabulary, so almost every part is at hand already: a process keeps the
vectors of the short strings it embedded (:class:`PartVectors`, bounded) and embeds
only the parts it has not seen, all in one call; the chunk vectors of all the rows
of a call are read in one statement. A composed vector is a function of the text
alone, source set included (the ids are sorted and summed in that order, so the
order the sources came in does not matter), like a model's, so the writer, graph
edits, deletes and a re-embed (:mod:`.reembed`, which stages the chunks before the
relations) all compute the same vector for the same stored text, and a relation whose
text is unchanged keeps its vector. The offline pipeline stores a document's chunks before it
merges the document, so the chunks of every source a merge sees are stored. Any
other text (an entity's name and description, a relation's with its description) is
embedded by the model.

Why composed: an offline passage brought a new relation for about every new entity
(a sentence of k entities gives k - 1), so embedding relations, even by their short
texts, cost about as many model calls as the entities did. Extracting fewer entities
(no lower-case terms, say) would cut both, but those entities are what local and
hybrid retrieval find passages by; composing keeps every row and its meaning, and its
parts repeat (a HotpotQA passage has ~15 relations but brings ~2 keywords not seen
before). Why the chunks: the relation's description, the sentence linking the pair,
is no part of its short text, and without it the Debian FAQ's mix and hybrid recall
fell by about 3 points (``bench/quality.py``); the sentence's chunk is embedded
already, so its vector brings the sentence's meaning back at no model call (R@5 as
written | reworded: mix 85 | 88 without, 88 | 89 with; hybrid 82 | 85, 84 | 86). A
weight of 1 did as well on the FAQ but cost HotpotQA's hybrid R@2 (``bench/multihop.py``).
``bench/ingest.py --corpus hotpotqa`` prints what it costs.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..llm.embedding_func import EmbeddingFunc
from ..types import NO_KEYWORDS

PART_FLOATS = 8_000_000
"""Numbers a :class:`PartVectors` keeps at most (32 MB: 20,833 vectors of 384 dimensions)."""

CONTEXT_WEIGHT = 0.5
"""Weight of the source chunks' mean vector in a composed relation vector."""

SOURCES = "\x1e"
"""Separates a short relation text from the ids of its source chunks."""

Key = str | tuple[str, str]
"""A row's key: an entity's name or a relation's (source, target) pair."""

ChunkVectors = Callable[[Sequence[str]], Awaitable[Mapping[str, np.ndarray]]]
"""Looks up the stored vectors of chunk ids (unknown ids are left out)."""


def short_relation_text(keywords: str, src: str, tgt: str, source_ids: Iterable[str]) -> str:
    """A relation's short vector text: keywords, a tab, source, a newline, target, then
    :data:`SOURCES` and its distinct source chunk ids, sorted, one space apart."""
    return f"{keywords}\t{src}\n{tgt}{SOURCES}{' '.join(sorted(set(source_ids)))}"


def composed_parts(text: str, src: str, tgt: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The parts (source, target, then the distinct keywords, sorted, but
    :data:`~lightrag_pg.types.NO_KEYWORDS`, a placeholder that would pull a third of
    the relations towards one word) of relation ``src``-``tgt``'s vector and its source
    chunk ids when ``text`` is its short vector text; else ``None``."""
    text, mark, sources = text.partition(SOURCES)
    suffix = f"\t{src}\n{tgt}"
    if not mark or not text.endswith(suffix):
        return None
    keywords = text[: -len(suffix)]
    if "\n" in keywords or "\t" in keywords:
        return None
    words = sorted({k.strip() for k in keywords.split(",")} - {"", NO_KEYWORDS})
    return (src, tgt, *words), tuple(sources.split())


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def compose(parts: np.ndarray, context: np.ndarray | None = None) -> np.ndarray:
    """A relation's vector from its parts' vectors (source, target, then keywords) and
    its source chunks' vectors ``context`` (in chunk id order; none: left out)."""
    total = _unit(parts[0]) + _unit(parts[1])
    if len(parts) > 2:
        total = total + _unit(np.sum([_unit(p) for p in parts[2:]], axis=0))
    if context is not None and len(context):
        total = total + CONTEXT_WEIGHT * _unit(np.sum([_unit(c) for c in context], axis=0))
    return _unit(total).astype(np.float32)


async def no_chunks(ids: Sequence[str]) -> Mapping[str, np.ndarray]:
    """A :data:`ChunkVectors` that knows no chunk."""
    return {}


class PartVectors:
    """The model's vectors of short strings (entity names, relation endpoints and
    keywords) this process embedded, most recently used kept, computed once each."""

    def __init__(self, embed: EmbeddingFunc, floats: int = PART_FLOATS) -> None:
        self.embed = embed
        self.floats = floats
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    async def vectors(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], int]:
        """The vectors of ``texts`` by text, and how many texts the model was sent."""
        missing = sorted(set(texts) - self._vectors.keys())
        found = {t: self._vectors[t] for t in texts if t in self._vectors}
        if missing:
            for t, v in zip(missing, await self.embed(missing), strict=True):
                found[t] = v
                self._vectors[t] = v
        for t in found:
            self._vectors.move_to_end(t)
        while len(self._vectors) > max(1, self.floats // self.embed.embedding_dim):
            self._vectors.popitem(last=False)
        return found, len(missing)

    async def embed_rows(
        self, keys: Sequence[Key], texts: Sequence[str], chunks: ChunkVectors = no_chunks
    ) -> tuple[np.ndarray, int]:
        """The vector of each row's text (``keys[i]`` is the row of ``texts[i]``) and the
        count of texts sent to the model: a relation's short text composed (its source
        chunks' vectors looked up by ``chunks``, once for all rows), an entity embedded
        by its name alone from the kept vectors, any other text by the model."""
        parts: list[tuple[str, ...] | None] = []
        sources: dict[int, tuple[str, ...]] = {}
        for i, (key, text) in enumerate(zip(keys, texts, strict=True)):
            if isinstance(key, tuple):
                found_parts = composed_parts(text, *key)
                parts.append(found_parts[0] if found_parts else None)
                if found_parts:
                    sources[i] = found_parts[1]
            else:
                parts.append((text,) if text == key else None)
        plain = [i for i, p in enumerate(parts) if p is None]
        found, sent = await self.vectors([s for p in parts if p is not None for s in p])
        needed = sorted({c for ids in sources.values() for c in ids})
        context = await chunks(needed) if needed else {}
        out = np.zeros((len(texts), self.embed.embedding_dim), dtype=np.float32)
        if plain:
            out[plain] = await self.embed([texts[i] for i in plain])
        for i, p in enumerate(parts):
            if p is None:
                continue
            if i not in sources:
                out[i] = found[p[0]]
                continue
            seen = [context[c] for c in sources[i] if c in context]
            out[i] = compose(np.stack([found[s] for s in p]), np.stack(seen) if seen else None)
        return out, sent + len(plain)
