"""Parsing the keyword-extraction answer and deciding which searches to run."""

from __future__ import annotations

import ast
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..textclean import scrub_text
from .param import QueryParam

logger = logging.getLogger(__name__)

KG_MODES: tuple[str, ...] = ("local", "global", "hybrid", "mix")
SHORT_QUERY_CHARS = 50
"""Upstream: a query shorter than this with no keywords becomes its own keyword."""

_HL_KEYS = {"highlevelkeywords", "highlevelkeyword", "highlevel", "hlkeywords"}
_LL_KEYS = {"lowlevelkeywords", "lowlevelkeyword", "lowlevel", "llkeywords"}
_THINK_OPEN = re.compile("<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile("</think>", re.IGNORECASE)
_MAX_UNWRAP = 3
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_CLOSERS = {"{": "}", "[": "]"}


def parse_keywords(text: str) -> tuple[list[str], list[str]]:
    """Return ``(high_level, low_level)`` keywords from an LLM answer; never raises.

    Tolerates ``<think>`` blocks, code fences, prose around the JSON object,
    single quotes, trailing commas, a missing closing brace, an object wrapped
    in extra braces (``{{...}}``), key spelling variants (``"high_level"``,
    ``"High-level keywords"``) and a bare string instead of a list. Keywords
    are non-empty strings: list items that are not strings or numbers are
    skipped; NUL and lone surrogates are replaced (see
    :func:`~lightrag_pg.textclean.scrub_text`); whitespace is collapsed and
    keywords are de-duplicated case-insensitively (first spelling wins).
    Anything unparseable gives ``([], [])`` and a logged warning.
    """
    if not isinstance(text, str) or not text.strip():
        logger.warning("keyword extraction returned an empty answer")
        return [], []
    data = _find_keyword_object(_strip_think(scrub_text(text)))
    if data is None:
        logger.warning("could not parse keywords from LLM answer: %.200r", text)
        return [], []
    hl: Any = None
    ll: Any = None
    for key, value in data.items():
        norm = _key(key)
        if norm in _HL_KEYS and hl is None:
            hl = value
        elif norm in _LL_KEYS and ll is None:
            ll = value
    return _clean_list(hl), _clean_list(ll)


@dataclass(frozen=True, slots=True)
class KeywordPlan:
    """What to search for one query, after upstream's empty-keyword rules.

    ``fail`` means "answer with the fail response without searching".
    ``use_local`` searches entities with ``ll_query``; ``use_global`` searches
    relations with ``hl_query``; ``use_vector`` searches chunks with the query.
    """

    hl_keywords: tuple[str, ...]
    ll_keywords: tuple[str, ...]
    use_local: bool
    use_global: bool
    use_vector: bool
    fail: bool
    warnings: tuple[str, ...] = ()

    @property
    def hl_query(self) -> str:
        """The text embedded for the relation search (upstream joins with ", ")."""
        return ", ".join(self.hl_keywords)

    @property
    def ll_query(self) -> str:
        """The text embedded for the entity search (upstream joins with ", ")."""
        return ", ".join(self.ll_keywords)


def predefined_keywords(param: QueryParam) -> tuple[list[str], list[str]] | None:
    """Keywords given by the caller, which skip LLM extraction (as upstream)."""
    if param.hl_keywords or param.ll_keywords:
        return list(param.hl_keywords), list(param.ll_keywords)
    return None


def needs_keywords(mode: str) -> bool:
    """Whether ``mode`` searches the knowledge graph and so needs keywords."""
    return mode in KG_MODES


def resolve_keywords(hl_keywords: list[str], ll_keywords: list[str], *, mode: str, query: str) -> KeywordPlan:
    """Apply upstream ``kg_query``'s empty-keyword rules and pick the searches.

    * ``ll`` empty in local/hybrid/mix, or ``hl`` empty in global/hybrid/mix:
      warn and carry on.
    * both empty: a query shorter than 50 characters becomes the single
      low-level keyword; a longer one fails (fail response, no search).
    * searches, as upstream ``_perform_kg_search``: ``local`` with low-level
      keywords runs only the entity search; ``global`` with high-level
      keywords runs only the relation search; every other case (hybrid, mix,
      and local/global missing their own side) runs the entity search if
      there are low-level keywords and the relation search if there are
      high-level ones. ``mix`` adds the chunk vector search.
    * ``naive`` runs only the chunk search and ``bypass`` nothing; neither
      needs keywords. An empty query always fails.
    """
    hl = tuple(hl_keywords)
    ll = tuple(ll_keywords)
    if not query or not query.strip():
        return KeywordPlan(hl, ll, False, False, False, True, ("query is empty",))
    if not needs_keywords(mode):
        return KeywordPlan(hl, ll, False, False, mode == "naive", False)
    warnings: list[str] = []
    if not ll and mode in ("local", "hybrid", "mix"):
        warnings.append("low_level_keywords is empty")
    if not hl and mode in ("global", "hybrid", "mix"):
        warnings.append("high_level_keywords is empty")
    if not hl and not ll:
        if len(query) < SHORT_QUERY_CHARS:
            warnings.append(f"Forced low_level_keywords to origin query: {query}")
            ll = (query,)
        else:
            for message in warnings:
                logger.info(message)
            return KeywordPlan(hl, ll, False, False, False, True, tuple(warnings))
    for message in warnings:
        logger.info(message)
    if mode == "local" and ll:
        use_local, use_global = True, False
    elif mode == "global" and hl:
        use_local, use_global = False, True
    else:
        use_local, use_global = bool(ll), bool(hl)
    return KeywordPlan(hl, ll, use_local, use_global, mode == "mix", False, tuple(warnings))


def _clean_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    result: list[str] = []
    seen: set[str] = set()
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            continue
        keyword = " ".join(scrub_text(str(item)).split())
        if keyword and keyword.casefold() not in seen:
            seen.add(keyword.casefold())
            result.append(keyword)
    return result


def _strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` blocks, then anything up to a stray ``</think>``."""
    pieces: list[str] = []
    pos = 0
    while (start := _THINK_OPEN.search(text, pos)) and (end := _THINK_CLOSE.search(text, start.end())):
        pieces.append(text[pos : start.start()])
        pos = end.end()
    pieces.append(text[pos:])
    cleaned = "".join(pieces)
    closes = list(_THINK_CLOSE.finditer(cleaned))
    return cleaned[closes[-1].end() :] if closes else cleaned


def _key(key: object) -> str:
    return re.sub(r"[^a-z]", "", key.lower()) if isinstance(key, str) else ""


def _find_keyword_object(text: str) -> dict[str, Any] | None:
    first_dict: dict[str, Any] | None = None
    for data in _parsed_objects(text, _MAX_UNWRAP):
        found = _with_keyword_keys(data, _MAX_UNWRAP)
        if found is not None:
            return found
        if first_dict is None:
            first_dict = data
    return first_dict


def _with_keyword_keys(value: Any, depth: int) -> dict[str, Any] | None:
    """``value``, or the first dict nested in it at most ``depth`` levels down, with a keyword key."""
    if isinstance(value, dict):
        if {_key(k) for k in value} & (_HL_KEYS | _LL_KEYS):
            return value
        children: Any = value.values()
    elif isinstance(value, (list, tuple)):
        children = value
    else:
        return None
    if depth > 0:
        for child in children:
            found = _with_keyword_keys(child, depth - 1)
            if found is not None:
                return found
    return None


def _parsed_objects(text: str, unwrap: int) -> Iterator[dict[str, Any]]:
    """Dicts parsed from the ``{...}`` spans of ``text``.

    A span that is not a dict (``{{...}}`` reads as a set, or fails) is
    searched again without its first brace, at most ``unwrap`` levels deep.
    """
    for candidate in _json_candidates(text):
        data = _load_lenient(candidate)
        if isinstance(data, dict):
            yield data
        elif unwrap > 0:
            yield from _parsed_objects(candidate[1:], unwrap - 1)


def _json_candidates(text: str) -> list[str]:
    """Balanced ``{...}`` spans in order; an unclosed last one is closed."""
    candidates: list[str] = []
    start = text.find("{")
    while start != -1:
        end, closers = _scan_object(text, start)
        if end is None:
            candidates.append(text[start:].rstrip().rstrip("`").rstrip() + closers)
            break
        candidates.append(text[start : end + 1])
        start = text.find("{", end + 1)
    return candidates


def _scan_object(text: str, start: int) -> tuple[int | None, str]:
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "}]" and stack:
            stack.pop()
            if not stack:
                return index, ""
    return None, ((quote or "") + "".join(reversed(stack)))


def _load_lenient(candidate: str) -> Any:
    attempts = [candidate, _TRAILING_COMMA.sub(r"\1", candidate)]
    for attempt in attempts:
        try:
            return json.loads(attempt, strict=False)
        except (ValueError, RecursionError):
            pass
    python_like = re.sub(r"\btrue\b", "True", attempts[1])
    python_like = re.sub(r"\bfalse\b", "False", python_like)
    python_like = re.sub(r"\bnull\b", "None", python_like)
    try:
        return ast.literal_eval(python_like)
    except Exception:  # arbitrary text: SyntaxError, TypeError (unhashable), RecursionError, ...
        return None
