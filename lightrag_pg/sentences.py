"""Sentences of plain or Markdown text: where they end, and their spans.

One splitter for every layer: the query layer cuts descriptions at a sentence
end, the command line shows whole sentences around a match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Sentence", "sentence_ends", "split_sentences"]

_BLOCK = re.compile(r"[ \t]*#[^\n]*|[^\n]+(?:\n(?![ \t]*\n|[ \t]*#)[^\n]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|St|No)|\b[A-Z])\.$")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a text: its offsets, its text on one line, and its paragraph."""

    start: int
    end: int
    text: str
    paragraph: int
    heading: bool = False


def sentence_ends(text: str) -> list[tuple[int, int]]:
    """Where the sentences of ``text`` end: for each, the offset just after its closing mark
    and the offset where the next one starts (after any closing quote or bracket and the
    whitespace).

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace, except after a
    common abbreviation or an initial. The end of ``text`` is not counted.
    """
    ends: list[tuple[int, int]] = []
    start = 0
    for mark in _SENTENCE_END.finditer(text):
        if _ABBREVIATION.search(text[start : mark.start()]):
            continue
        ends.append((mark.start(), mark.end()))
        start = mark.end()
    return ends


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text``; a Markdown heading line is a sentence (and paragraph) of its own.

    Paragraphs are separated by blank lines; sentences end as :func:`sentence_ends` says.
    """
    found: list[Sentence] = []
    blocks = [b for b in _BLOCK.finditer(text) if b.group().strip()]
    for paragraph, block in enumerate(blocks):
        base = block.start()
        raw = block.group()
        if raw.lstrip().startswith("#"):
            found.append(Sentence(base, block.end(), _one_line(raw), paragraph, heading=True))
            continue
        start = 0
        for end, next_start in sentence_ends(raw):
            found.append(Sentence(base + start, base + end, _one_line(raw[start:end]), paragraph))
            start = next_start
        if raw[start:].strip():
            found.append(Sentence(base + start, block.end(), _one_line(raw[start:]), paragraph))
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split())
