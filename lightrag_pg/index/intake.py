"""Turning caller input into clean, identified documents."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import MAX_FILE_PATH_CHARS, MAX_ID_BYTES
from ..errors import InvalidInput
from ..store.rows import DocumentRow
from ..textclean import scrub_text
from ..types import UNKNOWN_SOURCE


@dataclass(frozen=True, slots=True)
class SkippedDuplicate:
    """A document left out of a batch because an earlier one has the same content."""

    index: int
    """Position of the skipped document in the caller's batch."""
    file_path: str
    """The skipped document's file path."""
    duplicate_of: str
    """Id of the document kept in its place."""
    duplicate_of_path: str
    """File path of the document kept in its place."""


@dataclass(frozen=True, slots=True)
class Intake:
    """A validated batch: the documents to store and the duplicates left out."""

    documents: list[DocumentRow]
    duplicates: list[SkippedDuplicate]


def md5_id(prefix: str, *parts: str) -> str:
    """``prefix`` followed by the MD5 of the parts (upstream's compute_mdhash_id)."""
    return prefix + hashlib.md5("".join(parts).encode("utf-8")).hexdigest()


def clean_text(text: object, *, index: int, max_bytes: int) -> str:
    """Scrub and strip ``text``; refuse empty or oversized text.

    NUL becomes a space and a lone surrogate U+FFFD
    (:func:`~lightrag_pg.textclean.scrub_text`), so one bad character never
    rejects the document or its batch.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"document #{index} is {type(text).__name__}, expected str")
    size = len(text.encode("utf-8", errors="replace"))
    if size > max_bytes:
        raise InvalidInput(f"document #{index} is {size:,} bytes, more than max_document_bytes={max_bytes:,}")
    cleaned = scrub_text(text).strip()
    if not cleaned:
        raise InvalidInput(f"document #{index} is empty or whitespace only")
    return cleaned


def clean_file_path(path: str, where: str) -> str:
    """``path`` scrubbed like document text and stripped; :class:`InvalidInput` naming
    ``where`` if it is longer than :data:`~lightrag_pg.config.MAX_FILE_PATH_CHARS`."""
    cleaned = scrub_text(path).strip()
    if len(cleaned) > MAX_FILE_PATH_CHARS:
        raise InvalidInput(
            f"{where} is {len(cleaned):,} characters long; file paths are at most "
            f"{MAX_FILE_PATH_CHARS:,} characters (PATH_MAX)"
        )
    return cleaned


def prepare_batch(
    texts: str | Sequence[str],
    ids: str | Sequence[str] | None = None,
    file_paths: str | Sequence[str] | None = None,
    *,
    track_id: str | None = None,
    max_bytes: int,
) -> Intake:
    """Validate and clean ``texts``; give each an id; set aside duplicates within the batch.

    Ids default to ``doc-`` plus the MD5 of the cleaned content; then a
    document whose content equals an earlier one's is not stored again and is
    listed in :attr:`Intake.duplicates` with the document it duplicates. When
    ``ids`` or ``file_paths`` are given, their lengths must match ``texts``.
    Caller ids must be unique, non-empty and at most
    :data:`~lightrag_pg.config.MAX_ID_BYTES` UTF-8 bytes, without NUL or lone
    surrogates. File paths are scrubbed like texts and at most
    :data:`~lightrag_pg.config.MAX_FILE_PATH_CHARS` characters; every check runs before
    anything is stored.
    """
    texts = [texts] if isinstance(texts, str) else list(texts)
    if not texts:
        raise InvalidInput("no documents given")
    id_list = _parallel("ids", ids, len(texts))
    path_list = _parallel("file_paths", file_paths, len(texts))
    if id_list is not None:
        _check_ids(id_list)
    docs: list[DocumentRow] = []
    kept_by_content: dict[str, DocumentRow] = {}
    duplicates: list[SkippedDuplicate] = []
    for i, raw in enumerate(texts):
        content = clean_text(raw, index=i, max_bytes=max_bytes)
        path = (
            clean_file_path(path_list[i], f"file_paths[{i}]") if path_list is not None else ""
        ) or UNKNOWN_SOURCE
        kept = kept_by_content.get(content)
        if id_list is None and kept is not None:
            duplicates.append(SkippedDuplicate(i, path, kept.id, kept.file_path))
            continue
        doc_id = id_list[i] if id_list is not None else md5_id("doc-", content)
        docs.append(DocumentRow(doc_id, content, path, track_id))
        kept_by_content.setdefault(content, docs[-1])
    return Intake(docs, duplicates)


def _check_ids(ids: list[str]) -> None:
    if len(set(ids)) != len(ids):
        raise InvalidInput("ids must be unique within one insert")
    for doc_id in ids:
        if scrub_text(doc_id) != doc_id:
            raise InvalidInput(f"id {doc_id[:80]!r} contains surrogate code points, which are not valid text")
        size = len(doc_id.encode("utf-8"))
        if size > MAX_ID_BYTES:
            raise InvalidInput(
                f"id {doc_id[:40]!r}... is {size:,} bytes long; ids are at most {MAX_ID_BYTES} "
                "UTF-8 bytes (PostgreSQL indexes them)"
            )


def _parallel(name: str, values: str | Sequence[str] | None, n: int) -> list[str] | None:
    if values is None:
        return None
    values = [values] if isinstance(values, str) else list(values)
    if len(values) != n:
        raise InvalidInput(f"{name} has {len(values)} entries but {n} documents were given")
    for v in values:
        if not isinstance(v, str) or (name == "ids" and not v.strip()):
            raise InvalidInput(f"every entry of {name} must be a non-empty string, got {v!r}")
        if name == "ids" and "\x00" in v:
            raise InvalidInput(f"{name} must not contain NUL bytes")
    return [v.strip() for v in values]
