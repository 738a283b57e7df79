"""Pure merge rules (upstream LightRAG): how new mentions combine with a stored row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..config import Settings
from ..llm.tokenizer import TokenEncoder, count_tokens
from ..store.rows import EntityRow, RelationRow
from ..types import ExtractedEntity, ExtractedRelation
from .summary import split_description, unique_fragments


def capped_union(old: Sequence[str], new: Sequence[str], cap: int) -> list[str]:
    """Union in first-seen order, keeping the newest ``cap`` items (FIFO)."""
    merged = list(dict.fromkeys([*old, *new]))
    return merged[-cap:]


def merge_keywords(*keyword_strings: str) -> str:
    """Comma-separated keywords, de-duplicated, in first-seen order."""
    parts = [k.strip() for s in keyword_strings for k in s.split(",")]
    return ", ".join(dict.fromkeys(p for p in parts if p))


def merge_entity(
    name: str, stored: EntityRow | None, mentions: Sequence[ExtractedEntity], settings: Settings
) -> tuple[EntityRow, list[str]]:
    """The merged entity (description still to be decided) and its description fragments."""
    types = Counter(m.entity_type for m in mentions)
    if stored is not None and stored.entity_type != "UNKNOWN":
        types[stored.entity_type] += max(1, len(stored.source_ids))
    entity_type = types.most_common(1)[0][0] if types else "UNKNOWN"
    row = EntityRow(
        name=name,
        entity_type=entity_type,
        **_provenance(stored, mentions, settings.max_source_ids_per_entity, settings.max_file_paths),
    )
    return row, _fragments(stored, mentions)


def merge_relation(
    pair: tuple[str, str],
    stored: RelationRow | None,
    mentions: Sequence[ExtractedRelation],
    settings: Settings,
) -> tuple[RelationRow, list[str]]:
    """The merged relation (description still to be decided) and its description fragments."""
    row = RelationRow(
        src=pair[0],
        tgt=pair[1],
        keywords=merge_keywords(stored.keywords if stored else "", *(m.keywords for m in mentions)),
        weight=(stored.weight if stored else 0.0) + sum(m.weight for m in mentions),
        **_provenance(stored, mentions, settings.max_source_ids_per_relation, settings.max_file_paths),
    )
    return row, _fragments(stored, mentions)


def _fragments(
    stored: EntityRow | RelationRow | None, mentions: Sequence[ExtractedEntity | ExtractedRelation]
) -> list[str]:
    """Stored description fragments first, then the new ones (longest first), de-duplicated."""
    return unique_fragments(
        split_description(stored.description) if stored else [],
        sorted((m.description for m in mentions), key=lambda d: (-len(d), d)),
    )


def _provenance(
    stored: EntityRow | RelationRow | None,
    mentions: Sequence[ExtractedEntity | ExtractedRelation],
    max_sources: int,
    max_files: int,
) -> dict[str, Any]:
    """Merged source chunk ids and file paths (capped, newest kept) and the version read."""
    return {
        "source_ids": capped_union(
            stored.source_ids if stored else [], [m.chunk_id for m in mentions], max_sources
        ),
        "file_paths": capped_union(
            stored.file_paths if stored else [], [m.file_path for m in mentions], max_files
        ),
        "version": stored.version if stored else 0,
    }


def entity_vector_text(row: EntityRow) -> str:
    """What is embedded for an entity: name and description."""
    return f"{row.name}\n{row.description}"


def relation_vector_text(row: RelationRow) -> str:
    """What is embedded for a relation: keywords, endpoints and description."""
    return f"{row.keywords}\t{row.src}\n{row.tgt}\n{row.description}"


def count_context_tokens(rows: Iterable[EntityRow | RelationRow], tokenizer: TokenEncoder) -> None:
    """Set each row's ``context_tokens`` from its final description, so retrieval can
    cut to the token budgets in SQL."""
    for row in rows:
        row.context_tokens = count_tokens(tokenizer, row.context_line())
