"""Summaries of large entities map-reduce over stable groups of fragments."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from lightrag_pg.config import Settings
from lightrag_pg.index.summary import Summarizer, stable_groups
from lightrag_pg.llm.cached import CachedAnswer, CachedLLM
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.testing import classify_prompt, scripted_llm

BUDGET = 12_000


class DictCache:
    """An in-memory answer cache."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self.answers.get(key)

    async def put(
        self, key: str, response: str, *, cache_type: str, mode: str, prompt: str, chunk_id: str | None
    ) -> None:
        self.answers[key] = response

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        return {k: self.answers[k] for k in keys if k in self.answers}

    async def put_many(self, answers: Sequence[CachedAnswer]) -> None:
        for a in answers:
            self.answers[a.key] = a.response


class CountingLLM:
    """The scripted LLM, recording the summary prompts that reach it."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        assert classify_prompt(prompt) == "summary"
        self.prompts.append(prompt)
        return await scripted_llm(prompt, system_prompt)


def hub_fragments(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = ["works", "lives", "met", "founded", "wrote", "studied", "visited", "leads"]
    return [
        f"Alice {rng.choice(words)} with partner {i} in project {rng.randrange(10**6)}." for i in range(n)
    ]


def summarizer(llm: CountingLLM, cache: DictCache) -> Summarizer:
    return Summarizer(Settings(), get_tokenizer(), CachedLLM(llm, cache))


def groups_of(fragments: list[str]) -> list[list[str]]:
    items = sorted(fragments)
    return stable_groups(items, [get_tokenizer().count(f) for f in items], BUDGET)


def test_stable_groups_are_a_function_of_the_set() -> None:
    fragments = hub_fragments(200)
    expected = groups_of(fragments)
    for seed in range(5):
        shuffled = fragments[:]
        random.Random(seed).shuffle(shuffled)
        assert groups_of(shuffled) == expected
    assert [f for g in expected for f in g] == sorted(fragments)
    assert 10 <= len(expected) <= 60


def test_adding_or_removing_one_fragment_changes_at_most_two_groups() -> None:
    for seed in range(20):
        fragments = hub_fragments(201, seed)
        base, extra = fragments[:200], fragments[200]
        before = {tuple(g) for g in groups_of(base)}
        after = {tuple(g) for g in groups_of([*base, extra])}
        assert len(after - before) <= 2, seed
        assert len(before - after) <= 2, seed
        removed = {tuple(g) for g in groups_of(base[1:])}
        assert len(removed - before) <= 2, seed


def test_groups_respect_the_token_cap() -> None:
    long = [f"Fragment {i} " + "word " * 400 for i in range(40)]
    tokens = [get_tokenizer().count(f) for f in long]
    for group in stable_groups(long, tokens, 1_000):
        assert len(group) == 1 or sum(get_tokenizer().count(f) for f in group) <= 1_000


async def test_a_hub_gaining_one_fragment_costs_a_few_calls() -> None:
    llm, cache = CountingLLM(), DictCache()
    summ = summarizer(llm, cache)
    fragments = hub_fragments(201)
    first = await summ.describe("entity", "Alice", fragments[:200])
    cold = len(llm.prompts)
    assert cold == len([g for g in groups_of(fragments[:200]) if len(g) > 1]) + 1
    llm.prompts.clear()
    second = await summ.describe("entity", "Alice", fragments)
    assert second != first
    assert 1 <= len(llm.prompts) <= 3 < cold


async def test_the_summary_does_not_depend_on_fragment_order() -> None:
    # deliberate difference: upstream 1.5.7 appends a later document's fragments to the
    # summary it stored earlier, so its description depends on the order documents came in;
    # lightrag_pg summarises the set of fragments
    fragments = hub_fragments(150)
    answers = set()
    for seed in range(3):
        shuffled = fragments[:]
        random.Random(seed).shuffle(shuffled)
        llm = CountingLLM()
        summ = summarizer(llm, DictCache())
        answers.add(await summ.describe("entity", "Alice", shuffled))
    assert len(answers) == 1


async def test_small_sets_are_summarised_in_one_call() -> None:
    llm = CountingLLM()
    summ = summarizer(llm, DictCache())
    fragments = hub_fragments(12)
    desc = await summ.describe("entity", "Alice", fragments)
    assert len(llm.prompts) == 1
    assert desc.startswith("Summary of 12 descriptions")


async def test_items_that_never_group_are_still_reduced() -> None:
    """Groups that would each hold one item fall back to packing, so the reduce ends."""
    llm = CountingLLM()
    summ = summarizer(llm, DictCache())
    long = [f"Fragment {i} " + "word " * 5_000 for i in range(6)]
    desc = await summ.describe("entity", "Alice", long)
    assert desc.startswith("Summary of")
    assert len(llm.prompts) >= 2
