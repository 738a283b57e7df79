"""LLM-free query keywords: high-level and low-level keywords from spaCy's parse.

The rule, in the order applied to the parsed query:

* Low-level keywords (``ll``): the query's specific phrases in order of appearance:
  a noun phrase that extends a name with common nouns ("Debian package", "Debian
  control file") whole, since it is narrower than the name alone; the named
  entities outside such a phrase (numeric and temporal ones excluded); the other
  noun phrases with a proper noun or a compound of two or more nouns ("knowledge
  graph").
* High-level keywords (``hl``): the remaining common-noun phrases in lemma form
  ("environmental impact"), then the lemma of every content verb of the query
  ("discover"; not only a sentence's root, which in "Is it possible to update the
  system?" is "is"), leaving out stop words and the words that only frame a
  question ("tell", "explain", "describe", "please", as the heuristic below).
* If ``ll`` is empty, it takes every noun phrase of the query (so it repeats
  the noun phrases of ``hl``); if there are none, all its named entities
  (dates and numbers included) and content words.
* If ``hl`` is empty, it takes the head nouns of the ``ll`` phrases ("package" of
  "Debian package"); failing that, a copy of ``ll``. Every keyword is words of the
  query: an entity type such as "organization" (spaCy's label of "Debian") names
  what the words are, not what the query asks about, and searching relations for it
  finds relations about organizations.

Both lists are deduplicated case-insensitively. An empty or blank query gives
two empty lists.

Without spaCy, :func:`offline_keywords` falls back to a plain heuristic:
capitalised phrases are low-level keywords, other content words high-level.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, ModelFileMismatch
from ._spacy_text import (
    collapse,
    concept_name,
    load_spacy,
    normalize_name,
    phrase_lemmas,
    trim_span,
)
from .nlp_lexicon import NER_TYPES

_MAX_KEYWORD_CHARS = 200
_CONTENT_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB"})
_FRAME = frozenset({"tell", "explain", "describe", "please"})
"""Words that only frame a question ("Could you explain ..."), never a keyword."""


def _dedupe(words: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for word in words:
        word = normalize_name(word, _MAX_KEYWORD_CHARS)
        if word and word.lower() not in seen:
            seen.add(word.lower())
            out.append(word)
    return out


def _low_level(doc: Any) -> tuple[list[str], list[str]]:
    """(named entities and specific phrases in order of appearance, their head nouns)."""
    found: list[tuple[int, str]] = []
    heads: list[str] = []
    covered: set[int] = set()
    chunks = [part for part in (trim_span(chunk) for chunk in doc.noun_chunks) if len(part)]
    for part in chunks:
        if part.root.pos_ == "NOUN" and any(t.ent_type_ in NER_TYPES for t in part):
            covered.update(range(part.start, part.end))
            found.append((part.start, part.text))
            heads.append(part.root.lemma_.lower())
    for ent in doc.ents:
        if ent.label_ in NER_TYPES and not covered.intersection(range(ent.start, ent.end)):
            covered.update(range(ent.start, ent.end))
            found.append((ent.start, trim_span(ent, named=True).text))
    for part in chunks:
        if covered.intersection(range(part.start, part.end)):
            continue
        name = concept_name(part, Counter())
        if name:
            found.append((part.start, name))
            if part.root.pos_ == "NOUN":
                heads.append(part.root.lemma_.lower())
    found.sort(key=lambda item: item[0])
    return [name for _, name in found], heads


def nlp_keywords(query: str) -> tuple[list[str], list[str]]:
    """High-level and low-level keywords of ``query`` (see the module docstring)."""
    text = collapse(query.replace("\x00", " ")) if isinstance(query, str) else ""
    if not text:
        return [], []
    doc = load_spacy()(text)
    ll, heads = _low_level(doc)
    ll = _dedupe(ll)
    specific = {w.lower() for w in ll}
    phrases = [p for _, p in phrase_lemmas(doc.noun_chunks) if p.lower() not in specific]
    verbs = [t.lemma_.lower() for t in doc if t.pos_ == "VERB" and not t.is_stop]
    hl = _dedupe([w for w in phrases + verbs if w not in _FRAME])
    if not ll:
        words = [t.lemma_.lower() for t in doc if t.pos_ in _CONTENT_POS and not t.is_stop]
        ll = _dedupe(phrases) or _dedupe([e.text for e in doc.ents] + [w for w in words if w not in _FRAME])
    if not hl:
        hl = _dedupe(heads) or list(ll)
    return hl, ll


_STOP = _FRAME | frozenset(
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
        "me",
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


@cache
def rule_version() -> str:
    """Names the rule :func:`offline_keywords` applies here: a digest of this module's and
    the spaCy helpers' source and of whether spaCy is installed (cached keywords of
    another rule are not reused), computed without importing spaCy."""
    digest = hashlib.md5(b"spacy" if importlib.util.find_spec("spacy") else b"heuristic")
    for name in ("keywords.py", "_spacy_text.py"):
        digest.update(Path(__file__).with_name(name).read_bytes())
    return digest.hexdigest()[:12]


def offline_keywords(query: str) -> tuple[list[str], list[str]]:
    """spaCy-based keywords (``[offline]`` extra) when available, else :func:`heuristic_keywords`.

    A model file that fails its check is an error, not a reason to fall back."""
    try:
        return nlp_keywords(query)
    except ModelFileMismatch:
        raise
    except ConfigurationError:
        return heuristic_keywords(query)
