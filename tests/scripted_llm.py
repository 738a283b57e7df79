"""A deterministic stand-in for an LLM, answering from the prompt text alone.

Extraction: every name of :data:`KNOWN` found in a chunk becomes an entity;
every pair of known names in one sentence becomes a relation whose
description is that sentence. Gleaning adds nothing. Summaries, keywords and
answers are derived from the prompt. Used through :class:`FakeOpenAI` (the
real ``openai`` client over HTTP) in tests, and directly in benchmarks.
"""

from __future__ import annotations

import json
import re
from itertools import combinations
from typing import Any

from lightrag_pg.index.extraction_prompts import classify_prompt, prompt_descriptions, prompt_input_text
from lightrag_pg.query.answer_prompts import KEYWORDS_MARKER, query_from_keywords_prompt

KNOWN = {
    "Alice": "Person",
    "Bob": "Person",
    "Carol": "Person",
    "Acme": "Organization",
    "Globex": "Organization",
    "Paris": "Location",
    "Berlin": "Location",
    "Quantum Lab": "Organization",
    "O'Brien $$ Co": "Organization",
}
D = "<|#|>"
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def names_in(text: str) -> list[str]:
    """Known names in ``text``, in order of first appearance."""
    found = [(text.find(n), n) for n in KNOWN if n in text]
    return [n for _, n in sorted(found)]


def extraction_answer(text: str) -> str:
    lines = []
    for name in names_in(text):
        first = next(s.strip() for s in _SENTENCE.findall(text) if name in s)
        lines.append(f"entity{D}{name}{D}{KNOWN[name]}{D}{name} is mentioned: {first}")
    seen: set[tuple[str, str]] = set()
    for sentence in _SENTENCE.findall(text):
        for a, b in combinations(names_in(sentence), 2):
            if (a, b) in seen:
                continue
            seen.add((a, b))
            lines.append(f"relation{D}{a}{D}{b}{D}co-occurrence, {a.lower()}{D}{sentence.strip()}")
    return "\n".join([*lines, "<|COMPLETE|>"])


def keywords_answer(query: str) -> str:
    low = names_in(query)
    words = [w for w in re.findall(r"[a-z]{5,}", query)]
    return json.dumps({"high_level_keywords": words[:3], "low_level_keywords": low})


def respond(prompt: str, system_prompt: str | None = None) -> str:
    """The scripted answer to one user prompt."""
    kind = classify_prompt(prompt)
    if kind == "extraction":
        return extraction_answer(prompt_input_text(prompt) or "")
    if kind == "gleaning":
        return "<|COMPLETE|>"
    if kind == "summary":
        descriptions = prompt_descriptions(prompt) or []
        return f"Summary of {len(descriptions)} descriptions: " + " | ".join(d[:40] for d in descriptions)
    if prompt.startswith(KEYWORDS_MARKER):
        return keywords_answer(query_from_keywords_prompt(prompt) or "")
    context_size = len(system_prompt or "")
    return f"Scripted answer to {prompt.strip()[-80:]!r} from a context of {context_size} characters."


def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """FakeOpenAI responder: answers the last user message."""
    system = next((m["content"] for m in messages if m["role"] == "system"), None)
    return respond(messages[-1]["content"], system)


async def scripted_llm(
    prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
) -> str:
    """The same answers as an in-process async LLM function (for benchmarks)."""
    return respond(prompt, system_prompt)
