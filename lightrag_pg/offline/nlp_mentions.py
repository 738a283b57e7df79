"""Entity mentions in a spaCy document, each with evidence for its entity type.

Three kinds of mention, never overlapping:

* **Code**: the tokens of code spans (:mod:`lightrag_pg.offline.prose`) are no part of
  a mention, but an inline identifier that is code-like, capitalised (not a SQL keyword)
  or not an English word is a name ("chunk_token_size", "QueryParam", "pgvector"; not
  "mix"): code words are what technical text is about, and typed Artifact, the type the
  extractor gives code-like words, since the configured types have no type for code.
* **Names**: spaCy's named entities (numeric and temporal labels skipped) and runs of
  capitalised words, joined where they touch ("Debian GNU/Linux") and taking in a
  following number ("Motorola 680x0"; a month and a number is a date, and "CPU 40.8×" a
  figure, not a name); then code-like or unknown words ("lightrag_pg", "spaCy",
  "o200k_base", "pgvector": a word with an underscore, a digit, an inner capital or an
  inner dot between small letters, or a lower-case noun that is neither in the
  lemmatizer's English word list nor two listed words run together). A sentence's first
  word alone is a name only if it is not an English word. URLs, e-mail addresses, paths,
  file names, common abbreviations and SQL keywords alone ("EXPLAIN ANALYZE") are never
  names. A name directly followed by the nouns of its phrase ending in a kind of thing
  ("LLM cache", "NLP extractor", "GNU project") takes them in, unless it names a person
  or a place. A person's name with a quoted nickname inside ('Richard Elmer "Dick"
  Humbert') is one name: the nickname and surname when the text also writes them so (a
  title "Dick Humbert"), else the other names and surname ("Richard Elmer Humbert").
* **Terms**: common-noun phrases, cut back from their head noun over
  compounding nouns, hyphenated parts and non-generic adjectives ("graphical
  package manager", "high-level keyword"; not "several packages"). A phrase of
  two or more words is a term unless its head is vague ("one", "way"); a
  single noun only when it is not generic (``GENERIC_NOUNS``) and appears at
  least twice in the text, or is defined there ("A workspace is ..."), or is
  the subject of the first sentence.

Type evidence comes in two parts. *Own* evidence, which the extractor
averages over an entity's mentions: the spaCy label (weighted by how reliable
the small model's label is), the name's head word ("Acme Robotics", "Debian
Installer"; before "of"/"in": "University of Paris"), its shape (code-like:
Artifact; an acronym: weakly Artifact; a plural: not a person), the kind noun
it took in, and for terms their head noun (``HEAD_TYPES``; a gerund: Method).
*Context* evidence, which the extractor sums: what the text says the entity is
("APT is the Advanced Package Tool", "its chief executive, Lena Holm"), the
verb it is the subject of ("Spotify bought"), a title before it ("Dr").
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._spacy_text import SKIPPED_LABELS, collapse, english_words
from .nlp_lexicon import (
    ABBREVIATIONS,
    CALENDAR_WORDS,
    GENERIC_ADJECTIVES,
    GENERIC_NOUNS,
    HEAD_TYPES,
    NAME_HEADS,
    NER_TYPES,
    NER_WEIGHTS,
    ORG_VERBS,
    PERSON_TITLES,
    PERSON_VERBS,
    SQL_KEYWORDS,
    VAGUE_HEADS,
    WEAK_HEADS,
    WORD_PREFIXES,
)
from .prose import CodeSpan

_KIND_TYPES = frozenset({"Artifact", "Data", "Method", "Content", "Organization"})
_NO_EXTENSION = frozenset({"PERSON", "GPE", "LOC", "FAC"})
_NOT_A_NAME = re.compile(
    r"://|^www\.|@\w+\.\w|^[/~.]|[<>=|{}\[\]]"
    r"|\.(?:html?|txt|gz|deb|php|py|sql|md|toml|ya?ml|jsonl?|cfg|ini|sh|csv|lock|whl|png|svg|log)\b"
)
_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|[a-z]\.[a-z]|[A-Za-z]\.\d")
_FIGURE = re.compile(r"\d,\d{3}|[×%]")
"""A number that is a figure ("1,245", "40.8×", "12%"), never part of a name."""
_SURNAME_PREFIX = re.compile(r"(?:Mc|Mac|O')[A-Z]\w+")
_NAME_PARTICLES = frozenset({"of", "in", "for"})
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,5}(?:-[A-Z0-9]{2,6})?")
_MAX_TERM_WORDS = 3
_WORD_EDGE = frozenset("\"'`()[]{},;:!?“”‘’")
_QUOTES = frozenset({'"', "“", "”", "''", "``"})


@dataclass
class Mention:
    """One mention: tokens ``start:end`` of the document, its name, kind and type evidence."""

    start: int
    end: int
    name: str
    kind: str
    label: str = ""
    own: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    context: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))


@dataclass(frozen=True, slots=True)
class CodeTokens:
    """Tokens ``start:end`` of a document that are code, not prose; ``name`` the identifier
    they hold when they are an inline code span of one identifier."""

    start: int
    end: int
    name: str = ""


def code_tokens(doc: Any, spans: Sequence[CodeSpan]) -> list[CodeTokens]:
    """The tokens of ``doc`` that each character span of code covers."""
    out = []
    for span in spans:
        tokens = doc.char_span(span.start, span.end, alignment_mode="expand")
        if tokens is not None and len(tokens):
            out.append(CodeTokens(tokens.start, tokens.end, span.name))
    return out


def find_mentions(doc: Any, code: Sequence[CodeTokens] = ()) -> list[Mention]:
    """The name and term mentions of ``doc``, in text order (see the module docstring); the
    tokens of ``code`` are no part of one, but for an identifier, which is a name."""
    finder = _Finder(doc)
    finder.code_names(code)
    finder.skip_links()
    finder.names()
    finder.code_words()
    finder.terms()
    mentions = sorted(finder.found, key=lambda m: m.start)
    for mention in mentions:
        _context_evidence(doc, mention)
    return mentions


def is_plausible_name(name: str) -> bool:
    """False for URLs, e-mail addresses, paths, file names, formulas, abbreviations, SQL
    ("EXPLAIN ANALYZE": upper-case SQL keywords only) and names with < 2 letters."""
    return (
        sum(c.isalpha() for c in name) >= 2
        and not _NOT_A_NAME.search(name)
        and name.lower() not in ABBREVIATIONS
        and not all(word in SQL_KEYWORDS for word in name.split())
    )


class _Finder:
    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.tokens = list(doc)
        self.known = english_words()
        self.taken = [False] * len(doc)
        self.numeric = [False] * len(doc)
        self.found: list[Mention] = []
        self.groups = _word_groups(self.tokens)
        self.noun_counts = Counter(t.lemma_.lower() for t in self.tokens if t.pos_ in ("NOUN", "PROPN"))
        self.first_subjects = _first_subjects(doc)
        self.inner_capitals = {t.text for t in self.tokens if t.text[:1].isupper() and not t.is_sent_start}
        self.nicknames: dict[tuple[int, int], str] = {}

    def is_word(self, text: str) -> bool:
        """True for an English word, inflected or prefixed ("searches", "unsubscribe")."""
        return _is_word(text.lower())

    def _free(self, start: int, end: int) -> bool:
        return start < end and not any(self.taken[start:end])

    def _take(self, start: int, end: int) -> None:
        self.taken[start:end] = [True] * (end - start)

    def code_names(self, code: Sequence[CodeTokens]) -> None:
        """Mark the code tokens, and take an identifier that is code-like, or capitalised and not
        a SQL keyword, or not an English word ("chunk_token_size", "QueryParam", "pgvector";
        not "mix" or "GRANT") as a name with evidence for Artifact."""
        for span in code:
            self._take(span.start, span.end)
        for span in code:
            name = span.name
            if not name or not is_plausible_name(name) or name.upper() in SQL_KEYWORDS:
                continue
            if _CODE_LIKE.search(name) or "-" in name or not name.islower() or not self.is_word(name):
                mention = Mention(span.start, span.end, name, "name")
                mention.own["Artifact"] += 2.5
                self._add(mention)

    def skip_links(self) -> None:
        """Mark URLs, e-mail addresses and paths, so that no part of them becomes a name."""
        for start, end in self.groups:
            text = _text(self.tokens, start, end)
            slashes = text.count("/")
            if _NOT_A_NAME.search(text) or (slashes and ("." in text or slashes >= 2 or text.endswith("/"))):
                self._take(start, end)

    def _add(self, mention: Mention) -> None:
        self._take(mention.start, mention.end)
        if not any(t.is_sent_start for t in self.tokens[mention.start + 1 : mention.end]):
            self.found.append(mention)  # a name never runs across sentences ("Chunking. A document")

    def names(self) -> None:
        """Named entities and capitalised runs, joined where they touch."""
        spans: list[tuple[int, int, str]] = []
        for ent in self.doc.ents:
            if ent.label_ in SKIPPED_LABELS:
                self.numeric[ent.start : ent.end] = [True] * len(ent)
            elif ent.label_ in NER_TYPES and not any(t.text in ",()[]" or t.pos_ == "CCONJ" for t in ent):
                if all(t.is_lower and self.is_word(t.text) for t in ent if t.is_alpha):
                    continue  # "keyword extraction": a term, whatever the label
                start, end = _trim_name(self.tokens, ent.start, ent.end)
                if self._free(start, end):
                    spans.append((start, end, ent.label_))
        labelled = {i: label for start, end, label in spans for i in range(start, end)}
        runs = self._capitalised_runs(set(labelled))
        merged: list[tuple[int, int, str]] = []
        for start, end in runs:
            labels = [labelled[i] for i in range(start, end) if i in labelled]
            inner = [s for s in spans if s[0] >= start and s[1] <= end]
            if labels and len(inner) > 1 and len({s[2] for s in inner}) > 1:
                merged.extend(inner)  # two differently labelled entities side by side
            else:
                merged.append((start, end, Counter(labels).most_common(1)[0][0] if labels else ""))
        covered = {i for start, end, _ in merged for i in range(start, end)}
        merged += [s for s in spans if not covered.intersection(range(s[0], s[1]))]
        for start, end, label in self._join_nicknames(sorted(merged)):
            self._add_name(start, end, label)

    def _join_nicknames(self, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
        """A person's name with a quoted nickname inside ('Richard "Dick" Humbert') as one span,
        named by :meth:`_nickname_name`."""
        doc, out, i = self.tokens, [], 0
        while i < len(spans):
            if i + 2 < len(spans):
                (s1, e1, l1), (s2, e2, l2), (s3, e3, l3) = spans[i : i + 3]
                if (
                    s2 == e1 + 1
                    and s3 == e2 + 1
                    and doc[e1].text in _QUOTES
                    and doc[e2].text in _QUOTES
                    and e2 - s2 <= 2
                    and "PERSON" in (l1, l2, l3, *(t.ent_type_ for t in doc[s1:e3]))
                ):
                    self.nicknames[(s1, e3)] = self._nickname_name(doc[s1:e1], doc[s2:e2], doc[s3:e3])
                    out.append((s1, e3, "PERSON"))
                    i += 3
                    continue
            out.append(spans[i])
            i += 1
        return out

    def _nickname_name(self, first: Any, nickname: Any, last: Any) -> str:
        """The nickname and surname ("Dick Humbert") or the first names and surname ("David
        Jones"), whichever the text also writes (its title, say), else the latter."""
        common, full = f"{_span_text(nickname)} {_span_text(last)}", f"{_span_text(first)} {_span_text(last)}"
        text = self.doc.text
        return common if common in text and full not in text else full

    def _capitalised_runs(self, ents: set[int]) -> list[tuple[int, int]]:
        """Runs of touching capitalised words (or ``ents``' tokens), plus a trailing number."""
        runs: list[list[int]] = []
        for start, end in self.groups:
            capital = self._is_capitalised(start, end) or all(i in ents for i in range(start, end))
            touching = bool(runs) and (
                runs[-1][1] == start
                or (
                    self.tokens[runs[-1][1]].tag_ == "POS"
                    and runs[-1][1] + 1 == start
                    and self._is_name_head(start, end)
                )
            )
            if capital and not any(self.taken[start:end]):
                if touching and not self.tokens[start].is_sent_start:
                    runs[-1][1] = end
                else:
                    runs.append([start, end])
            elif (
                touching
                and any(c.isdigit() for c in _text(self.tokens, start, end))
                and not _FIGURE.search(_text(self.tokens, start, end))
                and not self.taken[start]
            ):
                runs[-1][1] = end
        out = []
        for start, end in runs:
            first = self.tokens[start]
            lone = end - start == 1 or all(t.text in "-." or t.i == start for t in self.tokens[start:end])
            if lone and self._sentence_initial_word(first) and start not in ents:
                continue
            if lone and first.lower_ in CALENDAR_WORDS:
                continue
            if all(t.lower_ in CALENDAR_WORDS or t.like_num or t.is_punct for t in self.tokens[start:end]):
                continue  # a date ("July 2011", "August 20")
            out.append((start, end))
        return out

    def _is_name_head(self, start: int, end: int) -> bool:
        """A capitalised word that ends a name after a possessive ("User's Guide")."""
        return (
            end - start == 1
            and self.tokens[start].text[:1].isupper()
            and self.tokens[start].lower_ in NAME_HEADS
        )

    def _sentence_initial_word(self, token: Any) -> bool:
        """A sentence's first word that is an English word and not capitalised elsewhere in the text."""
        return token.is_sent_start and self.is_word(token.text) and token.text not in self.inner_capitals

    def _is_capitalised(self, start: int, end: int) -> bool:
        span = self.tokens[start:end]
        first, last = span[0], span[-1]
        if not first.text[:1].isupper() or (len(span) > 1 and last.pos_ == "ADJ" and last.is_lower):
            return False  # "Unix-compatible"
        if len(span) == 1:
            return first.pos_ in ("PROPN", "X") or (
                first.pos_ in ("NOUN", "ADJ", "VERB") and not self.is_word(first.text)
            )
        return True

    def _add_name(self, start: int, end: int, label: str) -> None:
        start, end = _trim_name(self.tokens, start, end)
        if not self._free(start, end):
            return
        kind = ""
        if label not in _NO_EXTENSION:
            end, kind = self._kind_extension(end)
        name = self.nicknames.get((start, end)) or _span_text(self.tokens[start:end])
        if not is_plausible_name(name):
            return
        mention = Mention(start, end, name, "name", label)
        if label:
            mention.own[NER_TYPES[label]] += NER_WEIGHTS.get(label, 1.0)
        if kind:
            mention.own[kind] += 3
        _name_evidence(self.doc[start:end], mention.own)
        self._add(mention)

    def _kind_extension(self, end: int) -> tuple[int, str]:
        """``end`` moved over the common nouns after a name when the last is a kind of thing."""
        doc, stop = self.tokens, end
        while (
            stop < len(doc)
            and not self.taken[stop]
            and doc[stop].pos_ == "NOUN"
            and doc[stop].is_lower
            and self.is_word(doc[stop].text)
        ):
            stop += 1
        if stop == end or not doc[end - 1].whitespace_:
            return end, ""
        kind = HEAD_TYPES.get(doc[stop - 1].lemma_.lower(), "")
        return (stop, kind) if kind in _KIND_TYPES else (end, "")

    def code_words(self) -> None:
        """Code-like and unknown lower-case words."""
        for start, end in self.groups:
            if self._free(start, end) and self._is_code_like(start, end):
                self._add_name(start, end, "")

    def _is_code_like(self, start: int, end: int) -> bool:
        span = self.tokens[start:end]
        text = _text(self.tokens, start, end)
        if len(span) > 1 and span[-1].pos_ == "ADJ" and span[-1].is_lower:
            return False
        if _CODE_LIKE.search(text) and not _SURNAME_PREFIX.fullmatch(text):
            return any(c.isalpha() for c in text) and not text[:1].isdigit() and not text.isupper()
        parts = [p for p in text.split("-") if p]
        if not (self.known and text.islower() and len(text) >= 4 and all(p.isalpha() for p in parts)):
            return False
        if len(parts) == 1 and (span[0].pos_ not in ("NOUN", "PROPN", "X") or _is_compound_head(span[0])):
            return False
        return any(not self.is_word(p) and len(p) >= 4 for p in parts)

    def terms(self) -> None:
        for chunk in self.doc.noun_chunks:
            root = chunk.root
            if root.pos_ not in ("NOUN", "PROPN") or self.taken[root.i] or self.numeric[root.i]:
                continue
            if root.pos_ == "PROPN" and not self._sentence_initial_word(root):
                continue
            start = _term_start(self.tokens, chunk.start, root.i, self.taken)
            span = self.tokens[start : root.i + 1]
            if not self._is_term(span):
                continue
            mention = Mention(start, root.i + 1, _term_name(span), "term")
            head = root.lemma_.lower()
            if head in HEAD_TYPES:
                mention.own[HEAD_TYPES[head]] += 2
            elif root.tag_ == "NN" and root.lower_.endswith("ing"):
                mention.own["Method"] += 1.5
            self._add(mention)

    def _is_term(self, span: Any) -> bool:
        root = span[-1]
        head = root.lemma_.lower()
        if head in VAGUE_HEADS or root.lower_ in VAGUE_HEADS or not root.is_alpha:
            return False
        if sum(t.is_alpha for t in span) >= 2:
            has_noun = any(t.pos_ in ("NOUN", "PROPN") or t.dep_ == "compound" for t in span[:-1])
            return has_noun or (head not in WEAK_HEADS and root.lower_ not in WEAK_HEADS)
        if head in GENERIC_NOUNS or root.lower_ in GENERIC_NOUNS or root.is_stop or len(head) < 3:
            return False
        if root.lower_ in CALENDAR_WORDS:
            return False
        return self.noun_counts[head] >= 2 or _is_defined(root) or root.i in self.first_subjects


@lru_cache(maxsize=1 << 16)
def _is_word(low: str) -> bool:
    """:meth:`_Finder.is_word` of a lower-case word (remembered: words recur across texts)."""
    known = english_words()
    if not known:
        return True
    forms = {low}
    for suffix, repl in (
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ing", ""),
        ("ing", "e"),
        ("ed", ""),
        ("ed", "e"),
    ):
        if low.endswith(suffix) and len(low) > len(suffix) + 2:
            forms.add(low[: -len(suffix)] + repl)
    for prefix in WORD_PREFIXES:
        forms.update(
            f[len(prefix) :] for f in list(forms) if f.startswith(prefix) and len(f) > len(prefix) + 3
        )
    if forms & known:
        return True
    return any(
        low[:i] in known and (low[i:] in known or low[i:].rstrip("s") in known)
        for i in range(3, len(low) - 2)
    )


def _is_compound_head(token: Any) -> bool:
    """True for the head noun of a compound ("source chunk ids"): part of a term, not a name."""
    return token.i > 0 and token.doc[token.i - 1].dep_ == "compound" and token.doc[token.i - 1].head == token


def _word_groups(doc: list[Any]) -> list[tuple[int, int]]:
    """Token ranges of the whitespace-separated words, without edge punctuation or a possessive.

    A line break separates words as a space does ("here." and "Alice" in "here.\n\nAlice" are
    two words); a no-break space does not ("Route\u00a012F")."""
    breaks = [t.is_space and "\n" in t.text for t in doc]
    groups: list[tuple[int, int]] = []
    start = 0
    last = len(doc) - 1
    for i, token in enumerate(doc):
        if token.whitespace_ or breaks[i] or i == last or breaks[i + 1]:
            s, e = start, i + 1
            while s < e and (doc[s].text in _WORD_EDGE or doc[s].is_space):
                s += 1
            while e > s and (
                doc[e - 1].text in _WORD_EDGE or doc[e - 1].tag_ == "POS" or doc[e - 1].is_space
            ):
                e -= 1
            while e > s and doc[e - 1].text in (".", "-") and not _is_initials(_text(doc, s, e)):
                e -= 1
            if s < e:
                groups.append((s, e))
            start = i + 1
    return groups


def _is_initials(text: str) -> bool:
    return bool(re.fullmatch(r"(?:[A-Z]\.)+[A-Z]?\.?", text))


def _trim_name(doc: list[Any], start: int, end: int) -> tuple[int, int]:
    while start < end and (
        doc[start].pos_ in ("DET", "PUNCT", "SPACE") or doc[start].lower_ in ("the", "a", "an")
    ):
        start += 1
    while end > start and (doc[end - 1].pos_ in ("PUNCT", "SPACE", "PART") or doc[end - 1].tag_ == "POS"):
        if doc[end - 1].text == ")" and any(t.text == "(" for t in doc[start:end]):
            break
        if doc[end - 1].text == "." and _is_initials(_text(doc, start, end).split()[-1]):
            break
        end -= 1
    if end - start > 1 and _FIGURE.search(_text(doc, end - 1, end)):
        end -= 1  # "CPU 40.8×": a figure, not part of the name
        while end - start > 1 and (doc[end - 1].like_num or doc[end - 1].pos_ in ("PUNCT", "SPACE")):
            end -= 1
    return start, end


def _span_text(span: Any) -> str:
    return collapse("".join(t.text + t.whitespace_ for t in span))


def _text(tokens: list[Any], start: int, end: int) -> str:
    """The text of ``tokens[start:end]``, as spaCy's ``Span.text`` gives it."""
    text = "".join(t.text_with_ws for t in tokens[start:end])
    return text[:-1] if start < end and tokens[end - 1].whitespace_ else text


def _name_evidence(span: Any, evidence: defaultdict[str, float]) -> None:
    """Evidence from the name itself: its head word and its shape."""
    words = [t for t in span if t.is_alpha or _CODE_LIKE.search(t.text)]
    if not words:
        return
    head = words[-1]
    for index, token in enumerate(words[1:-1], start=1):
        if token.lower_ in _NAME_PARTICLES:
            head = words[index - 1]
            break
    low = head.lower_
    if len(words) >= 2 and low in NAME_HEADS:
        evidence[NAME_HEADS[low]] += 3
    elif head.lemma_.lower() in HEAD_TYPES and (len(words) >= 2 or head.text.isupper()):
        evidence[HEAD_TYPES[head.lemma_.lower()]] += 1.5
    text = span.text
    if (_CODE_LIKE.search(text) and not _is_initials(text.split()[0])) or (
        text.islower() and len(words) == 1
    ):
        evidence["Artifact"] += 2.5
    elif _ACRONYM.fullmatch(text):
        evidence["Artifact"] += 1.2
    if span[-1].tag_ == "NNPS" or (len(words) == 1 and text.endswith("s") and text[:-1].isupper()):
        evidence["Person"] -= 2


def _context_evidence(doc: Any, mention: Mention) -> None:
    """Evidence from the sentence around a name: what it is said to be, what it does."""
    root = doc[mention.start : mention.end].root
    evidence = mention.context
    described = _described_as(root)
    if described is not None and not (mention.start <= described.i < mention.end):
        lemma = described.lemma_.lower()
        kind = HEAD_TYPES.get(lemma) or (
            NAME_HEADS.get(described.lower_) if described.pos_ == "PROPN" else None
        )
        if kind:
            evidence[kind] += 4
    if mention.kind != "name":
        return
    if root.dep_ == "nsubj" and root.head.pos_ == "VERB":
        verb = root.head.lemma_.lower()
        if verb in ORG_VERBS:
            evidence["Organization"] += 1.5
        elif verb in PERSON_VERBS:
            evidence["Person"] += 1
    if mention.start > 0 and doc[mention.start - 1].lower_ in PERSON_TITLES:
        evidence["Person"] += 3


def _described_as(token: Any) -> Any:
    """The noun that the text equates with ``token``: its apposition or the complement of "is"."""
    if token.dep_ == "appos" and token.head.pos_ in ("NOUN", "PROPN"):
        return token.head
    for child in token.children:
        if child.dep_ == "appos" and child.pos_ in ("NOUN", "PROPN"):
            return child
    if token.dep_ == "nsubj" and token.head.lemma_ == "be":
        for child in token.head.children:
            if child.dep_ == "attr" and child.pos_ in ("NOUN", "PROPN"):
                return child
    return None


def _is_defined(token: Any) -> bool:
    """True for the subject of "X is a/an Y" (a definition)."""
    return token.dep_ == "nsubj" and _described_as(token) is not None


def _first_subjects(doc: Any) -> set[int]:
    for sent in doc.sents:
        return {t.i for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.head == sent.root}
    return set()


def _term_start(doc: list[Any], floor: int, root: int, taken: list[bool]) -> int:
    """Where a term headed by ``root`` starts: back over nouns, hyphenated parts and specific adjectives."""
    start, words = root, 1
    while start > floor:
        prev = doc[start - 1]
        if taken[prev.i] or prev.is_space:
            break
        joined = not prev.whitespace_ and (prev.text == "-" or doc[start].text == "-")
        if (
            joined
            and (prev.is_alpha or prev.text == "-")
            and prev.pos_ not in ("ADP", "DET", "PRON", "CCONJ")
        ):
            start -= 1
            continue
        if prev.is_stop or prev.pos_ in _FUNCTION_POS:
            break
        if words >= _MAX_TERM_WORDS or not prev.is_alpha:
            break
        if (
            prev.pos_ in ("NOUN", "PROPN")
            or prev.dep_ == "compound"
            or (
                prev.lower_ not in GENERIC_ADJECTIVES
                and prev.tag_ != "VBG"
                and (prev.pos_ == "ADJ" or prev.dep_ == "amod")
            )
        ):
            start -= 1
            words += 1
        else:
            break
    while start < root and doc[start].text == "-":
        start += 1
    return start


_FUNCTION_POS = frozenset({"ADP", "DET", "PRON", "CCONJ", "SCONJ", "PART", "AUX", "NUM", "PUNCT"})


def _term_name(span: Any) -> str:
    """A term as lower-case words (acronyms kept), its last noun singular."""
    parts = []
    for token in span[:-1]:
        text = token.text if token.text.isupper() and len(token.text) > 1 else token.lower_
        parts.append(text + token.whitespace_)
    last = span[-1]
    if last.tag_ in ("NNS", "NNPS") and not last.lower_.endswith(
        ("ics", "data", "media", "species", "series", "news")
    ):
        lemma = last.lemma_.lower()
        parts.append(
            lemma[:-1] if last.tag_ == "NNPS" and lemma == last.lower_ and lemma.endswith("s") else lemma
        )
    else:
        parts.append(last.text if last.text.isupper() and len(last.text) > 1 else last.lower_)
    return collapse("".join(parts))
