"""Pure merge rules: an entity or relation as a function of its fragments.

A merged row depends on the *set* of fragments (what each chunk said) and
nothing else: not on the order documents arrived in, nor on how many merges
built it. Insert, delete and update all go through :func:`build_entity` and
:func:`build_relation`, so deleting documents leaves exactly what indexing
the remaining documents alone would have built.

The rules (upstream LightRAG's, made order-free):

* type: the most frequent non-``UNKNOWN`` type among the fragments (ties go
  to the smallest name); ``UNKNOWN`` when there is none;
* description fragments: the distinct descriptions, sorted; joined or
  summarised by :class:`~lightrag_pg.index.summary.Summarizer`;
* keywords: distinct, in the order of the fragments sorted by their keyword text;
* weight: the exact (``math.fsum``) sum of the fragments' weights;
* source ids and file paths: distinct and sorted, capped at the settings' limits.

Manual contributions (:data:`MANUAL_CHUNK_ID`): an edit made through the
graph-editing calls is a fragment of its own, stored under the chunk id
``manual_creation`` and the reserved document :data:`MANUAL_DOC_ID` (a
``full_docs`` row without a status, so it is never listed, processed or
deleted as a document). When an entity has manual fragments with a
description, its type and description come from those alone (an edit pins
them, whatever documents say before or after it); a relation's keywords,
description and weight likewise. A manual fragment with an empty
description is an *anchor*: it keeps the row alive when every document
contribution is deleted, and adds nothing else. Source ids and file paths
always take every fragment.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal, TypeVar

from ..config import Settings
from ..llm.tokenizer import TokenEncoder, count_tokens
from ..store.rows import (
    EntityFragmentRow,
    EntityRow,
    RelationFragmentRow,
    RelationRow,
    canonical_pair,
)
from ..types import ExtractedEntity, ExtractedRelation
from .composed import short_relation_text
from .summary import split_description, unique_fragments

F = TypeVar("F", EntityFragmentRow, RelationFragmentRow)
R = TypeVar("R", EntityRow, RelationRow)

UNKNOWN_TYPE = "UNKNOWN"
MANUAL_CHUNK_ID = "manual_creation"
"""Chunk id (and file path) of the fragments manual edits record."""
MANUAL_DOC_ID = "manual-edits"
"""The reserved document holding manual fragments (created on first use, never listed)."""


def is_manual_override(fragment: EntityFragmentRow | RelationFragmentRow) -> bool:
    """Whether the fragment is a manual edit that pins the row's fields (not an anchor)."""
    return fragment.chunk_id == MANUAL_CHUNK_ID and bool(fragment.description.strip())


def _ruling(fragments: Sequence[F]) -> Sequence[F]:
    """The fragments that decide the edited fields: the manual overrides if any, else all."""
    manual = [f for f in fragments if is_manual_override(f)]
    return manual or fragments


def merge_keywords(*keyword_strings: str) -> str:
    """Comma-separated keywords, de-duplicated, in first-seen order."""
    parts = [k.strip() for s in keyword_strings for k in s.split(",")]
    return ", ".join(dict.fromkeys(p for p in parts if p))


def document_fragments(
    doc_id: str, entities: Sequence[ExtractedEntity], relations: Sequence[ExtractedRelation]
) -> tuple[list[EntityFragmentRow], list[RelationFragmentRow]]:
    """A document's mentions as fragments, numbered per (name or pair, chunk).

    A relation endpoint its chunk does not describe gets one ``UNKNOWN``
    fragment carrying the first such relation's description, so every
    relation fragment has an entity fragment for each endpoint in its chunk.
    """
    seq: Counter[tuple[object, str]] = Counter()
    ents: list[EntityFragmentRow] = []
    described: set[tuple[str, str]] = set()
    for e in entities:
        key = (e.name, e.chunk_id)
        described.add(key)
        ents.append(
            EntityFragmentRow(e.name, e.chunk_id, seq[key], doc_id, e.entity_type, e.description, e.file_path)
        )
        seq[key] += 1
    rels: list[RelationFragmentRow] = []
    for r in relations:
        src, tgt = canonical_pair(r.src, r.tgt)
        pair_key = ((src, tgt), r.chunk_id)
        rels.append(
            RelationFragmentRow(
                src, tgt, r.chunk_id, seq[pair_key], doc_id, r.keywords, r.description, r.weight, r.file_path
            )
        )
        seq[pair_key] += 1
        for name in (src, tgt):
            if (name, r.chunk_id) not in described:
                described.add((name, r.chunk_id))
                ents.append(
                    EntityFragmentRow(name, r.chunk_id, 0, doc_id, UNKNOWN_TYPE, r.description, r.file_path)
                )
    return ents, rels


def group_by_name(fragments: Iterable[EntityFragmentRow]) -> dict[str, list[EntityFragmentRow]]:
    """Entity fragments by entity name."""
    out: dict[str, list[EntityFragmentRow]] = defaultdict(list)
    for f in fragments:
        out[f.entity_name].append(f)
    return out


