"""Test doubles shared by the test suite and the benchmarks.

* Prompt recognition: which of lightrag_pg's prompts a user message is, and
  what it carries (:func:`classify_prompt`, :func:`prompt_input_text`,
  :func:`prompt_descriptions`, :func:`query_from_keywords_prompt`), relying
  on the markers documented in :mod:`lightrag_pg.index.extraction_prompts`
  and :mod:`lightrag_pg.query.answer_prompts`.
* A scripted LLM answering from the prompt text alone (:func:`respond`,
  :func:`responder` for an OpenAI-compatible fake server, :func:`scripted_llm`
  as an in-process LLM function).
* Hashed bag-of-words embeddings (:func:`hashed_vectors`,
  :func:`hashed_embedding_func`).
* :class:`StatementCounter`, counting the SQL statements asyncpg sends.

Nothing in the library imports this module.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import lru_cache
from itertools import combinations
from types import TracebackType
from typing import Any, Literal, Self

import asyncpg.connection
import numpy as np

from .index.extraction_prompts import (
    DESCRIPTIONS_END,
    EXTRACTION_HEADER,
    EXTRACTION_MARKER,
    GLEANING_HEADER,
    INPUT_TEXT_END,
    SUMMARY_HEADER,
    SUMMARY_MARKER,
)
from .llm.embedding_func import EmbeddingFunc
from .query.answer_prompts import KEYWORDS_MARKER

PromptKind = Literal["extraction", "gleaning", "summary"]

_KIND_BY_HEADER: dict[str, PromptKind] = {
    EXTRACTION_HEADER: "extraction",
    GLEANING_HEADER: "gleaning",
    SUMMARY_HEADER: "summary",
}


def classify_prompt(prompt: str) -> PromptKind | None:
    """Tell which kind of indexing prompt ``prompt`` (a user message) is, or ``None``.

    Decided by the first line, so chunk text quoting a marker cannot mislead it; an
    extraction prompt is a gleaning one when the gleaning header is a line after the
    end of its input text (the last end marker: no chunk text comes after it).
    """
    first_line = prompt.lstrip().partition("\n")[0].strip()
    kind = _KIND_BY_HEADER.get(first_line)
    if kind == "extraction":
        _, sep, tail = prompt.rpartition("\n" + INPUT_TEXT_END)
        if sep and GLEANING_HEADER in tail.split("\n"):
            return "gleaning"
    return kind


def prompt_input_text(prompt: str) -> str | None:
    """Return the chunk text embedded in an extraction user prompt, or ``None``."""
    _, sep, rest = prompt.partition(EXTRACTION_MARKER + "\n")
    if not sep:
        return None
    body, sep, _ = rest.rpartition("\n" + INPUT_TEXT_END)
    return body if sep else None


def prompt_descriptions(prompt: str) -> list[str] | None:
    """Return the descriptions listed in a summary prompt, or ``None``."""
    _, sep, rest = prompt.partition(SUMMARY_MARKER + "\n")
    if not sep:
        return None
    body, sep, _ = rest.rpartition("\n" + DESCRIPTIONS_END)
    if not sep:
        return None
    return [json.loads(line) for line in body.split("\n") if line.strip()]


def query_from_keywords_prompt(prompt: str) -> str | None:
    """Return the query embedded in a keyword-extraction prompt, else ``None``."""
    if not prompt.startswith(KEYWORDS_MARKER):
        return None
    _, sep, tail = prompt.rpartition("\nQuery:\n")
    return tail if sep else None


# The scripted LLM: every name of KNOWN found in a chunk becomes an entity;
# every pair of known names in one sentence becomes a relation whose
# description is that sentence. Gleaning adds nothing. Summaries, keywords
# and answers are derived from the prompt.

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
SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def names_in(text: str) -> list[str]:
    """Known names in ``text``, in order of first appearance."""
    found = [(text.find(n), n) for n in KNOWN if n in text]
    return [n for _, n in sorted(found)]


def extraction_answer(text: str) -> str:
    """Extraction records for ``text``: its known names and the pairs sharing a sentence."""
    lines = []
    for name in names_in(text):
        first = next(s.strip() for s in SENTENCE.findall(text) if name in s)
        lines.append(f"entity{D}{name}{D}{KNOWN[name]}{D}{name} is mentioned: {first}")
    seen: set[tuple[str, str]] = set()
    for sentence in SENTENCE.findall(text):
        for a, b in combinations(names_in(sentence), 2):
            if (a, b) in seen:
                continue
            seen.add((a, b))
            lines.append(f"relation{D}{a}{D}{b}{D}co-occurrence, {a.lower()}{D}{sentence.strip()}")
    return "\n".join([*lines, "<|COMPLETE|>"])


def keywords_answer(query: str) -> str:
    """Keyword JSON: known names as low-level keywords, long words as high-level ones."""
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
    """Fake OpenAI server responder: answers the last user message."""
    system = next((m["content"] for m in messages if m["role"] == "system"), None)
    return respond(messages[-1]["content"], system)


async def scripted_llm(
    prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
) -> str:
    """The scripted answers as an in-process async LLM function."""
    return respond(prompt, system_prompt)


HASHED_DIM = 32
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1 << 16)
def _bucket(word: str, dim: int) -> int:
    return int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little") % dim


def hashed_vectors(texts: list[str], dim: int = HASHED_DIM) -> np.ndarray:
    """Each word adds 1 to a bucket chosen by its hash, then L2 normalisation.

    Texts sharing words are similar; a text without words gets the first unit vector.
    """
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word, times in Counter(_WORD.findall(text.lower())).items():
            out[i, _bucket(word, dim)] += times
        norm = np.linalg.norm(out[i])
        out[i] = out[i] / norm if norm else np.eye(dim, dtype=np.float32)[0]
    return out


def hashed_embedding_func(dim: int = HASHED_DIM) -> EmbeddingFunc:
    """An :class:`EmbeddingFunc` over :func:`hashed_vectors`, named ``hashed-bow-<dim>``."""

    async def embed(texts: list[str]) -> np.ndarray:
        return hashed_vectors(texts, dim)

    return EmbeddingFunc(embedding_dim=dim, func=embed, model_name=f"hashed-bow-{dim}")


_COUNTED_METHODS = ("execute", "executemany", "fetch", "fetchrow", "fetchval")
_in_reset: contextvars.ContextVar[bool] = contextvars.ContextVar("in_reset", default=False)


class StatementCounter:
    """Counts the statements every asyncpg connection sends while the block runs.

    ``with StatementCounter() as counter: ...``. The connection methods are
    patched on the class, so pooled connections, transactions (BEGIN/COMMIT
    go through ``execute``) and connection init hooks are all counted, by
    method in ``by_method``. A pool's reset on release is one round trip,
    counted under ``"reset"``. ``statements`` excludes the resets; ``total``
    includes them.
    """

    def __init__(self) -> None:
        self.by_method: Counter[str] = Counter()
        self._saved: dict[str, Any] = {}

    @property
    def statements(self) -> int:
        """Statements sent by the code under test (pool resets not included)."""
        return sum(n for method, n in self.by_method.items() if method != "reset")

    @property
    def total(self) -> int:
        """Every round trip counted so far, pool resets included."""
        return sum(self.by_method.values())

    def clear(self) -> None:
        """Start counting from zero again."""
        self.by_method.clear()

    def _wrap(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def counted(conn: asyncpg.Connection, *args: Any, **kwargs: Any) -> Any:
            if not _in_reset.get():
                self.by_method[name] += 1
            return await method(conn, *args, **kwargs)

        return counted

    def _wrap_reset(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def counted(conn: asyncpg.Connection, *args: Any, **kwargs: Any) -> Any:
            self.by_method["reset"] += 1
            token = _in_reset.set(True)
            try:
                return await method(conn, *args, **kwargs)
            finally:
                _in_reset.reset(token)

        return counted

    def __enter__(self) -> Self:
        cls = asyncpg.connection.Connection
        for name in (*_COUNTED_METHODS, "reset"):
            self._saved[name] = getattr(cls, name)
        for name in _COUNTED_METHODS:
            setattr(cls, name, self._wrap(name, self._saved[name]))
        cls.reset = self._wrap_reset(self._saved["reset"])  # type: ignore[method-assign]
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for name, method in self._saved.items():
            setattr(asyncpg.connection.Connection, name, method)
        self._saved.clear()
