"""A generated benchmark corpus and an instant scripted LLM that knows its names.

The vocabulary holds invented entity names of six types (people,
organisations, places, artifacts, concepts, events). Each document draws a
small cast from it with Zipf-like weights, so the popular names recur across
many documents and their descriptions get merged (and summarised). Documents
mix sentences naming cast members with filler sentences naming nobody.

:class:`CorpusLLM` answers LightRAG's prompts like ``lightrag_pg.testing``
does, but recognises the generated vocabulary: every vocabulary name in a
chunk becomes an entity and every pair of names in one sentence a relation.
Everything is deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from lightrag_pg.query.answer_prompts import KEYWORDS_MARKER
from lightrag_pg.testing import classify_prompt, prompt_input_text, query_from_keywords_prompt
from lightrag_pg.testing import respond as scripted_respond

D = "<|#|>"
COMPLETE = "<|COMPLETE|>"

TYPE_SHARES: tuple[tuple[str, float], ...] = (
    ("Person", 0.40),
    ("Organization", 0.20),
    ("Location", 0.17),
    ("Artifact", 0.10),
    ("Concept", 0.08),
    ("Event", 0.05),
)
CAST_SIZES: dict[str, int] = {
    "Person": 5,
    "Organization": 3,
    "Location": 3,
    "Artifact": 2,
    "Concept": 2,
    "Event": 1,
}
_SUFFIXES: dict[str, tuple[str, ...]] = {
    "Organization": ("Systems", "Institute", "Group", "Labs", "Foundation", "Holdings"),
    "Location": ("", "", "Valley", "Harbour"),
    "Artifact": ("Engine", "Protocol", "Array", "Reactor"),
    "Concept": ("Principle", "Theory", "Doctrine"),
    "Event": ("Summit", "Conference", "Accord"),
}
_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "gr",
    "kr",
    "st",
    "tr",
    "sh",
    "th",
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "th", "m")

_NAMED_TEMPLATES: tuple[str, ...] = (
    "{P} joined {O} as a senior researcher in the spring.",
    "{P} travelled to {L} to meet partners from {O}.",
    "{O} opened a new office in {L} last year.",
    "{P} designed the {A} over several months of careful work.",
    "{O} released the {A} to a wide audience.",
    "{P} and {P2} wrote a joint report on the {C}.",
    "The {E} took place in {L} and drew a large crowd.",
    "{P} gave the opening talk at the {E}.",
    "{O} applies the {C} in most of its projects.",
    "{P} has long argued in favour of the {C}.",
    "The {A} was tested in {L} before its wider release.",
    "{O} and {O2} signed a partnership agreement during the {E}.",
    "Critics of the {C} often cite the experience of {O}.",
    "{P} moved from {L} to {L2} to lead a new team.",
    "{P} still remembers the early days of the {A}.",
    "{P} declined to comment further on the matter.",
    "{O} reported steady growth in the last quarter.",
    "{L} remains an important regional hub for trade.",
)
_SLOT_TYPES = {
    "P": "Person",
    "O": "Organization",
    "L": "Location",
    "A": "Artifact",
    "C": "Concept",
    "E": "Event",
}
_SLOT = re.compile(r"\{([A-Z])(\d?)\}")
_FILLER_SUBJECTS = (
    "The committee",
    "The board",
    "A small team",
    "The research group",
    "Local officials",
    "The press office",
    "Several analysts",
    "The working group",
)
_FILLER_VERBS = (
    "reviewed",
    "discussed",
    "approved",
    "questioned",
    "summarised",
    "revisited",
    "published",
    "postponed",
)
_FILLER_OBJECTS = (
    "the annual budget",
    "a draft proposal",
    "the latest figures",
    "the safety guidelines",
    "an internal memo",
    "the project timeline",
    "the hiring plan",
    "a set of recommendations",
)
_FILLER_TAILS = (
    "after a long debate",
    "without much discussion",
    "in a closed session",
    "for the second time",
    "ahead of the deadline",
    "with some reservations",
    "",
    "",
)
_QUESTION_TEMPLATES: tuple[str, ...] = (
    "What is the relationship between {P} and {O}?",
    "What work did {P} carry out in {L}?",
    "Who worked on the {A}, and what came of it?",
    "How does {O} apply the {C} in practice?",
    "What happened at the {E}?",
    "Which partners did {O} work with in {L}?",
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_KEYWORD = re.compile(r"\b[a-z]{5,}\b")


@dataclass(frozen=True, slots=True)
class Entity:
    """One vocabulary entry: an entity name and its type."""

    name: str
    type: str


def _word(rng: random.Random, used: set[str]) -> str:
    while True:
        syllables = rng.choice((2, 2, 3))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        word = (word + rng.choice(_CODAS)).capitalize()
        if word not in used and len(word) >= 4:
            used.add(word)
            return word


def vocabulary(size: int = 300, seed: int = 0) -> list[Entity]:
    """``size`` invented entities; every name holds a word no other name has."""
    rng = random.Random(f"vocabulary:{seed}")
    used: set[str] = set()
    out: list[Entity] = []
    for kind, share in TYPE_SHARES:
        for _ in range(max(2, round(size * share))):
            if kind == "Person":
                name = f"{_word(rng, used)} {_word(rng, used)}"
            else:
                suffix = rng.choice(_SUFFIXES[kind])
                name = f"{_word(rng, used)} {suffix}".strip()
            out.append(Entity(name, kind))
    return out


def _by_type(vocab: Sequence[Entity]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for entity in vocab:
        grouped.setdefault(entity.type, []).append(entity.name)
    return grouped


def _zipf_sample(rng: random.Random, names: Sequence[str], k: int) -> list[str]:
    """``k`` distinct names, the earlier ones in ``names`` much more likely."""
    weights = [1.0 / (rank + 1) for rank in range(len(names))]
    chosen: list[str] = []
    while len(chosen) < min(k, len(names)):
        (name,) = rng.choices(names, weights)
        if name not in chosen:
            chosen.append(name)
    return chosen


def _fill(template: str, cast: dict[str, list[str]], rng: random.Random) -> str:
    picked: dict[str, str] = {}

    def slot(match: re.Match[str]) -> str:
        key = match.group(0)
        if key not in picked:
            pool = [n for n in cast[_SLOT_TYPES[match.group(1)]] if n not in picked.values()]
            picked[key] = rng.choice(pool)
        return picked[key]

    return _SLOT.sub(slot, template)


def _filler(rng: random.Random) -> str:
    tail = rng.choice(_FILLER_TAILS)
    parts = [rng.choice(_FILLER_SUBJECTS), rng.choice(_FILLER_VERBS), rng.choice(_FILLER_OBJECTS)]
    return " ".join(parts + ([tail] if tail else [])) + "."


def document(index: int, words: int = 1500, seed: int = 0, vocab: Sequence[Entity] | None = None) -> str:
    """Document ``index`` of the corpus: paragraphs of about ``words`` words in total."""
    rng = random.Random(f"document:{seed}:{index}")
    grouped = _by_type(vocab if vocab is not None else vocabulary(seed=seed))
    cast = {kind: _zipf_sample(rng, grouped[kind], max(2, CAST_SIZES[kind])) for kind in grouped}
    paragraphs: list[str] = []
    sentences: list[str] = []
    count = 0
    while count < words:
        named = rng.random() < 0.6
        sentence = _fill(rng.choice(_NAMED_TEMPLATES), cast, rng) if named else _filler(rng)
        sentences.append(sentence)
        count += len(sentence.split())
        if len(sentences) == 6:
            paragraphs.append(" ".join(sentences))
            sentences = []
    if sentences:
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def documents(
    count: int, words: int = 1500, seed: int = 0, vocab: Sequence[Entity] | None = None
) -> list[str]:
    """The first ``count`` documents of the corpus."""
    vocab = vocab if vocab is not None else vocabulary(seed=seed)
    return [document(i, words, seed, vocab) for i in range(count)]


def questions(count: int, texts: Sequence[str], vocab: Sequence[Entity], seed: int = 0) -> list[str]:
    """``count`` questions naming entities that occur in ``texts``."""
    rng = random.Random(f"questions:{seed}")
    llm = CorpusLLM(vocab)
    present = set(llm.names_in("\n".join(texts)))
    cast = {kind: [n for n in names if n in present] or names for kind, names in _by_type(vocab).items()}
    return [_fill(rng.choice(_QUESTION_TEMPLATES), cast, rng) for _ in range(count)]


class CorpusLLM:
    """An instant, deterministic LLM function that recognises a vocabulary's names.

    Call it like upstream's ``llm_model_func``; :attr:`calls` counts the calls.
    """

    def __init__(self, vocab: Sequence[Entity]) -> None:
        self.types = {e.name: e.type for e in vocab}
        alternatives = sorted(self.types, key=len, reverse=True)
        self._pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, alternatives)) + r")\b")
        self.calls = 0

    def names_in(self, text: str) -> list[str]:
        """Vocabulary names in ``text``, in order of first appearance."""
        return list(dict.fromkeys(self._pattern.findall(text)))

    def extraction_answer(self, text: str) -> str:
        """Entity lines for every name, relation lines for every pair in one sentence."""
        sentences = [s.strip() for s in _SENTENCE.findall(text)]
        lines: list[str] = []
        first: dict[str, str] = {}
        pairs: dict[tuple[str, str], str] = {}
        for sentence in sentences:
            names = self.names_in(sentence)
            for name in names:
                first.setdefault(name, sentence)
            for a, b in combinations(names, 2):
                pairs.setdefault((a, b), sentence)
        for name, sentence in first.items():
            lines.append(f"entity{D}{name}{D}{self.types[name]}{D}{name} is mentioned: {sentence}")
        for (a, b), sentence in pairs.items():
            verb = next(iter(_KEYWORD.findall(sentence)), "mention")
            lines.append(f"relation{D}{a}{D}{b}{D}{verb}, co-occurrence{D}{sentence}")
        return "\n".join([*lines, COMPLETE])

    def keywords_answer(self, query: str) -> str:
        """Keyword JSON: names as low-level keywords, long words as high-level ones."""
        high = _KEYWORD.findall(query)[:3]
        return json.dumps({"high_level_keywords": high, "low_level_keywords": self.names_in(query)})

    def respond(self, prompt: str, system_prompt: str | None = None) -> str:
        """The scripted answer to one user prompt."""
        kind = classify_prompt(prompt)
        if kind == "extraction":
            return self.extraction_answer(prompt_input_text(prompt) or "")
        if kind == "gleaning":
            return COMPLETE
        if prompt.startswith(KEYWORDS_MARKER):
            return self.keywords_answer(query_from_keywords_prompt(prompt) or "")
        return scripted_respond(prompt, system_prompt)

    async def __call__(
        self,
        prompt: str,
        system_prompt: str | None = None,
        history_messages: Any = None,
        **kwargs: Any,
    ) -> str:
        self.calls += 1
        return self.respond(prompt, system_prompt)
