"""Source passages for a reader: whole sentences around the ones that match a question.

A retrieved chunk is a token window, so it usually starts and ends in the
middle of a sentence. :func:`sentences_of_chunk` finds the chunk in its
document and returns the whole sentences it touches (without the document,
:func:`whole_sentences` keeps those of the chunk that are not cut at its
edges); :func:`passage` keeps the best-scoring sentences with a neighbour on
each side, within their paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..sentences import Sentence, split_sentences

_CLOSED = re.compile(r"[.!?:;][\"')\]]*$")


def locate(chunk: str, document: str) -> tuple[int, int] | None:
    """Where ``chunk`` lies in ``document``, whitespace-insensitively; None when it is not there."""
    words = chunk.split()
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), document)
    return (found.start(), found.end()) if found else None


def sentences_of_chunk(chunk: str, document: str | None) -> list[Sentence]:
    """The whole sentences of ``document`` that ``chunk`` touches (those cut at the chunk's edges
    included); the chunk's own sentences when the document is unknown or does not contain it."""
    span = locate(chunk, document) if document else None
    if document is None or span is None:
        return split_sentences(chunk)
    start, end = span
    return [s for s in split_sentences(document) if s.end > start and s.start < end]


def whole_sentences(chunk: str, starts_document: bool) -> list[Sentence]:
    """The sentences of ``chunk`` not cut at its edges: the first is dropped unless the chunk
    starts its document (a later chunk starts inside a sentence, or in its overlap with the
    one before), the last unless it ends with a closing mark (or is a heading)."""
    sentences = split_sentences(chunk)
    if not starts_document and sentences and not sentences[0].heading:
        sentences = sentences[1:]
    if sentences and not sentences[-1].heading and not _CLOSED.search(sentences[-1].text):
        sentences = sentences[:-1]
    return sentences


@dataclass(frozen=True, slots=True)
class Passage:
    """Consecutive sentences of one paragraph; ``marked`` are the indexes of the matching ones,
    ``cut_before``/``cut_after`` say whether the paragraph goes on beyond them."""

    sentences: tuple[str, ...]
    marked: frozenset[int]
    cut_before: bool
    cut_after: bool


def passage(
    sentences: Sequence[Sentence], scores: Sequence[float], *, margin: float = 0.05, max_marked: int = 2
) -> Passage | None:
    """The best-scoring sentence (and up to ``max_marked - 1`` others of its paragraph within
    ``margin`` of it), with one neighbour on each side; headings are never chosen."""
    candidates = [i for i, s in enumerate(sentences) if not s.heading]
    if not candidates:
        return None
    best = max(candidates, key=lambda i: (scores[i], -i))
    paragraph = [i for i in candidates if sentences[i].paragraph == sentences[best].paragraph]
    close = sorted(
        (i for i in paragraph if scores[i] >= scores[best] - margin), key=lambda i: (-scores[i], i)
    )
    marked = sorted(close[:max_marked])
    first = max(marked[0] - 1, paragraph[0])
    last = min(marked[-1] + 1, paragraph[-1])
    if last - first + 1 > len(marked) + 2:  # two distant matches: keep them and what lies between
        first, last = marked[0], marked[-1]
    chosen = [i for i in paragraph if first <= i <= last]
    return Passage(
        sentences=tuple(sentences[i].text for i in chosen),
        marked=frozenset(chosen.index(i) for i in marked),
        cut_before=first > paragraph[0],
        cut_after=last < paragraph[-1],
    )
