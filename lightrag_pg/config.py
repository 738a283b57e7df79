"""The one frozen settings object every layer reads from."""

from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BeforeValidator, ConfigDict, ValidationError, ValidationInfo
from pydantic.dataclasses import dataclass

from .errors import ConfigurationError, LightRAGError

DEFAULT_ENTITY_TYPES: tuple[str, ...] = (
    "Person",
    "Creature",
    "Organization",
    "Location",
    "Event",
    "Concept",
    "Method",
    "Content",
    "Data",
    "Artifact",
    "NaturalObject",
)

BTREE_MAX_KEY_BYTES = 2704
"""PostgreSQL's largest btree index row (8 kB pages); every indexed id and name must fit."""
MAX_ID_BYTES = 512
"""Longest document id a caller may give, in UTF-8 bytes."""
MAX_FILE_PATH_CHARS = 4096
"""Longest file path a document may be given, in characters (after scrubbing and stripping).

Linux's ``PATH_MAX`` is 4,096 bytes, so no file an indexing process can open has a longer
path, and sources given as URLs stay below it (browsers and servers refuse URLs past 2 to
8 kB). A path is cited whole in every context whose chunks come from its document (the
reference list), so a bound also keeps one citation to a few thousand tokens at most.
"""
MAX_ENTITY_NAME_LENGTH = (BTREE_MAX_KEY_BYTES - MAX_ID_BYTES - 32) // 8
"""Largest allowed ``max_entity_name_length`` (270 characters).

The widest index row holds a document id and two entity names
(``doc_relations``): ``MAX_ID_BYTES`` plus two names of up to 4 UTF-8 bytes
per character, plus 32 bytes of row overhead, must fit in
``BTREE_MAX_KEY_BYTES``.
"""

DEFAULT_STATEMENT_TIMEOUT_MS = 30_000
"""The statement timeout of the library's and the server's pools (``statement_timeout_ms``)."""

_UPSTREAM_ONLY = {
    "working_dir": (
        "upstream LightRAG's working_dir is not used: lightrag_pg keeps everything in PostgreSQL, "
        "so there is no working directory. Choose the database with LightRAG(dsn=...) or the "
        "LIGHTRAG_PG_DSN environment variable, and separate data sets with workspace=...; without "
        "a DSN the embedded server keeps its files in data_dir"
    ),
}


def check_cosine_threshold(value: object, error: type[LightRAGError] = ConfigurationError) -> float:
    """Return ``value`` as a float in [-1, 1], or raise ``error`` saying what is wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"cosine_threshold must be a number, got {value!r}")
    if not -1.0 <= float(value) <= 1.0:
        raise error(f"cosine_threshold must lie in [-1, 1], got {value}")
    return float(value)


def check_timeout_ms(value: object) -> int:
    """Return ``value`` if it is a valid ``statement_timeout_ms`` (an integer >= 0), else raise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"statement_timeout_ms must be an integer >= 0 (0: no limit), got {value!r}")
    return value


def _positive(value: object, info: ValidationInfo) -> object:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigurationError(f"{info.field_name} must be a positive integer, got {value!r}")
    return value


def _not_negative(value: object, info: ValidationInfo) -> object:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{info.field_name} must be an integer >= 0, got {value!r}")
    return value


def _seconds(value: object, info: ValidationInfo) -> object:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigurationError(f"{info.field_name} must be positive seconds, got {value!r}")
    return value


def as_path(value: object) -> object:
    """A string or path-like value as a :class:`~pathlib.Path` (other values unchanged, for
    the type check to refuse)."""
    return Path(value) if isinstance(value, (str, os.PathLike)) else value


def _tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _one_of(*choices: str | None) -> BeforeValidator:
    def check(value: object, info: ValidationInfo) -> object:
        if value not in choices:
            shown = " or ".join(repr(c) for c in choices if c is not None)
            raise ConfigurationError(f"{info.field_name} must be {shown}, got {value!r}")
        return value

    return BeforeValidator(check)


def _short_names(value: int) -> int:
    if value > MAX_ENTITY_NAME_LENGTH:
        raise ConfigurationError(
            f"max_entity_name_length={value} is too long: at most "
            f"{MAX_ENTITY_NAME_LENGTH} characters, so that a document id and two names fit in "
            f"PostgreSQL's {BTREE_MAX_KEY_BYTES}-byte index row limit"
        )
    return value


