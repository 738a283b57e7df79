"""Extractors: turn one chunk into entity and relation mentions."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Protocol

from ..config import Settings
from ..errors import ExtractionError
from ..llm.cached import CachedLLM
from ..observe.tracing import current_span
from ..types import Extraction
from .extraction_prompts import COMPLETION_DELIMITER, extraction_messages, gleaning_messages
from .parse import is_complete, merge_gleaning, parse_extraction

log = logging.getLogger(__name__)


class Extractor(Protocol):
    """Anything that extracts entities and relations from a chunk."""

    name: str

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction: ...

    def batched(self) -> AbstractAsyncContextManager[None]:
        """A block whose cache traffic (the extractions of one document and the
        summaries of its merge) is batched: see :meth:`CachedLLM.batched`."""
        ...


class LLMExtractor:
    """LightRAG's extraction: one LLM call per chunk plus gleaning passes, cached.

    A gleaning pass repeats the extraction prompt up to the end of the chunk (so a
    provider's prefix cache serves that part) and lists the records found so far by
    name, and the malformed ones, instead of resending the first answer whole
    (:func:`~.extraction_prompts.gleaning_messages`). With ``gleaning_rule``
    ``"incomplete"`` a chunk is gleaned only while its last answer was cut off or
    held malformed records.
    """

    name = "llm"

    def __init__(self, llm: CachedLLM, settings: Settings) -> None:
        self.llm = llm
        self.settings = settings

    def batched(self) -> AbstractAsyncContextManager[None]:
        """Batch the cache look-ups and writes of the block (one document)."""
        return self.llm.batched()

    def _parse(self, output: str, chunk_id: str, file_path: str) -> Extraction:
        result = parse_extraction(
            output,
            chunk_id=chunk_id,
            file_path=file_path,
            max_name_length=self.settings.max_entity_name_length,
            max_description_length=self.settings.max_description_length,
            entity_types=self.settings.entity_types,
        )
        if result.dropped_lines:
            log.warning("chunk %s: dropped %d malformed extraction lines", chunk_id, result.dropped_lines)
        return result

    async def _ask(
        self, prompt: str, chunk_id: str, file_path: str, **kwargs: Any
    ) -> tuple[str, Extraction | None]:
        """The answer and its records; ``None`` for garbage (text without any record), not cached."""
        parsed: list[Extraction] = []

        def usable(answer: str) -> bool:
            parsed.append(self._parse(answer, chunk_id, file_path))
            return not _is_garbage(answer, parsed[-1])

        answer = await self.llm(prompt, cache_type="extract", chunk_id=chunk_id, accept=usable, **kwargs)
        return answer, None if _is_garbage(answer, parsed[-1]) else parsed[-1]

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction:
        s = self.settings
        system, user = extraction_messages(text, entity_types=s.entity_types, language=s.summary_language)
        extract_span = current_span()  # the pipeline's span of this chunk
        answer, result = await self._ask(user, chunk_id, file_path, system_prompt=system, kind="extract")
        if result is None:
            raise ExtractionError(
                f"chunk {chunk_id}: the LLM's extraction answer holds no entity or relation "
                f"record: {answer[:200]!r}"
            )
        complete = is_complete(answer) and not result.malformed
        passes = 0
        for _ in range(s.entity_extract_max_gleaning):
            if s.gleaning_rule == "incomplete" and complete:
                break
            system, glean = gleaning_messages(
                text,
                entity_keys(result),
                relation_keys(result),
                result.malformed,
                entity_types=s.entity_types,
                language=s.summary_language,
            )
            more, extra = await self._ask(glean, chunk_id, file_path, system_prompt=system, kind="glean")
            passes += 1
            if extra is None:
                log.warning("chunk %s: gleaning answer holds no record: %.200r", chunk_id, more)
                break
            result = merge_gleaning(result, extra)
            complete = is_complete(more) and not extra.malformed
        extract_span.set_attribute("lightrag.gleaning_passes", passes)
        return result


def entity_keys(result: Extraction) -> list[tuple[str, str]]:
    """``(name, type)`` of each entity found, once per name, in answer order."""
    seen: dict[str, tuple[str, str]] = {}
    for e in result.entities:
        seen.setdefault(e.name, (e.name, e.entity_type))
    return list(seen.values())


def relation_keys(result: Extraction) -> list[tuple[str, str]]:
    """``(source, target)`` of each relation found, once per unordered pair, in answer order."""
    seen: dict[frozenset[str], tuple[str, str]] = {}
    for r in result.relations:
        seen.setdefault(frozenset((r.src, r.tgt)), (r.src, r.tgt))
    return list(seen.values())


def _is_garbage(answer: str, parsed: Extraction) -> bool:
    """Text that yields no record at all (an empty answer or a bare completion line is fine)."""
    empty = not answer.replace(COMPLETION_DELIMITER, "").strip()
    return not (empty or parsed.entities or parsed.relations)


class NLPExtractor:
    """Offline extraction with spaCy (named entities, noun phrases, co-occurrence)."""

    name = "nlp"

    def __init__(self, settings: Settings) -> None:
        from ..offline.nlp_extract import SpacyExtractor

        self._impl = SpacyExtractor(
            entity_types=settings.entity_types,
            max_name_length=settings.max_entity_name_length,
            max_relations_per_chunk=settings.nlp_max_relations_per_chunk,
        )

    def batched(self) -> AbstractAsyncContextManager[None]:
        """Nothing to batch: offline extraction uses no cache."""
        return nullcontext()

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction:
        return await asyncio.to_thread(self._impl.extract, text, chunk_id=chunk_id, file_path=file_path)
