"""LLM-free query keywords: high-level and low-level keywords from spaCy's parse.

The rule, in the order applied to the parsed query:

* Low-level keywords (``ll``): the query's named entities (numeric and temporal
  ones excluded) and its specific noun phrases, those with a proper noun or a
  compound of two or more nouns ("knowledge graph"), in order of appearance.
* High-level keywords (``hl``): the remaining common-noun phrases in lemma
  form ("environmental impact"), then the main verb's lemma ("discover")
  unless it is a stop word such as "be" or "do".
* If ``ll`` is empty, it takes every noun phrase of the query (so it repeats
  the noun phrases of ``hl``); if there are none, all its named entities
  (dates and numbers included) and content words.
* If ``hl`` is empty, it takes the entity types of the named entities
  ("person") and the head nouns of the compounds ("graph"); failing that, a
  copy of ``ll``.

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

from ..errors import ConfigurationError
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


def _dedupe(words: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for word in words:
        word = normalize_name(word, _MAX_KEYWORD_CHARS)
        if word and word.lower() not in seen:
            seen.add(word.lower())
            out.append(word)
    return out


def _low_level(doc: Any) -> tuple[list[str], list[str], list[str]]:
    """(named entities and specific phrases, their type names, compound head nouns)."""
    found: list[tuple[int, str]] = []
    types: list[str] = []
    heads: list[str] = []
    covered: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in NER_TYPES:
            covered.update(range(ent.start, ent.end))
            found.append((ent.start, trim_span(ent, named=True).text))
            types.append(NER_TYPES[ent.label_].lower())
    for chunk in doc.noun_chunks:
        part = trim_span(chunk)
        if not len(part) or covered.intersection(range(part.start, part.end)):
            continue
        name = concept_name(part, Counter())
        if name:
            found.append((part.start, name))
            if part.root.pos_ == "NOUN":
                heads.append(part.root.lemma_.lower())
    found.sort(key=lambda item: item[0])
    return [name for _, name in found], types, heads


def nlp_keywords(query: str) -> tuple[list[str], list[str]]:
    """High-level and low-level keywords of ``query`` (see the module docstring)."""
    text = collapse(query.replace("\x00", " ")) if isinstance(query, str) else ""
    if not text:
        return [], []
    doc = load_spacy()(text)
    ll, entity_types, heads = _low_level(doc)
    ll = _dedupe(ll)
    specific = {w.lower() for w in ll}
    phrases = [p for _, p in phrase_lemmas(doc.noun_chunks) if p.lower() not in specific]
    hl = list(phrases)
    for sent in doc.sents:
        root = sent.root
        if root.pos_ == "VERB" and not root.is_stop:
            hl.append(root.lemma_.lower())
    hl = _dedupe(hl)
    if not ll:
        ll = _dedupe(phrases) or _dedupe(
            [e.text for e in doc.ents]
            + [t.lemma_.lower() for t in doc if t.pos_ in _CONTENT_POS and not t.is_stop]
        )
    if not hl:
        hl = _dedupe(entity_types + heads) or list(ll)
    return hl, ll


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
    """spaCy-based keywords (``[offline]`` extra) when available, else :func:`heuristic_keywords`."""
    try:
        return nlp_keywords(query)
    except ConfigurationError:
        return heuristic_keywords(query)
