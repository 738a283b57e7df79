"""Merging description fragments: joined, or summarised by the LLM (map-reduce)."""

from __future__ import annotations

import hashlib
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


GROUP_BOUNDARY_MODULUS = 8
"""A group ends after an item whose stable hash is divisible by this: the mean group size."""

WHOLE_SET_ITEMS = 4 * GROUP_BOUNDARY_MODULUS
"""Up to this many items (within the token budget) are summarised in one prompt."""


def _is_boundary(item: str) -> bool:
    digest = hashlib.blake2b(item.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % GROUP_BOUNDARY_MODULUS == 0


def stable_groups(items: Sequence[str], tokens: Sequence[int], budget: int) -> list[list[str]]:
    """``items`` cut into consecutive groups at content-defined boundaries.

    A group ends after an item whose hash falls in the boundary class, or
    before an item that would take it past ``budget`` tokens. A boundary
    depends on the item alone, so over sorted items the groups are a function
    of the set, and inserting or removing one item changes only the group it
    falls in (or that group and its neighbour, when the item is a boundary).
    Only the token cap depends on position: groups cut by it may shift up to
    the next content boundary.
    """
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for item, count in zip(items, tokens, strict=True):
        if current and used + count > budget:
            groups.append(current)
            current, used = [], 0
        current.append(item)
        used += count
        if _is_boundary(item):
            groups.append(current)
            current, used = [], 0
    if current:
        groups.append(current)
    return groups


def _packed_groups(items: Sequence[str], tokens: Sequence[int], budget: int) -> list[list[str]]:
    """``items`` packed in order into groups of at least two within ``budget``."""
    groups: list[list[str]] = [[]]
    used = 0
    for item, count in zip(items, tokens, strict=True):
        current = groups[-1]
        if len(current) >= 2 and (used + count > budget or len(current) >= WHOLE_SET_ITEMS):
            groups.append([])
            used = 0
        groups[-1].append(item)
        used += count
    return groups


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

    def many(self, fragments: Sequence[str]) -> bool:
        """Whether there are enough ``fragments`` for a summary whatever their length
        (``force_llm_summary_on_merge``, and a model to ask)."""
        return self.llm is not None and len(fragments) >= max(2, self.settings.force_llm_summary_on_merge)

    def join(self, fragments: Sequence[str]) -> str:
        """The fragments joined with the separator (the newest kept within
        ``max_description_length``), without calling the LLM."""
        return _bounded_join(list(fragments), self.settings.max_description_length)

    async def describe(self, kind: Literal["entity", "relation"], name: str, fragments: list[str]) -> str:
        """One description for ``fragments`` (joined with the separator, or summarised).

        A summary is a map-reduce over :func:`stable_groups`: each group of two
        or more items is summarised (its prompt, hence its cache entry, depends
        on that group alone), a group of one passes through, and the results
        are grouped again until one group remains. Adding or removing one
        fragment changes only the group it falls in, so a large entity costs
        a few LLM calls per change, not one per group.
        """
        if not fragments:
            return ""
        if not self.needs_llm(fragments):
            return self.join(fragments)
        items = sorted(fragments)
        while True:
            groups = self.groups(items)
            if len(groups) == 1:
                return await self._summarize(kind, name, groups[0])
            items = await gather_all(
                *(self._summarize(kind, name, g) if len(g) > 1 else _first(g) for g in groups)
            )

    def groups(self, items: list[str]) -> list[list[str]]:
        """One level of the map-reduce: ``items`` whole when they fit in one
        prompt, else their stable groups (packed by size when no stable group
        would merge anything)."""
        budget = self.settings.summary_context_size
        tokens = [self.tokenizer.count(item) for item in items]
        if len(items) <= WHOLE_SET_ITEMS and sum(tokens) <= budget:
            return [items]
        groups = stable_groups(items, tokens, budget)
        if all(len(g) == 1 for g in groups):
            return _packed_groups(items, tokens, budget)
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
