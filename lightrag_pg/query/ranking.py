"""Merging, truncating and numbering retrieval results (upstream stages 1-3)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from ..llm.tokenizer import TokenEncoder, count_tokens
from ..store.rows import ChunkRow, EntityRow, RelationRow
from ..types import UNKNOWN_SOURCE
from .param import QueryParam

T = TypeVar("T")


def round_robin(*lists: Sequence[T], key: Callable[[T], Hashable]) -> list[T]:
    """Interleave ``lists`` (first items of each, then second items, ...).

    An item whose ``key`` was already taken is skipped, so the first
    occurrence wins. Items whose key is ``None`` or empty are dropped, as
    upstream drops entities without a name and chunks without an id.
    """
    merged: list[T] = []
    seen: set[Hashable] = set()
    longest = max((len(items) for items in lists), default=0)
    for index in range(longest):
        for items in lists:
            if index >= len(items):
                continue
            item = items[index]
            item_key = key(item)
            if item_key is None or item_key == "" or item_key in seen:
                continue
            seen.add(item_key)
            merged.append(item)
    return merged


def interleave_entities(local: Sequence[EntityRow], global_: Sequence[EntityRow]) -> list[EntityRow]:
    """Round-robin local (entity-search) and global (via relations) entities by name."""
    return round_robin(local, global_, key=lambda e: e.name)


def interleave_relations(local: Sequence[RelationRow], global_: Sequence[RelationRow]) -> list[RelationRow]:
    """Round-robin local and global relations, identified by their sorted endpoints."""
    return round_robin(local, global_, key=lambda r: r.pair)


def merge_chunks(
    vector: Sequence[ChunkRow],
    from_entities: Sequence[ChunkRow],
    from_relations: Sequence[ChunkRow],
) -> list[ChunkRow]:
    """Round-robin chunks: vector search first, then entity, then relation chunks."""
    return round_robin(vector, from_entities, from_relations, key=lambda c: c.id)


def endpoint_names(relations: Iterable[RelationRow]) -> list[str]:
    """Entity names of the global search: endpoints in order of first appearance."""
    names: list[str] = []
    seen: set[str] = set()
    for relation in relations:
        for name in (relation.src, relation.tgt):
            if name not in seen:
                seen.add(name)
                names.append(name)
    return names


def truncate_by_tokens(
    items: Sequence[T],
    tokenizer: TokenEncoder,
    max_tokens: int,
    render: Callable[[T], str],
) -> list[T]:
    """Keep the longest prefix of ``items`` whose rendered lines, joined by newlines, fit ``max_tokens``.

    Upstream 1.5.7's ``truncate_list_by_token_size``: the text counted is the
    lines as they will be sent, separators included; a budget of zero or less
    keeps nothing.
    """
    if max_tokens <= 0:
        return []
    lines = [render(item) for item in items]
    fits, tries = 0, len(lines)
    while fits < tries:
        k = (fits + tries + 1) // 2
        if count_tokens(tokenizer, "\n".join(lines[:k])) <= max_tokens:
            fits = k
        else:
            tries = k - 1
    return list(items[:fits])


def chunk_data_row(chunk: ChunkRow) -> dict[str, str]:
    """A merged chunk as ``aquery_data`` returns it (the caller adds its reference id)."""
    return {
        "content": chunk.content,
        "file_path": chunk.file_path or UNKNOWN_SOURCE,
        "chunk_id": chunk.id,
    }


def truncate_kg(
    entities: Sequence[EntityRow],
    relations: Sequence[RelationRow],
    *,
    tokenizer: TokenEncoder,
    param: QueryParam,
) -> tuple[list[EntityRow], list[RelationRow]]:
    """Keep the entity/relation prefixes fitting max_entity/relation_tokens."""
    kept_entities = truncate_by_tokens(entities, tokenizer, param.max_entity_tokens, EntityRow.context_line)
    kept_relations = truncate_by_tokens(
        relations, tokenizer, param.max_relation_tokens, RelationRow.context_line
    )
    return kept_entities, kept_relations


def generate_references(chunks: Sequence[ChunkRow]) -> tuple[list[dict[str, str]], list[str]]:
    """Number the source files of ``chunks`` like upstream.

    Files are ranked by how many chunks cite them (most first), ties by first
    appearance, and numbered from "1". Returns the reference list and each
    chunk's reference id ("" for chunks without a known file path).
    """
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for index, chunk in enumerate(chunks):
        path = chunk.file_path
        if path and path != UNKNOWN_SOURCE:
            counts[path] = counts.get(path, 0) + 1
            first.setdefault(path, index)
    ordered = sorted(counts, key=lambda p: (-counts[p], first[p]))
    ref_ids = {path: str(i + 1) for i, path in enumerate(ordered)}
    references = [{"reference_id": ref_ids[p], "file_path": p} for p in ordered]
    return references, [ref_ids.get(chunk.file_path, "") for chunk in chunks]
