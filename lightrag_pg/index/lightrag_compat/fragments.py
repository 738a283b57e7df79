"""What each imported chunk said: fragments read back from upstream's cached extractions.

Upstream keeps, per entity and relation, one merged description (its chunks'
descriptions joined with ``<SEP>``, or an LLM summary of them) and the list of
chunks it came from; which piece came from which chunk is not recorded. Its LLM
cache, however, holds every chunk's extraction answer (and gleaning answers).
Parsed by lightrag_pg's own extraction parser and merged the way the pipeline
merges them (:func:`~..merge.document_fragments`), they give exactly the
fragments indexing that chunk here would have recorded, at no LLM cost.

The same answers are also filed under the keys lightrag_pg's extractor asks
with (:func:`translated_answers`), so indexing an imported document again here
finds them and calls no model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...config import Settings
from ...llm.cached import CachedLLM
from ...store.rows import EntityFragmentRow, RelationFragmentRow
from ...store.transfer import CacheImport
from ...types import Extraction
from ..extract import entity_keys, relation_keys
from ..extraction_prompts import extraction_messages, gleaning_messages
from ..merge import document_fragments
from ..parse import merge_gleaning, parse_extraction


@dataclass(frozen=True, slots=True)
class ImportedChunk:
    """An imported chunk with upstream's cached extraction answers for it, oldest first."""

    id: str
    doc_id: str
    content: str
    file_path: str
    answers: Sequence[Mapping[str, Any]]
    """``{"id", "response", "initial", "at"}``: ``initial`` for an answer to the first
    extraction, ``at`` when it was cached."""


@dataclass
class ChunkFragments:
    """The fragments and translated cache entries of a batch of chunks."""

    entities: list[EntityFragmentRow] = field(default_factory=list)
    relations: list[RelationFragmentRow] = field(default_factory=list)
    cache: list[CacheImport] = field(default_factory=list)
    chunks_with_answers: int = 0
    chunks_without_answers: int = 0


def answers_of(chunk: ImportedChunk) -> tuple[str, list[str]] | None:
    """The first extraction's answer (the newest one holding the chunk's text) and the
    gleaning answers cached with or after it (upstream's times may be whole seconds), in
    order; None when the cache holds no extraction of the chunk."""
    answers = list(chunk.answers)
    initial = [a for a in answers if a.get("initial")]
    if not initial:
        return None
    first = initial[-1]
    since = float(first.get("at") or 0)
    gleanings = [
        str(a.get("response", ""))
        for a in answers
        if not a.get("initial") and float(a.get("at") or 0) >= since
    ]
    return str(first.get("response", "")), gleanings


def parse_answers(
    chunk: ImportedChunk, first: str, gleanings: Sequence[str], settings: Settings
) -> Extraction:
    """The chunk's extraction as the pipeline would have merged it from these answers."""

    def parse(answer: str) -> Extraction:
        return parse_extraction(
            answer,
            chunk_id=chunk.id,
            file_path=chunk.file_path,
            max_name_length=settings.max_entity_name_length,
            max_description_length=settings.max_description_length,
            entity_types=settings.entity_types,
        )

    result = parse(first)
    for answer in gleanings:
        result = merge_gleaning(result, parse(answer))
    return result


def translated_answers(
    chunk: ImportedChunk, first: str, gleanings: Sequence[str], settings: Settings
) -> list[CacheImport]:
    """Upstream's answers under the keys lightrag_pg's extractor computes for this chunk with
    ``settings`` (entity types, language, gleaning passes): the first extraction, then each
    gleaning pass, whose prompt names the records found so far."""
    system, user = extraction_messages(
        chunk.content, entity_types=settings.entity_types, language=settings.summary_language
    )
    key = CachedLLM.key(user, system, [], "extract", "default")
    out = [CacheImport(key, "extract", "default", chunk.id, user, first)]
    result = parse_answers(chunk, first, (), settings)
    for answer in list(gleanings)[: settings.entity_extract_max_gleaning]:
        _, glean = gleaning_messages(
            chunk.content,
            entity_keys(result),
            relation_keys(result),
            result.malformed,
            entity_types=settings.entity_types,
            language=settings.summary_language,
        )
        key = CachedLLM.key(glean, system, [], "extract", "default")
        out.append(CacheImport(key, "extract", "default", chunk.id, glean, answer))
        result = parse_answers(chunk, first, [c.response for c in out[1:]], settings)
    return out


def fragments_of(chunks: Sequence[ImportedChunk], settings: Settings) -> ChunkFragments:
    """The fragments every chunk's cached answers give, and those answers under our keys."""
    out = ChunkFragments()
    for chunk in chunks:
        found = answers_of(chunk)
        if found is None:
            out.chunks_without_answers += 1
            continue
        out.chunks_with_answers += 1
        first, gleanings = found
        extraction = parse_answers(chunk, first, gleanings, settings)
        entities, relations = document_fragments(chunk.doc_id, extraction.entities, extraction.relations)
        out.entities += entities
        out.relations += relations
        out.cache += translated_answers(chunk, first, gleanings, settings)
    return out
