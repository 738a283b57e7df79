"""Tolerant parser for the LLM's entity/relation extraction output.

Accepted input (see :mod:`lightrag_pg.index.extraction_prompts` for the format asked for):

* Records one per line, or separated by the legacy ``##`` record delimiter.
* Fields separated by ``<|#|>``; the legacy ``<|>`` and common corruptions
  (``<||>``, ``<|##|>``, ``<#>``, ``<|#>``, ``<#|>``) and full-width
  ``＜｜#｜＞`` variants are read as the same delimiter.
* Record kinds ``entity``, ``relation`` and legacy ``relationship``, in any
  case, optionally wrapped as ``("entity"<|>"Name"<|>...)`` and preceded by a
  list marker (``-``, ``*``, ``1.``). Legacy ``content_keywords`` records are
  ignored.
* ``entity<|#|>name<|#|>type<|#|>description``.
* ``relation<|#|>source<|#|>target<|#|>keywords<|#|>description``, optionally
  with a trailing numeric strength that becomes the weight (default 1.0). A
  6-field ``relationship`` record uses the legacy order
  ``source, target, description, keywords, strength``. A strength that is not
  finite or not positive (``nan``, ``inf``, ``-5``, ``0``) gives the default
  weight 1.0; one above :data:`MAX_RELATION_WEIGHT` (1e6) is cut to it, so
  that summed weights stay far from any numeric limit downstream. Either case
  is logged as a warning; the relation is kept.
* Parsing stops at ``<|COMPLETE|>`` (which may be missing); markdown fence
  lines are skipped.

A line that looks like a record (it contains the delimiter or starts with a
record kind) but cannot be used is dropped, logged as a warning and counted in
:attr:`Extraction.dropped_lines`: wrong field count (e.g. a truncated last
line), unknown kind, empty name, entity with an empty description, or a
self-relation. Other text (chatter such as "Here are the entities:") is
ignored without counting.

Normalisation:

* Names keep their case. Control characters (NUL included) and zero-width
  characters are removed, a lone surrogate becomes U+FFFD, whitespace runs
  collapse to one space, and a
  wrapping pair of quotes or brackets is removed when the inner text contains
  neither character of the pair. Names are cut to ``max_name_length``
  characters. Quotes and ``$$`` inside values are data and kept verbatim.
* Entity types: a type matching one of ``entity_types`` ignoring case, spaces,
  ``_`` and ``-`` takes that spelling (``"natural object"`` ->
  ``"NaturalObject"``); any other type has its spaces removed and is
  capitalised (``"GEO"`` -> ``"Geo"``); an empty type or one containing
  characters other than letters, digits, ``_-&.`` becomes ``"UNKNOWN"``.
* Keywords are split on ``,`` (also full-width ``，``, ``、`` and ``;``),
  stripped, de-duplicated ignoring case and joined with ``", "``.
* Descriptions are cleaned like names and cut to ``max_description_length``.
* A relation whose source and target are equal ignoring case is dropped.
  Duplicate records are kept; merging happens later.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from ..config import DEFAULT_ENTITY_TYPES
from ..textclean import scrub_text
from ..types import MAX_MALFORMED, MAX_MALFORMED_CHARS, ExtractedEntity, ExtractedRelation, Extraction
from .extraction_prompts import TUPLE_DELIMITER

__all__ = ["MAX_RELATION_WEIGHT", "UNKNOWN_TYPE", "is_complete", "merge_gleaning", "parse_extraction"]

logger = logging.getLogger(__name__)

UNKNOWN_TYPE = "UNKNOWN"
DEFAULT_WEIGHT = 1.0
MAX_RELATION_WEIGHT = 1e6
"""Largest weight one extracted relation may carry; larger strengths are cut to it."""

SELF_RELATION = "self-relation"
_DELIMITER_RE = re.compile(r"[<＜](?:[|｜]{1,2}#{0,2}[|｜]{0,2}|[|｜]?#{1,2}[|｜]?)[>＞]")
_COMPLETION_RE = re.compile(r"[<＜][|｜]?\s*COMPLETE\s*[|｜]?[>＞]", re.IGNORECASE)
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_RECORD_SPLIT_RE = re.compile(
    r"##(?=\s*(?:$|[(\"'“]|(?:entity|relation|relationship|content_keywords)\b))", re.IGNORECASE
)
_LIST_MARKER_RE = re.compile(r"^(?:[-*•]\s+|\d{1,3}[.)]\s+)")
_KIND_PREFIX_RE = re.compile(r"^[(\"'“]*(entity|relation|relationship)\b", re.IGNORECASE)
_KEYWORD_SEP_RE = re.compile(r"[，、;；]")
_TYPE_KEY_RE = re.compile(r"[\s_\-]+")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)
_CONTROL = {c: " " for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]}
_PAIRS = (
    ('"', '"'),
    ("'", "'"),
    ("“", "”"),
    ("‘", "’"),
    ("`", "`"),
    ("(", ")"),
    ("[", "]"),
    ("<", ">"),
    ("「", "」"),
    ("**", "**"),
)

T = TypeVar("T", ExtractedEntity, ExtractedRelation)


def parse_extraction(
    output: str,
    *,
    chunk_id: str,
    file_path: str,
    max_name_length: int = 256,
    max_description_length: int = 10_000,
    entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
) -> Extraction:
    """Parse one LLM extraction answer for chunk ``chunk_id`` into records.

    Never raises on malformed output: unusable record lines are dropped and
    counted in the result's ``dropped_lines``. See the module docstring for
    the accepted formats and the normalisation rules.
    """
    canonical_types = {_TYPE_KEY_RE.sub("", t).casefold(): t for t in entity_types}
    parser = _LineParser(chunk_id, file_path, max_name_length, max_description_length, canonical_types)
    completion = _COMPLETION_RE.search(output)
    if completion:
        output = output[: completion.start()]
    for line in output.splitlines():
        if _FENCE_RE.match(line):
            continue
        for record in _RECORD_SPLIT_RE.split(_DELIMITER_RE.sub(TUPLE_DELIMITER, line)):
            parser.feed(record)
    return Extraction(
        tuple(parser.entities), tuple(parser.relations), parser.dropped, tuple(parser.malformed)
    )


def is_complete(output: str) -> bool:
    """Whether an extraction answer ends its records with the completion line (one that
    lacks it was probably cut off)."""
    return _COMPLETION_RE.search(output) is not None


def merge_gleaning(first: Extraction, second: Extraction) -> Extraction:
    """Merge a gleaning pass ``second`` into the first pass ``first``.

    As upstream: an entity (by name) or relation (by unordered endpoint pair)
    found in both passes keeps the first pass's records unless the gleaning
    records carry a longer description, in which case they replace them in
    place; records only in ``second`` are appended. Dropped-line counts add up; the
    malformed lines are the gleaning pass's (it was asked to correct the first pass's).
    """
    entities = _merge(first.entities, second.entities, lambda e: e.name)
    relations = _merge(first.relations, second.relations, lambda r: _pair(r.src, r.tgt))
    return Extraction(entities, relations, first.dropped_lines + second.dropped_lines, second.malformed)


class _LineParser:
    def __init__(
        self,
        chunk_id: str,
        file_path: str,
        max_name: int,
        max_desc: int,
        canonical_types: dict[str, str],
    ) -> None:
        self.chunk_id = chunk_id
        self.file_path = file_path
        self.max_name = max_name
        self.max_desc = max_desc
        self.canonical_types = canonical_types
        self.entities: list[ExtractedEntity] = []
        self.relations: list[ExtractedRelation] = []
        self.dropped = 0
        self.malformed: list[str] = []

    def feed(self, record: str) -> None:
        text = _LIST_MARKER_RE.sub("", record.strip()).strip()
        if text.startswith("("):
            text = text[1:].rstrip()
            if text.endswith(")"):
                text = text[:-1]
        if TUPLE_DELIMITER not in text:
            if _KIND_PREFIX_RE.match(text):
                self._drop(record, "no field delimiter")
            elif text:
                logger.debug("chunk %s: ignored non-record text %r", self.chunk_id, text[:200])
            return
        fields = text.split(TUPLE_DELIMITER)
        kind = _clean(fields[0]).casefold()
        if kind == "content_keywords":
            return
        if kind == "entity":
            problem = self._entity(_trim(fields, 4))
        elif kind in ("relation", "relationship"):
            problem = self._relation(_trim(fields, 5), kind)
        else:
            problem = f"unknown record kind {kind[:40]!r}"
        if problem:
            self._drop(record, problem, malformed=problem != SELF_RELATION)

    def _entity(self, fields: list[str]) -> str | None:
        if len(fields) != 4:
            return f"entity has {len(fields) - 1} fields, expected 3"
        name = self._name(fields[1])
        if not name:
            return "empty entity name"
        description = _clean(fields[3], self.max_desc)
        if not description:
            return "empty entity description"
        entity = ExtractedEntity(
            name=name,
            entity_type=self._type(fields[2]),
            description=description,
            chunk_id=self.chunk_id,
            file_path=self.file_path,
        )
        self.entities.append(entity)
        return None

    def _relation(self, fields: list[str], kind: str) -> str | None:
        weight = DEFAULT_WEIGHT
        if len(fields) == 6:
            value = _number(fields[5])
            if value is None:
                return "relation has 5 fields and the last is not a number"
            weight = self._weight(value)
            if kind == "relationship":
                fields = [fields[0], fields[1], fields[2], fields[4], fields[3]]
        if len(fields) not in (5, 6):
            return f"relation has {len(fields) - 1} fields, expected 4"
        src, tgt = self._name(fields[1]), self._name(fields[2])
        if not src or not tgt:
            return "empty relation endpoint"
        if src.casefold() == tgt.casefold():
            return SELF_RELATION
        relation = ExtractedRelation(
            src=src,
            tgt=tgt,
            keywords=_keywords(fields[3], self.max_desc),
            description=_clean(fields[4], self.max_desc),
            weight=weight,
            chunk_id=self.chunk_id,
            file_path=self.file_path,
        )
        self.relations.append(relation)
        return None

    def _weight(self, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            weight = DEFAULT_WEIGHT
        elif value > MAX_RELATION_WEIGHT:
            weight = MAX_RELATION_WEIGHT
        else:
            return value
        logger.warning("chunk %s: relation strength %r replaced by %r", self.chunk_id, value, weight)
        return weight

    def _name(self, raw: str) -> str:
        return _clean(raw, self.max_name)

    def _type(self, raw: str) -> str:
        value = _clean(raw, self.max_name)
        canonical = self.canonical_types.get(_TYPE_KEY_RE.sub("", value).casefold())
        if canonical:
            return canonical
        compact = "".join(value.split())
        if not compact or not all(c.isalnum() or c in "_-&." for c in compact):
            return UNKNOWN_TYPE
        return compact[:1].upper() + compact[1:].lower()

    def _drop(self, record: str, reason: str, *, malformed: bool = True) -> None:
        """Count a dropped line; a malformed one (not a self-relation, which is well formed)
        is kept for a gleaning pass to correct."""
        self.dropped += 1
        line = record.strip()
        logger.warning("chunk %s: dropped extraction line (%s): %r", self.chunk_id, reason, line[:200])
        if malformed and len(self.malformed) < MAX_MALFORMED:
            self.malformed.append(" ".join(line.split())[:MAX_MALFORMED_CHARS])


def _clean(raw: str, limit: int | None = None) -> str:
    text = " ".join(scrub_text(raw).translate(_ZERO_WIDTH).translate(_CONTROL).split())
    changed = True
    while changed and text:
        changed = False
        for left, right in _PAIRS:
            inner = text[len(left) : -len(right)]
            wrapped = len(text) >= len(left) + len(right) and text.startswith(left)
            if wrapped and text.endswith(right) and left not in inner and right not in inner:
                text, changed = inner.strip(), True
                break
    if (text[:1] == '"' and text.count('"') == 1) or (text[:1] == "“" and "”" not in text):
        text = text[1:].strip()
    if (text[-1:] == '"' and text.count('"') == 1) or (text[-1:] == "”" and "“" not in text):
        text = text[:-1].strip()
    if limit is not None and len(text) > limit:
        text = text[:limit].rstrip()
    return text


def _keywords(raw: str, limit: int) -> str:
    seen: set[str] = set()
    words: list[str] = []
    for part in _KEYWORD_SEP_RE.sub(",", _clean(raw)).split(","):
        word = _clean(part)
        if word and word.casefold() not in seen:
            seen.add(word.casefold())
            words.append(word)
    return ", ".join(words)[:limit].rstrip(", ")


def _number(raw: str) -> float | None:
    try:
        return float(_clean(raw))
    except ValueError:
        return None


def _trim(fields: list[str], expected: int) -> list[str]:
    """Drop empty trailing fields left by a trailing delimiter."""
    while len(fields) > expected and not fields[-1].strip():
        fields = fields[:-1]
    return fields


def _pair(src: str, tgt: str) -> tuple[str, str]:
    return (src, tgt) if src <= tgt else (tgt, src)


def _merge(first: Sequence[T], second: Sequence[T], key: Callable[[T], Hashable]) -> tuple[T, ...]:
    def groups(items: Sequence[T]) -> dict[Hashable, list[T]]:
        grouped: dict[Hashable, list[T]] = {}
        for item in items:
            grouped.setdefault(key(item), []).append(item)
        return grouped

    def longest(items: list[T]) -> int:
        return max(len(item.description) for item in items)

    old, new = groups(first), groups(second)
    merged: list[T] = []
    for k, items in old.items():
        better = new.get(k)
        merged.extend(better if better and longest(better) > longest(items) else items)
    for k, items in new.items():
        if k not in old:
            merged.extend(items)
    return tuple(merged)
