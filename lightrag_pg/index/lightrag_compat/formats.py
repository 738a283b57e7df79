"""What upstream LightRAG 1.5.7 keeps, and how its values map onto ours: names, ids, types.

Upstream's working directory holds ``kv_store_<namespace>.json`` files (one JSON
object keyed by id), nano-vectordb files ``vdb_<namespace>.json`` (``embedding_dim``,
``data``: one record per vector, ``matrix``: every vector as one base64 string of
float32 rows, in the order of ``data``) and a GraphML graph. Its PostgreSQL storages
hold the same records in ``LIGHTRAG_*`` tables keyed by a ``workspace`` column, the
vector tables named after the embedding model (:func:`model_suffix`).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from ...textclean import scrub_text
from ...types import GRAPH_FIELD_SEP, DocStatus

UPSTREAM_VERSION = "1.5.7"
"""The upstream release whose formats this package reads and writes."""

FULL_DOCS = "kv_store_full_docs.json"
TEXT_CHUNKS = "kv_store_text_chunks.json"
DOC_STATUS = "kv_store_doc_status.json"
LLM_CACHE = "kv_store_llm_response_cache.json"
FULL_ENTITIES = "kv_store_full_entities.json"
FULL_RELATIONS = "kv_store_full_relations.json"
ENTITY_CHUNKS = "kv_store_entity_chunks.json"
RELATION_CHUNKS = "kv_store_relation_chunks.json"
VDB_CHUNKS = "vdb_chunks.json"
VDB_ENTITIES = "vdb_entities.json"
VDB_RELATIONS = "vdb_relationships.json"
GRAPHML = "graph_chunk_entity_relation.graphml"

GRAPH_NAMESPACE = "chunk_entity_relation"
"""The namespace of upstream's graph: its AGE graph's name and pgtable's ``namespace``."""

STATUS_MAP: dict[str, DocStatus] = {
    "processed": DocStatus.PROCESSED,
    "failed": DocStatus.FAILED,
}
"""Upstream statuses that keep their meaning; every other one (pending, parsing,
analyzing, processing, preprocessed) becomes pending, for our pipeline to finish."""

IMPORT_MARK = "lightrag_import"
"""The key of ``doc_status.metadata`` naming the source a document was imported from."""


def text(value: Any) -> str:
    """A stored text value: ``None`` is empty, anything else its string, made storable."""
    return "" if value is None else scrub_text(str(value))


def split_field(value: Any) -> list[str]:
    """A ``<SEP>``-joined field (source ids, file paths) as its distinct non-empty parts, in order."""
    return list(dict.fromkeys(p.strip() for p in text(value).split(GRAPH_FIELD_SEP) if p.strip()))


def join_field(values: list[str]) -> str:
    """Values joined into one upstream field."""
    return GRAPH_FIELD_SEP.join(values)


def md5_hex(value: str) -> str:
    return hashlib.md5(value.encode("utf-8")).hexdigest()


def entity_vector_id(name: str) -> str:
    """The id of an entity's record in upstream's entity vectors."""
    return "ent-" + md5_hex(name)


def relation_vector_id(src: str, tgt: str) -> str:
    """The id of a relation's record in upstream's relation vectors (endpoints in code point order)."""
    a, b = (src, tgt) if src <= tgt else (tgt, src)
    return "rel-" + md5_hex(a + b)


def relation_key(src: str, tgt: str) -> str:
    """The key of a relation in upstream's ``relation_chunks`` store."""
    a, b = (src, tgt) if src <= tgt else (tgt, src)
    return a + GRAPH_FIELD_SEP + b


def split_relation_key(key: str) -> tuple[str, str] | None:
    """The two endpoints of a ``relation_chunks`` key, or None if it is not one."""
    src, sep, tgt = key.partition(GRAPH_FIELD_SEP)
    return (src, tgt) if sep and src and tgt and src != tgt else None


_MODEL_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def model_suffix(model: str, dim: int) -> str:
    """The suffix upstream gives the vector tables of a model: its name lower-cased, every
    character other than a letter, digit or ``_`` made ``_``, then ``_<dim>d``."""
    return f"{_MODEL_CHARS.sub('_', model.strip().lower())}_{int(dim)}d"


def status_of(value: Any) -> DocStatus:
    """Our status for an upstream status (see :data:`STATUS_MAP`)."""
    return STATUS_MAP.get(text(value).strip().lower(), DocStatus.PENDING)


def timestamp(value: Any) -> datetime | None:
    """An upstream time (ISO text, seconds since the epoch, or a datetime; naive is UTC), or None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        return timestamp(float(value))
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def epoch(value: datetime | None) -> int:
    """Seconds since the epoch, as upstream stores creation times (0 when unknown)."""
    return int(value.timestamp()) if value else 0


def cache_mode(key: str, fallback: str = "default") -> str:
    """The mode part of an upstream cache key (``mode:type:hash``)."""
    mode, sep, _ = key.partition(":")
    return mode if sep and mode else fallback


def as_float(value: Any, default: float = 1.0) -> float:
    """A numeric field, or ``default`` when missing, not a number or not finite."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if number == number and abs(number) != float("inf") else default


def as_int(value: Any, default: int = 0) -> int:
    """An integer field, or ``default``."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