def group_by_pair(
    fragments: Iterable[RelationFragmentRow],
) -> dict[tuple[str, str], list[RelationFragmentRow]]:
    """Relation fragments by canonical pair."""
    out: dict[tuple[str, str], list[RelationFragmentRow]] = defaultdict(list)
    for f in fragments:
        out[f.pair].append(f)
    return out


def majority_type(types: Iterable[str]) -> str:
    """The most frequent known type (ties: the smallest name), else ``UNKNOWN``."""
    counts = Counter(t for t in types if t and t != UNKNOWN_TYPE)
    if not counts:
        return UNKNOWN_TYPE
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def description_fragments(descriptions: Iterable[str]) -> list[str]:
    """The distinct non-empty descriptions, sorted: the input of a summary or join."""
    return sorted(unique_fragments(list(descriptions)))


def _capped(values: Iterable[str], cap: int) -> list[str]:
    return sorted(set(values))[:cap]


def build_entity(
    name: str,
    fragments: Sequence[EntityFragmentRow],
    settings: Settings,
    version: int = 0,
    legacy: EntityRow | None = None,
) -> tuple[EntityRow, list[str]]:
    """The entity its fragments make (description still to be decided) and its
    description fragments; ``version`` is the stored version it replaces (0: none).

    ``legacy`` is a stored row holding contributions merged before fragments
    were recorded: it then counts as one more contribution (its type weighted
    by its number of source chunks), and ``fragments`` must be only the new ones.
    """
    ruling = _ruling(fragments)
    types = [f.entity_type for f in ruling]
    descriptions = [f.description for f in ruling]
    sources = [f.chunk_id for f in fragments]
    files = [f.file_path for f in fragments]
    if legacy is not None:
        types += [legacy.entity_type] * max(1, len(legacy.source_ids))
        descriptions += split_description(legacy.description)
        sources += legacy.source_ids
        files += legacy.file_paths
    row = EntityRow(
        name=name,
        entity_type=majority_type(types),
        source_ids=_capped(sources, settings.max_source_ids_per_entity),
        file_paths=_capped(files, settings.max_file_paths),
        version=version,
    )
    return row, description_fragments(descriptions)


def build_relation(
    pair: tuple[str, str],
    fragments: Sequence[RelationFragmentRow],
    settings: Settings,
    version: int = 0,
    legacy: RelationRow | None = None,
) -> tuple[RelationRow, list[str]]:
    """The relation its fragments make (description still to be decided) and its
    description fragments; ``version`` and ``legacy`` as for :func:`build_entity`."""
    ruling = _ruling(fragments)
    keywords = sorted(f.keywords for f in ruling)
    weights = [f.weight for f in ruling]
    descriptions = [f.description for f in ruling]
    sources = [f.chunk_id for f in fragments]
    files = [f.file_path for f in fragments]
    if legacy is not None:
        keywords.insert(0, legacy.keywords)
        weights.append(legacy.weight)
        descriptions += split_description(legacy.description)
        sources += legacy.source_ids
        files += legacy.file_paths
    row = RelationRow(
        src=pair[0],
        tgt=pair[1],
        keywords=merge_keywords(*keywords),
        weight=math.fsum(weights),
        source_ids=_capped(sources, settings.max_source_ids_per_relation),
        file_paths=_capped(files, settings.max_file_paths),
        version=version,
    )
    return row, description_fragments(descriptions)


VectorTexts = Literal["full", "short"]
"""What an entity's or relation's vector is computed from. ``full``: the name (a
relation: its keywords and endpoints) with the description, the LLM extractor's
rows. ``short``: without the description, the offline extractor's rows, whose
descriptions are sentences of the chunks (embedded with them already, and often shared
by every name and pair of a sentence)."""


def entity_vector_text(row: EntityRow, rule: VectorTexts = "full") -> str:
    """What is embedded for an entity under ``rule``: its name, and its description when ``full``."""
    return row.name if rule == "short" else f"{row.name}\n{row.description}"


def relation_vector_text(row: RelationRow, rule: VectorTexts = "full") -> str:
    """What is embedded for a relation under ``rule``: keywords and endpoints, and its
    description when ``full``; when ``short``, the ids of its source chunks, whose
    vectors its composed vector takes in (:func:`~.composed.short_relation_text`)."""
    if rule == "short":
        return short_relation_text(row.keywords, row.src, row.tgt, row.source_ids)
    return f"{row.keywords}\t{row.src}\n{row.tgt}\n{row.description}"


def with_context_tokens(rows: Iterable[R], tokenizer: TokenEncoder) -> list[R]:
    """``rows`` with their ``context_tokens`` counted from their final description, so
    retrieval can cut to the token budgets in SQL: the tokens of its context line with the
    newline that joins it to the next. A line ends with ``}`` and the next starts with ``{``,
    so the pre-tokenizer never merges across that newline, and a running sum of these counts
    is the count of the lines joined, upstream 1.5.7's measure, plus the last line's newline.
    That newline usually merges into the closing token for free, but not always
    (``... :)"}`` then a newline is one token more than without it)."""
    return [replace(row, context_tokens=count_tokens(tokenizer, row.context_line() + "\n")) for row in rows]
