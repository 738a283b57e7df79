"""Keywords without an LLM: spaCy when installed, else a plain heuristic."""

from __future__ import annotations

import re

_STOP = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "does",
        "did",
        "do",
        "is",
        "are",
        "was",
        "were",
        "the",
        "a",
        "an",
        "of",
        "in",
        "on",
        "for",
        "to",
        "and",
        "or",
        "with",
        "about",
        "from",
        "by",
        "at",
        "into",
        "between",
        "tell",
        "me",
        "please",
        "explain",
        "describe",
    ]
)
_PROPER = re.compile(r"\b[A-Z][\w'$-]*(?:\s+[A-Z][\w'$-]*)*")
_WORD = re.compile(r"[A-Za-z][\w-]{3,}")


def heuristic_keywords(query: str) -> tuple[list[str], list[str]]:
    """Capitalised phrases become low-level keywords; other content words high-level ones."""
    low = [m.group(0) for m in _PROPER.finditer(query) if m.group(0).lower() not in _STOP]
    taken = {w.lower() for phrase in low for w in phrase.split()}
    high = [w for w in _WORD.findall(query) if w.lower() not in _STOP and w.lower() not in taken]
    return list(dict.fromkeys(high)), list(dict.fromkeys(low))


def offline_keywords(query: str) -> tuple[list[str], list[str]]:
    """spaCy-based keywords (``[offline]`` extra) when available, else :func:`heuristic_keywords`."""
    from ..errors import ConfigurationError

    try:
        from ..offline.keywords import nlp_keywords

        return nlp_keywords(query)
    except (ImportError, ConfigurationError):
        return heuristic_keywords(query)
