"""Choosing which source chunks of the retrieved entities/relations to read.

Pure versions of upstream ``_find_related_text_unit_from_entities`` /
``_find_related_text_unit_from_relations`` (steps 1-4), ``pick_by_weighted_polling``
and ``pick_by_vector_similarity``. The database layer supplies the ranked
entities/relations and, for the VECTOR method, each candidate chunk's cosine
similarity to the query; it then fetches the chosen chunk ids in order.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal

logger = logging.getLogger(__name__)

PickMethod = Literal["VECTOR", "WEIGHT"]


def chunk_candidates(
    source_ids: Iterable[Sequence[str]],
    *,
    exclude: Collection[str] = (),
    drop_empty: bool = False,
) -> list[list[str]]:
    """Per ranked item, its chunk ids de-duplicated and ordered by popularity.

    ``source_ids`` holds, for each entity or relation in rank order, the ids
    of the chunks it was extracted from. Items without any chunk id are
    skipped. A chunk is kept only under the first item that lists it; ids in
    ``exclude`` are dropped without being counted. Each item's chunks are then
    sorted by how many items list them (most first; ties keep their order).
    Upstream keeps entities whose list became empty (``drop_empty=False``)
    but drops such relations (``drop_empty=True``).
    """
    lists = [[cid for cid in ids if cid and cid.strip()] for ids in source_ids]
    lists = [ids for ids in lists if ids]
    excluded = set(exclude)
    counts: dict[str, int] = {}
    kept: list[list[str]] = []
    for ids in lists:
        own: list[str] = []
        for chunk_id in ids:
            if chunk_id in excluded:
                continue
            counts[chunk_id] = counts.get(chunk_id, 0) + 1
            if counts[chunk_id] == 1:
                own.append(chunk_id)
        kept.append(own)
    if drop_empty:
        kept = [own for own in kept if own]
    return [sorted(own, key=lambda cid: counts[cid], reverse=True) for own in kept]


def pick_by_weighted_polling(
    candidates: Sequence[Sequence[str]],
    max_related_chunks: int,
    min_related_chunks: int = 1,
) -> list[str]:
    """Linear-gradient quota selection (upstream ``pick_by_weighted_polling``).

    Item ``i`` of ``n`` may contribute ``round(max - i/(n-1) * (max - min))``
    chunks. Quota an item cannot use (too few chunks) is handed out again,
    one chunk per pass, to the best-ranked item that still has unused chunks.
    """
    if not candidates:
        return []
    n = len(candidates)
    if n == 1:
        return list(candidates[0][:max_related_chunks])
    expected = [
        round(max_related_chunks - i / (n - 1) * (max_related_chunks - min_related_chunks)) for i in range(n)
    ]
    selected: list[str] = []
    used: list[int] = []
    spare = 0
    for quota, chunks in zip(expected, candidates, strict=True):
        take = min(quota, len(chunks))
        selected.extend(chunks[:take])
        used.append(take)
        spare += max(quota - take, 0)
    for _ in range(spare):
        for i, chunks in enumerate(candidates):
            if used[i] < len(chunks):
                selected.append(chunks[used[i]])
                used[i] += 1
                break
        else:
            break
    return selected


def pick_by_vector_similarity(
    candidates: Sequence[Sequence[str]],
    similarities: Mapping[str, float],
    num_of_chunks: int,
) -> list[str]:
    """The ``num_of_chunks`` candidate chunks most similar to the query.

    ``similarities`` maps chunk id to cosine similarity with the query
    embedding. Candidates without a similarity (no stored vector) are left
    out; ties keep first-appearance order. Returns ``[]`` when nothing can be
    ranked, which makes :func:`select_chunk_ids` fall back to WEIGHT.
    """
    if num_of_chunks <= 0:
        return []
    unique = list(dict.fromkeys(cid for chunks in candidates for cid in chunks))
    ranked = [cid for cid in unique if cid in similarities]
    if len(ranked) < len(unique):
        logger.warning(
            "vector chunk selection: %d of %d candidate chunks have no vector",
            len(unique) - len(ranked),
            len(unique),
        )
    ranked.sort(key=lambda cid: similarities[cid], reverse=True)
    return ranked[:num_of_chunks]


def vector_pick_count(max_related_chunks: int, n_items: int) -> int:
    """Upstream's VECTOR quota: ``int(related_chunk_number * n_items / 2)``."""
    return int(max_related_chunks * n_items / 2)


def select_chunk_ids(
    candidates: Sequence[Sequence[str]],
    *,
    method: PickMethod,
    max_related_chunks: int,
    similarities: Mapping[str, float] | None = None,
) -> tuple[list[str], PickMethod]:
    """Run the configured picking method; returns ``(chunk_ids, method_used)``.

    VECTOR needs ``similarities``; without them, or when it selects nothing,
    WEIGHT is used instead, as upstream falls back. The ids are unique and in
    the order the chunks should be read.
    """
    if not candidates:
        return [], method
    chosen: list[str] = []
    used: PickMethod = method
    if method == "VECTOR" and similarities is not None:
        chosen = pick_by_vector_similarity(
            candidates, similarities, vector_pick_count(max_related_chunks, len(candidates))
        )
    if not chosen:
        used = "WEIGHT"
        chosen = pick_by_weighted_polling(candidates, max_related_chunks, min_related_chunks=1)
    return list(dict.fromkeys(chosen)), used
