"""The Debian FAQ's recorded LLM: extraction and keyword answers replayed from files.

No LLM runs on the benchmark machine, so the answers an LLM gives the indexing and
keyword prompts were recorded once and are replayed here, which makes an LLM-extracted
graph of the FAQ reproducible. They were written by an LLM (a Claude model working as
the project's extraction model), given the prompts of
:mod:`lightrag_pg.index.extraction_prompts` and of
:func:`lightrag_pg.query.answer_prompts.keywords_prompt`: for extraction, each chunk
alone (never the questions); for keywords, each question alone (never the passages).

- ``data/debian_faq_extraction.jsonl``: ``{"key", "answer"}`` per chunk, ``key`` being
  :func:`chunk_key` of the chunk text (the FAQ chunked with the default settings).
- ``data/debian_faq_keywords.jsonl``: ``{"question", "answer"}`` per question, as written
  and reworded.

Gleaning prompts get the completion line (the recording found nothing more); summary
prompts get the descriptions joined, cut to the recommended summary length (a
deterministic stand-in for a summary). A prompt with no recorded answer raises
:class:`MissingAnswer`, so an incomplete recording cannot pass for a finished run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lightrag_pg.index.extraction_prompts import COMPLETION_DELIMITER
from lightrag_pg.query.answer_prompts import KEYWORDS_MARKER
from lightrag_pg.testing import (
    classify_prompt,
    prompt_descriptions,
    prompt_input_text,
    query_from_keywords_prompt,
)

DATA = Path(__file__).resolve().parent / "data"
EXTRACTION_FILE = DATA / "debian_faq_extraction.jsonl"
KEYWORDS_FILE = DATA / "debian_faq_keywords.jsonl"
SUMMARY_WORDS = 450
"""About the default ``summary_length_recommended`` (600 tokens) in English words."""


class MissingAnswer(LookupError):
    """A prompt the recording has no answer for."""


def chunk_key(text: str) -> str:
    """The key a chunk's recorded extraction is filed under."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _load(path: Path, key: str) -> dict[str, str]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {row[key]: row["answer"] for row in rows}


def summary_answer(descriptions: list[str]) -> str:
    """The descriptions joined in their order, cut to :data:`SUMMARY_WORDS` words."""
    words = " ".join(descriptions).split()
    return " ".join(words[:SUMMARY_WORDS])


class RecordedLLM:
    """An LLM function (upstream's ``llm_model_func`` shape) answering from the recording."""

    def __init__(self, extraction_file: Path = EXTRACTION_FILE, keywords_file: Path = KEYWORDS_FILE) -> None:
        self.extractions = _load(extraction_file, "key")
        self.keywords = _load(keywords_file, "question")
        self.calls = 0

    def respond(self, prompt: str) -> str:
        """The recorded answer to one user prompt."""
        kind = classify_prompt(prompt)
        if kind == "extraction":
            text = prompt_input_text(prompt) or ""
            try:
                return self.extractions[chunk_key(text)]
            except KeyError:
                raise MissingAnswer(f"no recorded extraction for the chunk {text[:60]!r}") from None
        if kind == "gleaning":
            return COMPLETION_DELIMITER
        if kind == "summary":
            return summary_answer(prompt_descriptions(prompt) or [])
        if prompt.startswith(KEYWORDS_MARKER):
            question = query_from_keywords_prompt(prompt) or ""
            try:
                return self.keywords[question]
            except KeyError:
                raise MissingAnswer(f"no recorded keywords for the question {question!r}") from None
        raise MissingAnswer(f"no recorded answer for a prompt starting {prompt[:60]!r}")

    async def __call__(
        self, prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
    ) -> str:
        self.calls += 1
        return self.respond(prompt)
