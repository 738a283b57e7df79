"""Turning caller input into clean, identified documents."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..errors import InvalidInput
from ..store.rows import DocumentRow
from ..types import UNKNOWN_SOURCE


def md5_id(prefix: str, *parts: str) -> str:
    """``prefix`` followed by the MD5 of the parts (upstream's compute_mdhash_id)."""
    return prefix + hashlib.md5("".join(parts).encode("utf-8")).hexdigest()


def clean_text(text: object, *, index: int, max_bytes: int) -> str:
    """Strip NUL bytes and surrounding whitespace; refuse empty or oversized text."""
    if not isinstance(text, str):
        raise InvalidInput(f"document #{index} is {type(text).__name__}, expected str")
    size = len(text.encode("utf-8", errors="replace"))
    if size > max_bytes:
        raise InvalidInput(f"document #{index} is {size:,} bytes, more than max_document_bytes={max_bytes:,}")
    cleaned = text.replace("\x00", "").strip()
    if not cleaned:
        raise InvalidInput(f"document #{index} is empty or whitespace only")
    return cleaned


def prepare_documents(
    texts: str | Sequence[str],
    ids: str | Sequence[str] | None = None,
    file_paths: str | Sequence[str] | None = None,
    *,
    track_id: str | None = None,
    max_bytes: int,
) -> list[DocumentRow]:
    """Validate and clean ``texts``; give each an id; drop duplicates within the batch.

    Ids default to ``doc-`` plus the MD5 of the cleaned content. When ``ids``
    or ``file_paths`` are given, their lengths must match ``texts``.
    """
    texts = [texts] if isinstance(texts, str) else list(texts)
    if not texts:
        raise InvalidInput("no documents given")
    id_list = _parallel("ids", ids, len(texts))
    path_list = _parallel("file_paths", file_paths, len(texts))
    if id_list is not None and len(set(id_list)) != len(id_list):
        raise InvalidInput("ids must be unique within one insert")
    docs: dict[str, DocumentRow] = {}
    seen_content: set[str] = set()
    for i, raw in enumerate(texts):
        content = clean_text(raw, index=i, max_bytes=max_bytes)
        if id_list is None and content in seen_content:
            continue
        seen_content.add(content)
        doc_id = id_list[i] if id_list is not None else md5_id("doc-", content)
        path = (path_list[i] if path_list is not None else None) or UNKNOWN_SOURCE
        docs[doc_id] = DocumentRow(doc_id, content, path, track_id)
    return list(docs.values())


def _parallel(name: str, values: str | Sequence[str] | None, n: int) -> list[str] | None:
    if values is None:
        return None
    values = [values] if isinstance(values, str) else list(values)
    if len(values) != n:
        raise InvalidInput(f"{name} has {len(values)} entries but {n} documents were given")
    for v in values:
        if not isinstance(v, str) or (name == "ids" and not v.strip()):
            raise InvalidInput(f"every entry of {name} must be a non-empty string, got {v!r}")
        if "\x00" in v:
            raise InvalidInput(f"{name} must not contain NUL bytes")
    return [v.strip() for v in values]
