"""Query parameters, with upstream LightRAG's names and defaults."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from ..config import Settings, check_cosine_threshold
from ..errors import InvalidInput
from ..textclean import scrub_text

QueryMode = Literal["local", "global", "hybrid", "naive", "mix", "bypass"]
QUERY_MODES: tuple[str, ...] = ("local", "global", "hybrid", "naive", "mix", "bypass")
CHUNK_PICK_METHODS: tuple[str, ...] = ("VECTOR", "WEIGHT")
HISTORY_ROLES: tuple[str, ...] = ("system", "user", "assistant")

MAX_TOP_K = 10_000
"""The most entities, relations or chunks one search may ask for."""
MAX_TOKENS = 1_000_000
"""The largest token budget of a context."""
MAX_RELATED_CHUNKS = 1_000
"""The most chunks picked behind one entity or relation."""

BOUNDS: dict[str, int] = {
    "top_k": MAX_TOP_K,
    "chunk_top_k": MAX_TOP_K,
    "max_entity_tokens": MAX_TOKENS,
    "max_relation_tokens": MAX_TOKENS,
    "max_total_tokens": MAX_TOKENS,
}
"""The positive integer fields and their largest values."""
_BOOLS = (
    "only_need_context",
    "only_need_prompt",
    "stream",
    "enable_rerank",
    "include_references",
    "lexical",
    "pagerank",
)


@dataclass
class QueryParam:
    """How one query is answered.

    ``cosine_threshold``, ``kg_chunk_pick_method`` and ``related_chunk_number``
    default to ``None``, meaning "use the workspace setting"; call
    :meth:`resolved` to fill them in. Invalid values raise
    :class:`~lightrag_pg.errors.InvalidInput` at construction time.
    """

    mode: QueryMode = "mix"
    only_need_context: bool = False
    only_need_prompt: bool = False
    response_type: str = "Multiple Paragraphs"
    stream: bool = False
    top_k: int = 40
    chunk_top_k: int = 20
    max_entity_tokens: int = 6000
    max_relation_tokens: int = 8000
    max_total_tokens: int = 30000
    hl_keywords: list[str] = field(default_factory=list)
    ll_keywords: list[str] = field(default_factory=list)
    conversation_history: list[dict[str, str]] = field(default_factory=list)
    user_prompt: str | None = None
    enable_rerank: bool = True
    include_references: bool = True
    cosine_threshold: float | None = None
    kg_chunk_pick_method: Literal["VECTOR", "WEIGHT"] | None = None
    related_chunk_number: int | None = None
    lexical: bool = True
    """Fuse lexical search (BM25 or full text) with the vector searches: chunks in naive
    and mix, entities in the graph modes, and the entities the question names. Mix then
    fuses all its chunk lists (vector, lexical, picks behind the kept entities and
    relations) by reciprocal rank instead of merging them round-robin."""
    pagerank: bool = False
    """Rank the graph's chunks by a personalized PageRank over the entity–chunk graph,
    seeded from the question's entities and its best chunks, in place of the chunks
    picked behind the kept entities and relations (local, hybrid and mix)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`InvalidInput` if any field is out of range or mistyped."""
        if self.mode not in QUERY_MODES:
            raise InvalidInput(f"mode must be one of {', '.join(QUERY_MODES)}; got {self.mode!r}")
        for name, high in BOUNDS.items():
            _check_positive_int(name, getattr(self, name), high)
        if self.related_chunk_number is not None:
            _check_positive_int("related_chunk_number", self.related_chunk_number, MAX_RELATED_CHUNKS)
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.response_type, str) or not self.response_type.strip():
            raise InvalidInput("response_type must be a non-empty string")
        if self.user_prompt is not None and not isinstance(self.user_prompt, str):
            raise InvalidInput("user_prompt must be a string or None")
        if self.cosine_threshold is not None:
            check_cosine_threshold(self.cosine_threshold, InvalidInput)
        if self.kg_chunk_pick_method not in (None, *CHUNK_PICK_METHODS):
            raise InvalidInput(
                f"kg_chunk_pick_method must be 'VECTOR', 'WEIGHT' or None; got {self.kg_chunk_pick_method!r}"
            )
        self.hl_keywords = _check_keywords("hl_keywords", self.hl_keywords)
        self.ll_keywords = _check_keywords("ll_keywords", self.ll_keywords)
        _check_history(self.conversation_history)

    def resolved(self, settings: Settings) -> QueryParam:
        """Return a copy with every "workspace default" (``None``) field filled in."""
        return dataclasses.replace(
            self,
            cosine_threshold=(
                settings.cosine_threshold if self.cosine_threshold is None else float(self.cosine_threshold)
            ),
            kg_chunk_pick_method=self.kg_chunk_pick_method or settings.kg_chunk_pick_method,
            related_chunk_number=self.related_chunk_number or settings.related_chunk_number,
            hl_keywords=list(self.hl_keywords),
            ll_keywords=list(self.ll_keywords),
            conversation_history=[dict(m) for m in self.conversation_history],
        )


def clean_query(query: object) -> str:
    """Return the question to answer, or raise :class:`InvalidInput`.

    The query must be a string with some non-whitespace text. Lone surrogates
    become U+FFFD and NUL bytes a space (see
    :func:`~lightrag_pg.textclean.scrub_text`); surrounding whitespace is
    removed.
    """
    if not isinstance(query, str):
        raise InvalidInput(f"the query must be a string, got {type(query).__name__}")
    cleaned = scrub_text(query).strip()
    if not cleaned:
        raise InvalidInput("the query is empty or whitespace only")
    return cleaned


def _check_positive_int(name: str, value: object, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidInput(f"{name} must be a positive integer, got {value!r}")
    if value > high:
        raise InvalidInput(f"{name} must be at most {high:,}, got {value:,}")


def _check_keywords(name: str, value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{name} must be a list of strings, got {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise InvalidInput(f"{name} must contain only strings, got {item!r}")
    return [item.strip() for item in value if item.strip()]


def _check_history(history: object) -> None:
    if not isinstance(history, (list, tuple)):
        raise InvalidInput("conversation_history must be a list of {'role', 'content'} dicts")
    for index, message in enumerate(history):
        if not isinstance(message, dict) or not {"role", "content"} <= set(message):
            raise InvalidInput(
                f"conversation_history[{index}] must be a dict with the keys "
                f"'role' and 'content', got {message!r}"
            )
        if message["role"] not in HISTORY_ROLES:
            raise InvalidInput(
                f"conversation_history[{index}]['role'] must be one of "
                f"{', '.join(HISTORY_ROLES)}, got {message['role']!r}"
            )
        if not isinstance(message["content"], str):
            raise InvalidInput(f"conversation_history[{index}]['content'] must be a string")
