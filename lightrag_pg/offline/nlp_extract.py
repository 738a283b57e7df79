"""LLM-free entity and relation extraction with spaCy's English pipeline.

Mentions (names and terms, with type evidence) come from
:mod:`lightrag_pg.offline.nlp_mentions`. This module merges them into entities
and pairs the entities of each sentence into relations:

* Mentions merge under a key: lower case, no possessive, hyphens and
  underscores read as spaces, the last word singular ("HNSW indexes" = "HNSW
  index", "ATARIs" = "ATARI"). An acronym joins the name it abbreviates when
  that name is in the text ("FSF" joins "Free Software Foundation"); a one-word
  name ("Curie", unlabelled or a person) joins the latest earlier full name ending with it, else the
  only such full name in the text.
* An entity is named by its most frequent surface form, an acronym only when
  it has no other (the longer on ties), counting only the mentions whose own key
  is the entity's (a surname or acronym joined to a full name never names it),
  and typed by the type with the most evidence over its mentions (Concept when
  there is none), resolved against the configured ``entity_types``: a type not
  among them falls back to "Concept" when configured, else to the first type.
* The text parsed is its prose (:mod:`lightrag_pg.offline.prose`): code blocks,
  tables and markup are left out; inline code, URLs and commit hashes are kept
  but never mined, but for an inline identifier (``chunk_token_size``), which is a
  name. A Markdown heading, and a first line followed by a blank line without
  ending a sentence (a title), are sentences of their own.
* Descriptions are the first two sentences mentioning the entity (<= 500 chars).
* The distinct entities among the first ``max_entities_per_sentence`` of a
  sentence are joined by the fewest and shortest *links*: the length of a link
  is the count of content words (words other than prepositions, auxiliaries,
  conjunctions, particles, determiners and punctuation) on the dependency path
  between a mention of each entity; links are taken shortest first, then in the
  order of the entities, each kept when it joins two entities not joined yet (a
  minimum spanning forest). "X created by Y" and "X and Y" link X and Y; a name
  at the far end of a long sentence is linked to its nearest name only; a
  sentence of k entities gives k - 1 relations, and each of its entities is in
  one. Each linked pair gives one
  relation per text: weight = number of sentences linking it, description =
  the first of them, keywords = the lemmas of the content words between the
  two mentions in that sentence (verbs other than light ones like "be" or
  "have", and nouns that are not part of a mention), else the sentence's main
  verb, at most five, else "related". A text keeps its
  ``max_relations_per_chunk`` strongest relations, ranked by sentences linking
  them, then path length, then first link, taking the best of each sentence
  first, then the second best of each, and so on.

Output is deterministic: entities by first mention, relations by first link.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, ExtractionError
from ..types import NO_KEYWORDS, UNKNOWN_SOURCE, ExtractedEntity, ExtractedRelation, Extraction
from ._spacy_text import collapse, load_spacy, normalize_name, resolve_type
from .nlp_lexicon import GENERIC_NOUNS, LIGHT_VERBS
from .nlp_mentions import Mention, code_tokens, find_mentions
from .prose import CodeSpan, Prose, prose

__all__ = ["SpacyExtractor", "load_spacy", "merge_key", "resolve_type"]

MAX_DESCRIPTION_CHARS = 500
MAX_RELATION_SENTENCES = 1
MAX_KEYWORDS = 5
LINK_POS = frozenset({"ADP", "AUX", "CCONJ", "SCONJ", "PART", "DET", "PUNCT", "SPACE"})
"""Parts of speech a dependency path may pass through without counting."""
_TYPE_ORDER = (
    "Person",
    "Organization",
    "Location",
    "Event",
    "Artifact",
    "Method",
    "Data",
    "Content",
    "Concept",
)


@dataclass
class _Entity:
    surfaces: Counter[str] = field(default_factory=Counter)
    own: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    context: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    sentences: list[str] = field(default_factory=list)


@dataclass
class _Pair:
    src: str
    tgt: str
    keywords: str
    sentences: list[str] = field(default_factory=list)
    count: int = 0
    path: int = 0
    order: int = 0
    sentence: int = 0


_Link = tuple[str, str, int, Mention, Mention]
"""Two entity names, the content words on the path joining them, and the two mentions."""

_SEPARATORS = re.compile(r"[\s\-_]+")
_ACRONYM_PLURAL = re.compile(r"\b[A-Z][A-Z0-9]+s$")
_POSSESSIVE = re.compile(r"['’]s\b|(?<=s)['’](?=\s|$)")


def merge_key(name: str) -> str:
    """The key under which two mentions are one entity (see the module docstring)."""
    key = _SEPARATORS.sub(" ", _POSSESSIVE.sub("", name.lower())).strip()
    head, _, last = key.rpartition(" ")
    if _ACRONYM_PLURAL.search(name):
        last = last[:-1]
    elif len(last) > 3 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 3 and last.endswith(("sses", "xes", "ches", "shes")):
        last = last[:-2]
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ics")):
        last = last[:-1]
    return f"{head} {last}".strip()


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
        max_relations_per_chunk: int = 8,
    ) -> None:
        if not entity_types:
            raise ConfigurationError("entity_types must not be empty")
        if max_name_length < 1 or max_entities_per_sentence < 2:
            raise ConfigurationError("max_name_length must be >= 1 and max_entities_per_sentence >= 2")
        if max_relations_per_chunk < 0:
            raise ConfigurationError("max_relations_per_chunk must be >= 0")
        self.entity_types = tuple(entity_types)
        self.max_name_length = max_name_length
        self.max_entities_per_sentence = max_entities_per_sentence
        self.max_relations_per_chunk = max_relations_per_chunk

    def extract(self, text: str, *, chunk_id: str, file_path: str = UNKNOWN_SOURCE) -> Extraction:
        """Entities and relations found in one chunk of ``text``."""
        nlp = load_spacy()
        found = _prepare(text, nlp)
        return self._from_doc(_parse(nlp, found), found.code, chunk_id, file_path)

    def entity_type(self, evidence: dict[str, float]) -> str:
        """The configured type with the most evidence (Concept when none is positive)."""
        best = max(_TYPE_ORDER, key=lambda t: (evidence.get(t, 0.0), -_TYPE_ORDER.index(t)))
        return resolve_type(best if evidence.get(best, 0.0) > 0 else "Concept", self.entity_types)

    def _from_doc(self, doc: Any, code: tuple[CodeSpan, ...], chunk_id: str, file_path: str) -> Extraction:
        spans = code_tokens(doc, code)
        mentions = [m for m in find_mentions(doc, spans) if normalize_name(m.name, self.max_name_length)]
        keys = mention_keys(mentions)
        sentences = list(doc.sents)
        texts = [collapse(sent.text) for sent in sentences]
        sentence_of = [0] * len(doc)
        for index, sent in enumerate(sentences):
            sentence_of[sent.start : sent.end] = [index] * len(sent)
        entities: dict[str, _Entity] = {}
        per_sentence: dict[int, dict[str, list[Mention]]] = {}
        for mention, key in zip(mentions, keys, strict=True):
            ent = entities.setdefault(key, _Entity())
            ent.surfaces[normalize_name(mention.name, self.max_name_length)] += 1
            for kind, value in mention.own.items():
                ent.own[kind] += value
            for kind, value in mention.context.items():
                ent.context[kind] += value
            index = sentence_of[mention.start]
            per_sentence.setdefault(index, {}).setdefault(key, []).append(mention)
            text = texts[index]
            if len(ent.sentences) < 2 and text not in ent.sentences:
                ent.sentences.append(text)
        names = {key: _surface(e, key) for key, e in entities.items()}
        out_entities = tuple(
            ExtractedEntity(
                name=names[key],
                entity_type=self.entity_type(_evidence(e)),
                description=" ".join(e.sentences)[:MAX_DESCRIPTION_CHARS].rstrip(),
                chunk_id=chunk_id,
                file_path=file_path,
            )
            for key, e in entities.items()
        )
        taken = [False] * len(doc)
        for start, end in [(m.start, m.end) for m in mentions] + [(c.start, c.end) for c in spans]:
            taken[start:end] = [True] * (end - start)
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
            for p in self._pairs(per_sentence, sentences, texts, names, _Tree(doc), taken)
        )
        return Extraction(entities=out_entities, relations=out_relations)

    def _pairs(
        self,
        per_sentence: dict[int, dict[str, list[Mention]]],
        sentences: list[Any],
        texts: list[str],
        names: dict[str, str],
        tree: _Tree,
        taken: list[bool],
    ) -> list[_Pair]:
        """One record per unordered pair of entity names linked in a sentence (see the
        module docstring): the strongest ``max_relations_per_chunk``, in first-linked order."""
        pairs: dict[tuple[str, str], _Pair] = {}
        for index in sorted(per_sentence):
            members = list(per_sentence[index].items())[: self.max_entities_per_sentence]
            text = texts[index]
            links = []
            for i, (a, first_mentions) in enumerate(members):
                for b, second_mentions in members[i + 1 :]:
                    if names[a] != names[b]:  # two merge keys that came out under one name are one entity
                        links.append((names[a], names[b], *tree.closest(first_mentions, second_mentions)))
            linked = _spanning(links)
            for src, tgt, path, first, second in linked:
                pair = pairs.get((tgt, src)) or pairs.get((src, tgt))
                if pair is None:
                    words = _between(tree.tokens, first.end, second.start, taken)
                    words = words or _main_verb(sentences[index])
                    pair = pairs[(src, tgt)] = _Pair(
                        src=src,
                        tgt=tgt,
                        keywords=", ".join(words[:MAX_KEYWORDS]) or NO_KEYWORDS,
                        path=path,
                        order=len(pairs),
                        sentence=index,
                    )
                pair.count += 1
                pair.path = min(pair.path, path)
                if len(pair.sentences) < MAX_RELATION_SENTENCES and text not in pair.sentences:
                    pair.sentences.append(text)
        return self._strongest(list(pairs.values()))

    def _strongest(self, pairs: list[_Pair]) -> list[_Pair]:
        """The ``max_relations_per_chunk`` strongest pairs, in first-linked order: the best
        of each sentence first (so the relations cover the chunk's sentences), then the
        next best of each, and so on; by sentences linking the pair, then path length."""
        strength = sorted(pairs, key=lambda p: (-p.count, p.path, p.order))
        rank: dict[int, int] = {}
        place: dict[int, int] = {}
        for p in strength:
            place[p.order] = rank.get(p.sentence, 0)
            rank[p.sentence] = place[p.order] + 1
        chosen = sorted(strength, key=lambda p: place[p.order])[: self.max_relations_per_chunk]
        return sorted(chosen, key=lambda p: p.order)


def mention_keys(mentions: list[Mention]) -> list[str]:
    """The merge key of each mention: :func:`merge_key`, then acronyms and one-word persons joined."""
    keys = [merge_key(m.name) for m in mentions]
    initials: dict[str, str] = {}
    for mention, key in zip(mentions, keys, strict=True):
        words = [
            w
            for w in re.split(r"[\s\-]+", mention.name)
            if w.lower() not in ("of", "the", "and", "for", "in")
        ]
        if len(words) >= 2 and all(w[:1].isupper() for w in words):
            initials.setdefault("".join(w[0] for w in words).lower(), key)
    full = [k for m, k in zip(mentions, keys, strict=True) if _is_person(m) and " " in k]
    latest: dict[str, str] = {}
    out: list[str] = []
    for mention, key in zip(mentions, keys, strict=True):
        if mention.name.isupper() and key in initials:
            key = initials[key]
        elif _is_person(mention) and " " in key:
            latest[key.rsplit(" ", 1)[1]] = key
        elif mention.kind == "name" and mention.label in ("PERSON", "") and " " not in key:
            owners = sorted({f for f in full if f.endswith(" " + key)})
            key = latest.get(key) or (owners[0] if len(owners) == 1 else key)
        out.append(key)
    return out


def _is_person(mention: Mention) -> bool:
    return mention.label == "PERSON"


def _prepare(text: str, nlp: Any) -> Prose:
    if not isinstance(text, str):
        raise ExtractionError(f"expected text as str, got {type(text).__name__}")
    if len(text) > nlp.max_length:
        raise ExtractionError(f"text of {len(text)} characters exceeds spaCy's limit of {nlp.max_length}")
    return prose(text.replace("\x00", " "))


def _parse(nlp: Any, found: Prose) -> Any:
    """The parsed prose, a sentence starting at each of its ``sentence_starts`` (the parser
    keeps sentence starts set before it runs)."""
    if not found.sentence_starts:
        return nlp(found.text)
    doc = nlp.make_doc(found.text)
    for offset in found.sentence_starts:
        span = doc.char_span(offset, len(found.text), alignment_mode="expand")
        token = next((t for t in span if not t.is_space), None) if span is not None else None
        if token is not None and token.i > 0:
            token.is_sent_start = True
    for _, component in nlp.pipeline:
        doc = component(doc)
    return doc


def _surface(entity: _Entity, key: str) -> str:
    """The most frequent surface form other than an acronym (the longer, then the first seen, on
    ties), among those whose own key is ``key`` when there are any ("Curie" joined to "Marie
    Curie" does not count)."""
    forms = [f for f in entity.surfaces if merge_key(f) == key] or list(entity.surfaces)
    return max(forms, key=lambda f: (not f.isupper(), entity.surfaces[f], len(f), -forms.index(f)))


def _evidence(entity: _Entity) -> dict[str, float]:
    """Own evidence averaged over the entity's mentions, plus all context evidence."""
    mentions = sum(entity.surfaces.values())
    total: defaultdict[str, float] = defaultdict(float)
    for kind, value in entity.own.items():
        total[kind] += value / mentions
    for kind, value in entity.context.items():
        total[kind] += value
    return total


def _spanning(links: list[_Link]) -> list[_Link]:
    """The links of a sentence that join all its entities with the fewest and shortest
    links: shortest first (then first listed), each kept when it joins two entities not
    yet joined (a minimum spanning forest)."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.get(name, name) != name:
            name = parent[name]
        return name

    kept: list[_Link] = []
    for link in sorted(links, key=lambda link: link[2]):
        a, b = root(link[0]), root(link[1])
        if a != b:
            parent[a] = b
            kept.append(link)
    return kept


class _Tree:
    """The dependency tree of a document as plain lists, for the paths between mentions."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.tokens = list(doc)
        self.heads = [t.head.i for t in self.tokens]
        self.conj = [t.dep_ == "conj" for t in self.tokens]
        self.content = [t.pos_ not in LINK_POS for t in self.tokens]
        self._chains: dict[int, tuple[list[int], list[bool]]] = {}
        self._roots: dict[tuple[int, int], int] = {}

    def chain(self, i: int) -> tuple[list[int], list[bool]]:
        """Token ``i`` and its ancestors, and for each whether it was reached from the one
        before by a ``conj`` arc (a coordinated word: "X and Y" attach Y as X does)."""
        found = self._chains.get(i)
        if found is None:
            nodes, coordinated, k = [i], [False], i
            while self.heads[k] != k:
                coordinated.append(self.conj[k])
                k = self.heads[k]
                nodes.append(k)
            found = self._chains[i] = (nodes, coordinated)
        return found

    def root(self, mention: Mention) -> int:
        """The index of the syntactic root of ``mention``'s tokens."""
        key = (mention.start, mention.end)
        found = self._roots.get(key)
        if found is None:
            found = self._roots[key] = self.doc[mention.start : mention.end].root.i
        return found

    def path_words(self, a: int, b: int) -> int:
        """Content words on the dependency path between tokens ``a`` and ``b``, the ends
        excluded, as is a word a coordinated word's path passes through."""
        up_a, conj_a = self.chain(a)
        up_b, conj_b = self.chain(b)
        depth = {t: n for n, t in enumerate(up_a)}
        meet = next((n for n, t in enumerate(up_b) if t in depth), None)
        if meet is None:
            return len(up_a) + len(up_b)  # not in one tree
        top = depth[up_b[meet]]
        content = self.content

        def counted(nodes: list[int], coordinated: list[bool], end: int) -> int:
            return sum(content[nodes[k]] and not coordinated[k] for k in range(1, end))

        words = counted(up_a, conj_a, top) + counted(up_b, conj_b, meet)
        lca = up_b[meet]
        if lca not in (a, b) and content[lca] and not (conj_a[top] or conj_b[meet]):
            words += 1
        return words

    def closest(self, firsts: list[Mention], seconds: list[Mention]) -> tuple[int, Mention, Mention]:
        """The shortest link between a mention of each list: the content words on its path,
        and the two mentions in text order."""
        best: tuple[int, Mention, Mention] | None = None
        for x in firsts:
            for y in seconds:
                words = self.path_words(self.root(x), self.root(y))
                if best is None or words < best[0]:
                    best = (words, x, y) if x.start <= y.start else (words, y, x)
        assert best is not None
        return best


def _between(tokens: list[Any], start: int, end: int, taken: list[bool]) -> list[str]:
    """Lemmas of the content words of ``tokens[start:end]`` outside mentions (see the module docstring)."""
    words: list[str] = []
    for token in tokens[start:end]:
        lemma = token.lemma_.lower()
        if taken[token.i] or not token.is_alpha or token.is_stop or lemma in words:
            continue
        if (token.pos_ == "VERB" and lemma not in LIGHT_VERBS) or (
            token.pos_ == "NOUN" and lemma not in GENERIC_NOUNS
        ):
            words.append(lemma)
    return words


def _main_verb(sentence: Any) -> list[str]:
    root = sentence.root
    return [root.lemma_.lower()] if root.pos_ == "VERB" and not root.is_stop else []
