"""LLM-free entity and relation extraction with spaCy's English pipeline.

Entities are spaCy's named entities plus salient noun phrases; relations are
sentence-level co-occurrences. Rules:

* Named-entity labels map onto entity types (``LABEL_TYPES``): PERSON -> Person;
  ORG, NORP -> Organization; GPE, LOC, FAC -> Location; EVENT -> Event;
  WORK_OF_ART -> Content; PRODUCT -> Artifact; LAW, LANGUAGE -> Concept.
  Numeric and temporal labels (DATE, TIME, MONEY, PERCENT, QUANTITY, CARDINAL,
  ORDINAL) are skipped.
* A type not among the configured ``entity_types`` falls back to "Concept" when
  that is configured, else to the first configured type.
* A noun chunk that overlaps no kept named entity becomes a Concept, once
  leading determiners, pronouns, numbers and stop words are stripped, when it
  has a proper noun (named as written), or two or more common nouns (a
  compound, named from its first noun on, head lemmatised: "knowledge
  graph"), or a head noun that heads two or more chunks of the text (named by
  that noun's lemma: "document").
* Names are whitespace-collapsed, lose edge punctuation and a leading
  "the"/"a"/"an", and are cut to ``max_name_length``. Mentions merge
  case-insensitively under their most frequent surface form; a one-word person
  ("Curie") joins the latest earlier full name ending with it, else the only
  such full name in the text.
* Descriptions are the first two sentences mentioning the entity (<= 500 chars).
* Each unordered pair of distinct entities among the first
  ``max_entities_per_sentence`` of a sentence gives one relation per text:
  weight = number of sentences the pair shares, description = the first of
  them, keywords = the first shared sentence's main verb and noun-phrase
  lemmas (at most five, the pair itself excluded).

Output is deterministic: entities by first mention, relations by first co-occurrence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, ExtractionError
from ..types import UNKNOWN_SOURCE, ExtractedEntity, ExtractedRelation, Extraction
from ._spacy_text import (
    LABEL_TYPES,
    SKIPPED_LABELS,
    collapse,
    concept_name,
    load_spacy,
    normalize_name,
    phrase_lemmas,
    resolve_type,
    trim_span,
)

MAX_DESCRIPTION_CHARS = 500
MAX_RELATION_SENTENCES = 1
MAX_KEYWORDS = 5

# (first token index, name, entity type, spaCy label or "np")
_Mention = tuple[int, str, str, str]


@dataclass
class _Entity:
    surfaces: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    sentences: list[str] = field(default_factory=list)


@dataclass
class _Pair:
    src: str
    tgt: str
    keywords: str
    sentences: list[str] = field(default_factory=list)
    count: int = 0


class SpacyExtractor:
    """Extracts entities and co-occurrence relations from text with spaCy (no LLM).

    ``extract`` is synchronous and CPU-bound; call it through
    ``asyncio.to_thread``. The spaCy pipeline is loaded once per process.
    """

    def __init__(
        self,
        entity_types: tuple[str, ...],
        max_name_length: int = 256,
        *,
        max_entities_per_sentence: int = 12,
    ) -> None:
        if not entity_types:
            raise ConfigurationError("entity_types must not be empty")
        if max_name_length < 1 or max_entities_per_sentence < 2:
            raise ConfigurationError("max_name_length must be >= 1 and max_entities_per_sentence >= 2")
        self.entity_types = tuple(entity_types)
        self.max_name_length = max_name_length
        self.max_entities_per_sentence = max_entities_per_sentence
        self._concept = resolve_type("Concept", self.entity_types)

    def extract(self, text: str, *, chunk_id: str, file_path: str = UNKNOWN_SOURCE) -> Extraction:
        """Entities and relations found in one chunk of ``text``."""
        nlp = load_spacy()
        return self._from_doc(nlp(_prepare(text, nlp)), chunk_id, file_path)

    def extract_many(
        self,
        texts: Sequence[str],
        *,
        chunk_ids: Sequence[str],
        file_paths: Sequence[str] | None = None,
        batch_size: int = 16,
    ) -> list[Extraction]:
        """``extract`` for many chunks at once, through spaCy's batched ``nlp.pipe``."""
        if len(chunk_ids) != len(texts) or (file_paths is not None and len(file_paths) != len(texts)):
            raise ExtractionError("texts, chunk_ids and file_paths must have the same length")
        paths = list(file_paths) if file_paths is not None else [UNKNOWN_SOURCE] * len(texts)
        nlp = load_spacy()
        docs = nlp.pipe([_prepare(t, nlp) for t in texts], batch_size=batch_size)
        return [self._from_doc(doc, cid, fp) for doc, cid, fp in zip(docs, chunk_ids, paths, strict=True)]

    def _mentions(self, doc: Any) -> list[_Mention]:
        found: list[_Mention] = []
        covered: set[int] = set()
        for ent in doc.ents:
            label_type = LABEL_TYPES.get(ent.label_)
            if label_type is None:
                continue
            covered.update(range(ent.start, ent.end))
            span = trim_span(ent, named=True)
            name = normalize_name(span.text, self.max_name_length) if len(span) else ""
            if name:
                found.append(
                    (
                        span.start,
                        name,
                        resolve_type(label_type, self.entity_types),
                        ent.label_,
                    )
                )
        chunks = [trim_span(c) for c in doc.noun_chunks]
        chunks = [
            c
            for c in chunks
            if len(c)
            and c.root.pos_ in ("NOUN", "PROPN")
            and c.root.ent_type_ not in SKIPPED_LABELS
            and not covered.intersection(range(c.start, c.end))
        ]
        heads = Counter(c.root.lemma_.lower() for c in chunks)
        for chunk in chunks:
            name = normalize_name(concept_name(chunk, heads), self.max_name_length)
            if name:
                found.append((chunk.start, name, self._concept, "np"))
        found.sort(key=lambda m: m[0])
        return found

    @staticmethod
    def _mention_keys(mentions: list[_Mention]) -> list[str]:
        """Merge key of each mention (see the module docstring for one-word persons)."""
        full = [m[1].lower() for m in mentions if m[3] == "PERSON" and " " in m[1]]
        latest: dict[str, str] = {}
        keys: list[str] = []
        for _, name, _, label in mentions:
            key = name.lower()
            if label == "PERSON" and " " in key:
                latest[key.rsplit(" ", 1)[1]] = key
            elif label == "PERSON":
                owners = sorted({f for f in full if f.endswith(" " + key)})
                key = latest.get(key) or (owners[0] if len(owners) == 1 else key)
            keys.append(key)
        return keys

    def _from_doc(self, doc: Any, chunk_id: str, file_path: str) -> Extraction:
        mentions = self._mentions(doc)
        sentences = list(doc.sents)
        sentence_of = [0] * len(doc)
        for index, sent in enumerate(sentences):
            sentence_of[sent.start : sent.end] = [index] * len(sent)
        entities: dict[str, _Entity] = {}
        per_sentence: dict[int, list[str]] = {}
        for (start, name, etype, label), key in zip(mentions, self._mention_keys(mentions), strict=True):
            ent = entities.setdefault(key, _Entity())
            ent.surfaces[name] += 1
            ent.types[etype] += 1 if label == "np" else 2
            index = sentence_of[start]
            keys = per_sentence.setdefault(index, [])
            if key not in keys:
                keys.append(key)
            text = collapse(sentences[index].text)
            if len(ent.sentences) < 2 and text not in ent.sentences:
                ent.sentences.append(text)
        names = {key: _surface(e, key) for key, e in entities.items()}
        out_entities = tuple(
            ExtractedEntity(
                name=names[key],
                entity_type=e.types.most_common(1)[0][0],
                description=" ".join(e.sentences)[:MAX_DESCRIPTION_CHARS].rstrip(),
                chunk_id=chunk_id,
                file_path=file_path,
            )
            for key, e in entities.items()
        )
        out_relations = tuple(
            ExtractedRelation(
                src=p.src,
                tgt=p.tgt,
                keywords=p.keywords,
                description=" ".join(p.sentences),
                weight=float(p.count),
                chunk_id=chunk_id,
                file_path=file_path,
            )
            for p in self._pairs(per_sentence, sentences, sentence_of, names)
        )
        return Extraction(entities=out_entities, relations=out_relations)

    def _pairs(
        self,
        per_sentence: dict[int, list[str]],
        sentences: list[Any],
        sentence_of: list[int],
        names: dict[str, str],
    ) -> list[_Pair]:
        """One record per unordered entity pair sharing a sentence, in first-seen order."""
        topics = _sentence_topics(sentences, sentence_of)
        pairs: dict[tuple[str, str], _Pair] = {}
        for index in sorted(per_sentence):
            keys = per_sentence[index][: self.max_entities_per_sentence]
            text = collapse(sentences[index].text)
            for i, a in enumerate(keys):
                for b in keys[i + 1 :]:
                    pair = pairs.get((b, a)) or pairs.get((a, b))
                    if pair is None:
                        pair = pairs[(a, b)] = _Pair(
                            src=names[a],
                            tgt=names[b],
                            keywords=_keywords(topics[index], {a, b}),
                        )
                    pair.count += 1
                    if len(pair.sentences) < MAX_RELATION_SENTENCES and text not in pair.sentences:
                        pair.sentences.append(text)
        return list(pairs.values())


