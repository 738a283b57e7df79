"""Query parameters, with upstream LightRAG's names and defaults.

:class:`QueryParam` is declared once, as a pydantic model: its field types and
bounds are the checks, and the server's request body is derived from it.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass
from typing_extensions import TypedDict

from ..config import Settings, check_cosine_threshold
from ..errors import InvalidInput, LightRAGError
from ..textclean import scrub_text

QueryMode = Literal["local", "global", "hybrid", "naive", "mix", "bypass"]

MAX_TOP_K = 10_000
"""The most entities, relations or chunks one search may ask for."""
MAX_TOKENS = 1_000_000
"""The largest token budget of a context."""
MAX_RELATED_CHUNKS = 1_000
"""The most chunks picked behind one entity or relation."""
MAX_HISTORY_MESSAGES = 1_000
"""The most earlier turns ``conversation_history`` may hold (the server's bound on a list);
each message's text is bounded by ``Settings.max_query_chars``, as the question is."""

BOUNDS: dict[str, int] = {
    "top_k": MAX_TOP_K,
    "chunk_top_k": MAX_TOP_K,
    "max_entity_tokens": MAX_TOKENS,
    "max_relation_tokens": MAX_TOKENS,
    "max_total_tokens": MAX_TOKENS,
}
"""The positive integer fields and their largest values."""


Scrubbed = Annotated[str, AfterValidator(scrub_text)]
"""Caller text, scrubbed as the question is: a lone surrogate becomes U+FFFD, NUL a space
(:func:`~lightrag_pg.textclean.scrub_text`), so it can be searched, sent and cached."""


class HistoryMessage(TypedDict):
    """One earlier turn of the conversation (other keys of a message are dropped, as the
    model is sent only these two); its text scrubbed like the question."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]

    role: Literal["system", "user", "assistant"]
    content: Scrubbed


def _listed(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _keyword_list(value: object) -> object:
    return [] if value is None else _listed(value)


def _keywords(value: list[str]) -> list[str]:
    return [item.strip() for item in map(scrub_text, value) if item.strip()]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise InvalidInput("response_type must be a non-empty string")
    return value


def _cosine(value: object) -> object:
    return value if value is None else check_cosine_threshold(value, InvalidInput)


Positive = Annotated[int, Field(gt=0)]
Keywords = Annotated[list[str], BeforeValidator(_keyword_list), AfterValidator(_keywords)]
History = Annotated[list[HistoryMessage], BeforeValidator(_listed), Field(max_length=MAX_HISTORY_MESSAGES)]


@dataclass(config=ConfigDict(strict=True, extra="forbid", use_attribute_docstrings=True))
class _Fields:
    """The fields of :class:`QueryParam`, their types and bounds (pydantic checks them)."""

    mode: QueryMode = "mix"
    only_need_context: bool = False
    only_need_prompt: bool = False
    response_type: Annotated[Scrubbed, AfterValidator(_not_blank)] = "Multiple Paragraphs"
    stream: bool = False
    top_k: Annotated[Positive, Field(le=BOUNDS["top_k"])] = 40
    chunk_top_k: Annotated[Positive, Field(le=BOUNDS["chunk_top_k"])] = 20
    max_entity_tokens: Annotated[Positive, Field(le=BOUNDS["max_entity_tokens"])] = 6000
    max_relation_tokens: Annotated[Positive, Field(le=BOUNDS["max_relation_tokens"])] = 8000
    max_total_tokens: Annotated[Positive, Field(le=BOUNDS["max_total_tokens"])] = 30000
    hl_keywords: Keywords = Field(default_factory=list)
    ll_keywords: Keywords = Field(default_factory=list)
    conversation_history: History = Field(default_factory=list)
    user_prompt: Scrubbed | None = None
    enable_rerank: bool = True
    include_references: bool = True
    cosine_threshold: Annotated[float | None, BeforeValidator(_cosine)] = None
    kg_chunk_pick_method: Literal["VECTOR", "WEIGHT"] | None = None
    related_chunk_number: Annotated[Positive, Field(le=MAX_RELATED_CHUNKS)] | None = None
    lexical: bool = True
    """Fuse lexical search (BM25 or full text) with the vector searches: chunks in naive
    and mix, entities in the graph modes, and the entities the question names. Mix then
    fuses all its chunk lists (vector, lexical, picks behind the kept entities and
    relations) by reciprocal rank instead of merging them round-robin, hybrid its
    two (the picks behind the kept entities and relations), and local and global
    order their two by similarity to the question."""
    pagerank: bool = False
    """Rank the graph's chunks by a personalized PageRank over the entity–chunk graph,
    seeded from the question's entities and its best chunks, in place of the chunks
    picked behind the kept entities and relations (local, hybrid and mix)."""
    bridge: bool | None = None
    """Follow the entities of the question's best passage, and of the articles of the
    entities it names (passages titled with the name), that the question does not name
    to their other passages, and place the three most like the question among the text
    matches: a passage that introduces such an entity after the first two (after the
    first when it is clearly closer to the question than the second), any other after
    the first three; in place of the chunks picked behind the kept entities and
    relations (mix: the other modes have no text match to start from). ``None`` (the default): on, unless ``lexical`` is off, which gives upstream
    LightRAG's retrieval (:meth:`QueryParam.uses_bridge`)."""


class QueryParam(_Fields):
    """How one query is answered (a dataclass: ``dataclasses.replace`` works and checks again).

    ``cosine_threshold``, ``kg_chunk_pick_method`` and ``related_chunk_number``
    default to ``None``, meaning "use the workspace setting"; call
    :meth:`resolved` to fill them in. Invalid values raise
    :class:`~lightrag_pg.errors.InvalidInput` at construction time.
    """

    def __init__(self, *args: Any, **fields: Any) -> None:
        try:
            super().__init__(*args, **fields)
        except ValidationError as exc:
            raise InvalidInput(_first_problem(exc)) from None

    def uses_bridge(self) -> bool:
        """Whether mix takes the bridge hop: ``bridge`` when set, else ``lexical``."""
        return self.bridge if self.bridge is not None else self.lexical

    def resolved(self, settings: Settings) -> QueryParam:
        """Return a copy with every "workspace default" (``None``) field filled in."""
        return dataclasses.replace(
            self,
            cosine_threshold=(
                settings.cosine_threshold if self.cosine_threshold is None else self.cosine_threshold
            ),
            kg_chunk_pick_method=self.kg_chunk_pick_method or settings.kg_chunk_pick_method,
            related_chunk_number=self.related_chunk_number or settings.related_chunk_number,
            hl_keywords=list(self.hl_keywords),
            ll_keywords=list(self.ll_keywords),
            conversation_history=[m.copy() for m in self.conversation_history],
        )


def _first_problem(exc: ValidationError) -> str:
    """The first of pydantic's errors, said the way the project says them."""
    error = exc.errors(include_url=False)[0]
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, LightRAGError):
        return str(cause)
    name, *inner = error["loc"]
    where = f"{name}" + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in inner)
    value = error["input"]
    if error["type"] == "literal_error":
        return f"{where} must be one of {error['ctx']['expected']}; got {value!r}"
    if error["type"] == "less_than_equal":
        return f"{where} must be at most {error['ctx']['le']:,}, got {value:,}"
    if error["type"] == "too_long":
        ctx = error["ctx"]
        return f"{where} must have at most {ctx['max_length']:,} items, got {ctx['actual_length']:,}"
    if error["type"] in ("greater_than", "int_type", "int_from_float"):
        return f"{where} must be a positive integer, got {value!r}"
    return f"{where}: {error['msg']}, got {value!r}"


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