def _some(value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:
        raise ConfigurationError("entity_types must not be empty")
    return value


Positive = Annotated[int, BeforeValidator(_positive)]
"""An integer > 0 (:class:`ConfigurationError` naming the field otherwise)."""
NotNegative = Annotated[int, BeforeValidator(_not_negative)]
Seconds = Annotated[float, BeforeValidator(_seconds)]
"""A positive number of seconds."""
Cosine = Annotated[float, BeforeValidator(check_cosine_threshold)]
TimeoutMs = Annotated[int, BeforeValidator(check_timeout_ms)]
OptionalPath = Annotated[Path | None, BeforeValidator(as_path)]
Names = Annotated[tuple[str, ...], BeforeValidator(_tuple), AfterValidator(_some)]

CHECKED = ConfigDict(strict=True, extra="forbid", use_attribute_docstrings=True)
"""How settings are declared: types are checked as given (no ``"3"`` for 3), unknown names refused."""


def configuration_problem(exc: ValidationError) -> ConfigurationError:
    """The first of pydantic's errors about a setting, said the way the project says them
    (the checks above raise :class:`ConfigurationError` themselves; these are the rest)."""
    error = exc.errors(include_url=False)[0]
    name = ".".join(str(p) for p in error["loc"]) or "settings"
    if error["type"] == "unexpected_keyword_argument":
        return ConfigurationError(f"unknown setting {name!r}")
    return ConfigurationError(f"{name} {error['msg'].lower()}, got {error['input']!r}")


class Checked:
    """Put before a pydantic dataclass of settings: building one raises
    :class:`ConfigurationError` naming the setting (:func:`configuration_problem`), not
    pydantic's ``ValidationError``."""

    __slots__ = ()

    def __init__(self, *args: Any, **fields: Any) -> None:
        try:
            cast(Any, super()).__init__(*args, **fields)
        except ValidationError as exc:
            raise configuration_problem(exc) from None


@dataclass(frozen=True, slots=True, config=CHECKED)
class _Fields:
    """The fields of :class:`Settings`, with their types and bounds (pydantic checks them)."""

    # storage
    data_dir: OptionalPath = None
    pool_min_size: Positive = 1
    pool_max_size: Positive = 8
    statement_timeout_ms: TimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS
    """Longest a statement on the pool may run (0: no limit); PostgreSQL cancels it after that
    (:class:`~lightrag_pg.errors.StatementTimeout`). Migrations and index builds are exempt."""
    connect_timeout: Seconds = 10.0
    pool_acquire_timeout: Seconds = 30.0

    # tokenizer and chunking
    tokenizer_name: str = "o200k_base"
    chunk_token_size: Positive = 1200
    chunk_overlap_token_size: NotNegative = 100
    split_by_character: str | None = None
    split_by_character_only: bool = False
    max_document_bytes: Positive = 50_000_000

    # extraction
    extractor: Annotated[Literal["llm", "nlp"] | None, _one_of("llm", "nlp", None)] = None
    entity_types: Names = DEFAULT_ENTITY_TYPES
    summary_language: str = "English"
    entity_extract_max_gleaning: NotNegative = 1
    gleaning_rule: Annotated[Literal["always", "incomplete"], _one_of("always", "incomplete")] = "always"
    """Which chunks get the ``entity_extract_max_gleaning`` passes: ``always`` every one (as
    upstream), ``incomplete`` only while the last answer was cut off (no completion line)
    or held malformed records. Opt-in: whether skipping the others loses records depends
    on the model."""
    max_entity_name_length: Annotated[Positive, AfterValidator(_short_names)] = 256
    max_description_length: int = 10_000
    nlp_max_relations_per_chunk: Positive = 24
    """The offline extractor keeps at most this many relations per chunk, the strongest."""

    # merge
    force_llm_summary_on_merge: Positive = 8
    summary_max_tokens: Positive = 1200
    summary_context_size: Positive = 12_000
    summary_length_recommended: int = 600
    max_source_ids_per_entity: Positive = 200
    max_source_ids_per_relation: Positive = 200
    max_file_paths: Positive = 75

    # LLM and embedding calls
    llm_max_async: Positive = 4
    embedding_max_async: Positive = 8
    embedding_batch_num: Positive = 10
    llm_timeout: float = 180.0
    llm_deadline: Seconds = 300.0
    embedding_timeout: float = 60.0
    max_retries: NotNegative = 3
    retry_base_delay: float = 1.0
    enable_llm_cache: bool = True
    usage_accounting: bool = True
    """Record every LLM and embedding call (kind, model, tokens, cache hit, duration) in the
    workspace's ``usage`` table; the metrics, the spans and the totals of documents and
    queries are kept either way."""
    trace_content: bool = False
    """OpenTelemetry spans of LLM calls also carry the prompt and the answer (text of your
    documents and questions); off, spans carry names of stages, counts and tokens only."""
    query_memo: bool = False
    """Keep each question's vectors and context token counts in ``llm_cache`` (with the
    cache on), so that asking it again needs neither the embedding model nor the
    tokenizer: one more statement per query, for processes that answer one question."""

    # pipeline parallelism
    max_parallel_insert: Positive = 2
    max_parallel_chunks: Positive = 4

    # query
    cosine_threshold: Cosine = 0.2
    related_chunk_number: Positive = 5
    kg_chunk_pick_method: Annotated[Literal["VECTOR", "WEIGHT"], _one_of("VECTOR", "WEIGHT")] = "VECTOR"
    max_query_chars: Positive = 100_000
    """Longest question answered (:class:`~lightrag_pg.errors.QueryTooLong` past it)."""

    def __post_init__(self) -> None:
        if not self.chunk_overlap_token_size < self.chunk_token_size:
            raise ConfigurationError(
                "chunk_overlap_token_size must be >= 0 and smaller than chunk_token_size"
            )
        if self.pool_min_size > self.pool_max_size:
            raise ConfigurationError("pool_min_size must not exceed pool_max_size")


class Settings(Checked, _Fields):
    """Every tunable of a :class:`~lightrag_pg.LightRAG` instance, declared once as a pydantic
    dataclass: each field's type is its check (:class:`ConfigurationError` naming the field).

    Pass any of these as keyword arguments to ``LightRAG(...)``. Defaults follow
    upstream LightRAG.
    """

    __slots__ = ()

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Settings:
        """Build settings from keyword arguments, rejecting unknown names.

        The error names the nearest known setting for a misspelt one, and
        explains upstream LightRAG options that have no equivalent here.
        """
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise ConfigurationError("; ".join(_unknown_setting(name, known) for name in unknown))
        return cls(**kwargs)


def _unknown_setting(name: str, known: list[str]) -> str:
    if name in _UPSTREAM_ONLY:
        return f"unknown setting {name!r}: {_UPSTREAM_ONLY[name]}"
    nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {nearest[0]}?)" if nearest else ""
    return f"unknown setting {name!r}{hint}"