_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
"""A Markdown heading, which becomes a sentence of its own."""


def _prepare(text: str, nlp: Any) -> str:
    if not isinstance(text, str):
        raise ExtractionError(f"expected text as str, got {type(text).__name__}")
    if len(text) > nlp.max_length:
        raise ExtractionError(f"text of {len(text)} characters exceeds spaCy's limit of {nlp.max_length}")
    return _HEADING.sub(r"\1.", text.replace("\x00", " "))


def _surface(entity: _Entity, key: str) -> str:
    """The most frequent surface form spelling ``key`` (first seen on ties)."""
    forms = [f for f in entity.surfaces if f.lower() == key] or list(entity.surfaces)
    return max(forms, key=lambda f: entity.surfaces[f])


def _sentence_topics(sentences: list[Any], sentence_of: list[int]) -> list[list[str]]:
    """Per sentence: its main verb's lemma (unless a stop word), then its noun-phrase lemmas."""
    topics: list[list[str]] = []
    for sentence in sentences:
        root = sentence.root
        verb = root.pos_ == "VERB" and not root.is_stop
        topics.append([root.lemma_.lower()] if verb else [])
    if sentences:
        for start, lemma in phrase_lemmas(sentences[0].doc.noun_chunks):
            words = topics[sentence_of[start]]
            if lemma not in words:
                words.append(lemma)
    return topics


def _keywords(topics: list[str], exclude: set[str]) -> str:
    """At most ``MAX_KEYWORDS`` of a sentence's topics, minus ``exclude``, comma-joined."""
    words = [w for w in topics if w not in exclude][:MAX_KEYWORDS]
    return ", ".join(words) or "related"
