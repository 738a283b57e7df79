"""Merging description fragments: joined, or summarised by the LLM (map-reduce)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..config import Settings
from ..llm.cached import CachedLLM
from ..llm.tokenizer import Tokenizer
from ..tasks import gather_all
from ..types import GRAPH_FIELD_SEP
from .extraction_prompts import summary_prompt


def unique_fragments(*groups: Sequence[str]) -> list[str]:
    """Non-empty fragments in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for group in groups:
        for fragment in group:
            fragment = fragment.strip()
            if fragment:
                seen.setdefault(fragment, None)
    return list(seen)


def split_description(description: str) -> list[str]:
    """The fragments a stored (joined) description was made of."""
    return unique_fragments(description.split(GRAPH_FIELD_SEP))


def _bounded_join(fragments: list[str], max_chars: int) -> str:
    kept: list[str] = []
    size = 0
    for fragment in reversed(fragments):
        size += len(fragment) + len(GRAPH_FIELD_SEP)
        if kept and size > max_chars:
            break
        kept.append(fragment)
    return GRAPH_FIELD_SEP.join(reversed(kept))


class Summarizer:
    """Decides how fragments become one description, and calls the LLM when needed."""

    def __init__(self, settings: Settings, tokenizer: Tokenizer, llm: CachedLLM | None) -> None:
        self.settings = settings
        self.tokenizer = tokenizer
        self.llm = llm

    def needs_llm(self, fragments: Sequence[str]) -> bool:
        """Upstream's rule: summarise when there are many fragments or they are long."""
        if self.llm is None or len(fragments) < 2:
            return False
        if len(fragments) >= self.settings.force_llm_summary_on_merge:
            return True
        total = sum(self.tokenizer.count(f) for f in fragments)
        return total >= self.settings.summary_max_tokens

    def join(self, fragments: Sequence[str]) -> str:
        """The fragments joined with the separator (the newest kept within
        ``max_description_length``), without calling the LLM."""
        return _bounded_join(list(fragments), self.settings.max_description_length)

    async def describe(self, kind: Literal["entity", "relation"], name: str, fragments: list[str]) -> str:
        """One description for ``fragments`` (joined with the separator, or summarised)."""
        if not fragments:
            return ""
        if not self.needs_llm(fragments):
            return self.join(fragments)
        while True:
            groups = self._groups(fragments)
            if len(groups) == 1:
                return await self._summarize(kind, name, groups[0])
            fragments = await gather_all(
                *(self._summarize(kind, name, g) if len(g) > 1 else _first(g) for g in groups)
            )

    def _groups(self, fragments: list[str]) -> list[list[str]]:
        budget = self.settings.summary_context_size
        groups: list[list[str]] = [[]]
        used = 0
        for fragment in fragments:
            tokens = self.tokenizer.count(fragment)
            if groups[-1] and used + tokens > budget and len(groups[-1]) >= 2:
                groups.append([])
                used = 0
            groups[-1].append(fragment)
            used += tokens
        return groups

    async def _summarize(self, kind: Literal["entity", "relation"], name: str, fragments: list[str]) -> str:
        assert self.llm is not None
        prompt = summary_prompt(
            kind,
            name,
            fragments,
            language=self.settings.summary_language,
            summary_length=self.settings.summary_length_recommended,
        )
        answer = await self.llm(prompt, cache_type="summary")
        return answer.strip() or GRAPH_FIELD_SEP.join(fragments)


async def _first(group: list[str]) -> str:
    return group[0]
