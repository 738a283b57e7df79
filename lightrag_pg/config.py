"""The one frozen settings object every layer reads from."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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


@dataclass(frozen=True, slots=True)
class Settings:
    """Every tunable of a :class:`~lightrag_pg.LightRAG` instance.

    Pass any of these as keyword arguments to ``LightRAG(...)``. Defaults follow
    upstream LightRAG.
    """

    # storage
    data_dir: Path | None = None
    pool_min_size: int = 1
    pool_max_size: int = 8
    statement_timeout_ms: int = DEFAULT_STATEMENT_TIMEOUT_MS
    """Longest a statement on the pool may run (0: no limit); PostgreSQL cancels it after that
    (:class:`~lightrag_pg.errors.StatementTimeout`). Migrations and index builds are exempt."""
    connect_timeout: float = 10.0
    pool_acquire_timeout: float = 30.0

    # tokenizer and chunking
    tokenizer_name: str = "o200k_base"
    chunk_token_size: int = 1200
    chunk_overlap_token_size: int = 100
    split_by_character: str | None = None
    split_by_character_only: bool = False
    max_document_bytes: int = 50_000_000

    # extraction
    extractor: Literal["llm", "nlp"] | None = None
    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES
    summary_language: str = "English"
    entity_extract_max_gleaning: int = 1
    gleaning_rule: Literal["always", "incomplete"] = "always"
    """Which chunks get the ``entity_extract_max_gleaning`` passes: ``always`` every one (as
    upstream), ``incomplete`` only while the last answer was cut off (no completion line)
    or held malformed records. Opt-in: whether skipping the others loses records depends
    on the model."""
    max_entity_name_length: int = 256
    max_description_length: int = 10_000
    nlp_max_relations_per_chunk: int = 24
    """The offline extractor keeps at most this many relations per chunk, the strongest."""

    # merge
    force_llm_summary_on_merge: int = 8
    summary_max_tokens: int = 1200
    summary_context_size: int = 12_000
    summary_length_recommended: int = 600
    max_source_ids_per_entity: int = 200
    max_source_ids_per_relation: int = 200
    max_file_paths: int = 75

    # LLM and embedding calls
    llm_max_async: int = 4
    embedding_max_async: int = 8
    embedding_batch_num: int = 10
    llm_timeout: float = 180.0
    llm_deadline: float = 300.0
    embedding_timeout: float = 60.0
    max_retries: int = 3
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
    max_parallel_insert: int = 2
    max_parallel_chunks: int = 4

    # query
    cosine_threshold: float = 0.2
    related_chunk_number: int = 5
    kg_chunk_pick_method: Literal["VECTOR", "WEIGHT"] = "VECTOR"
    max_query_chars: int = 100_000
    """Longest question answered (:class:`~lightrag_pg.errors.QueryTooLong` past it)."""

    def __post_init__(self) -> None:
        positive = (
            "pool_min_size",
            "pool_max_size",
            "chunk_token_size",
            "max_document_bytes",
            "max_entity_name_length",
            "summary_max_tokens",
            "summary_context_size",
            "max_source_ids_per_entity",
            "max_source_ids_per_relation",
            "max_file_paths",
            "llm_max_async",
            "embedding_max_async",
            "embedding_batch_num",
            "max_parallel_insert",
            "max_parallel_chunks",
            "related_chunk_number",
            "force_llm_summary_on_merge",
            "max_query_chars",
            "nlp_max_relations_per_chunk",
        )
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
        if not 0 <= self.chunk_overlap_token_size < self.chunk_token_size:
            raise ConfigurationError(
                "chunk_overlap_token_size must be >= 0 and smaller than chunk_token_size"
            )
        check_timeout_ms(self.statement_timeout_ms)
        if self.pool_min_size > self.pool_max_size:
            raise ConfigurationError("pool_min_size must not exceed pool_max_size")
        if self.entity_extract_max_gleaning < 0 or self.max_retries < 0:
            raise ConfigurationError("entity_extract_max_gleaning and max_retries must be >= 0")
        for name in ("llm_deadline", "connect_timeout", "pool_acquire_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigurationError(f"{name} must be positive seconds, got {value!r}")
        check_cosine_threshold(self.cosine_threshold)
        if self.max_entity_name_length > MAX_ENTITY_NAME_LENGTH:
            raise ConfigurationError(
                f"max_entity_name_length={self.max_entity_name_length} is too long: at most "
                f"{MAX_ENTITY_NAME_LENGTH} characters, so that a document id and two names fit in "
                f"PostgreSQL's {BTREE_MAX_KEY_BYTES}-byte index row limit"
            )
        if self.extractor not in (None, "llm", "nlp"):
            raise ConfigurationError(f"extractor must be 'llm' or 'nlp', got {self.extractor!r}")
        if self.gleaning_rule not in ("always", "incomplete"):
            raise ConfigurationError(
                f"gleaning_rule must be 'always' or 'incomplete', got {self.gleaning_rule!r}"
            )
        if self.kg_chunk_pick_method not in ("VECTOR", "WEIGHT"):
            raise ConfigurationError("kg_chunk_pick_method must be 'VECTOR' or 'WEIGHT'")
        if not self.entity_types:
            raise ConfigurationError("entity_types must not be empty")
        if self.data_dir is not None:
            object.__setattr__(self, "data_dir", Path(self.data_dir))
        object.__setattr__(self, "entity_types", tuple(self.entity_types))

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
