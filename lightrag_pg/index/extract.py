"""Extractors: turn one chunk into entity and relation mentions."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from ..config import Settings
from ..llm.cached import CachedLLM
from ..types import Extraction
from .extraction_prompts import extraction_messages, gleaning_prompt
from .parse import merge_gleaning, parse_extraction

log = logging.getLogger(__name__)


class Extractor(Protocol):
    """Anything that extracts entities and relations from a chunk."""

    name: str

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction: ...


class LLMExtractor:
    """LightRAG's extraction: one LLM call per chunk plus gleaning passes, cached."""

    name = "llm"

    def __init__(self, llm: CachedLLM, settings: Settings) -> None:
        self.llm = llm
        self.settings = settings

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

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction:
        s = self.settings
        system, user = extraction_messages(text, entity_types=s.entity_types, language=s.summary_language)
        answer = await self.llm(user, system_prompt=system, cache_type="extract", chunk_id=chunk_id)
        result = self._parse(answer, chunk_id, file_path)
        history: list[dict[str, Any]] = [
            {"role": "user", "content": user},
            {"role": "assistant", "content": answer},
        ]
        glean = gleaning_prompt(entity_types=s.entity_types, language=s.summary_language)
        for _ in range(s.entity_extract_max_gleaning):
            more = await self.llm(
                glean, system_prompt=system, history=history, cache_type="extract", chunk_id=chunk_id
            )
            result = merge_gleaning(result, self._parse(more, chunk_id, file_path))
            history += [{"role": "user", "content": glean}, {"role": "assistant", "content": more}]
        return result


class NLPExtractor:
    """Offline extraction with spaCy (named entities, noun phrases, co-occurrence)."""

    name = "nlp"

    def __init__(self, settings: Settings) -> None:
        from ..offline.nlp_extract import SpacyExtractor

        self._impl = SpacyExtractor(
            entity_types=settings.entity_types, max_name_length=settings.max_entity_name_length
        )

    async def extract(self, chunk_id: str, text: str, file_path: str) -> Extraction:
        return await asyncio.to_thread(self._impl.extract, text, chunk_id=chunk_id, file_path=file_path)
