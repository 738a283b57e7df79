"""Whole-workspace transfers: the batch writes of an import from upstream LightRAG.

Each method is one statement over a whole batch (parallel arrays), and leaves
what is stored alone, so writing a batch twice changes nothing; the importer
runs each batch in one transaction. Documents carry the name of the source they
came from (``doc_status.metadata->'lightrag_import'``), and chunks, vectors and
fragments are written only for documents so marked (and processed upstream), so
documents the workspace held before are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
import numpy as np

from ..db.dimensions import VECTOR_HNSW_MAX_DIM
from ..db.identifiers import relation_of
from ..db.sqlfile import load_queries, render
from ..types import DocStatus
from .rows import EntityFragmentRow, EntityRow, RelationFragmentRow, RelationRow, columns, vectors

SQL = load_queries(__package__, "transfer.sql")

BUILD_MEMORY = 512 * 2**20
"""Bytes of ``maintenance_work_mem`` an HNSW build of an import gets at least (see transfer.sql)."""


@dataclass(frozen=True, slots=True)
class Written:
    """What one batch write did: rows given, rows it could take, rows it stored."""

    given: int
    eligible: int
    written: int


@dataclass(frozen=True, slots=True)
class StatusImport:
    """One document's status to import (``doc_status``): its columns, with our status, and
    upstream's status as it was."""

    id: str
    status: DocStatus
    content_summary: str
    content_length: int
    chunks_count: int | None
    chunks_list: list[str]
    file_path: str
    track_id: str | None
    error_msg: str | None
    metadata: dict[str, Any]
    created_at: datetime | None
    updated_at: datetime | None
    upstream_status: str

    def values(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.status.value,
            self.content_summary,
            self.content_length,
            self.chunks_count,
            tuple(self.chunks_list),
            self.file_path,
            self.track_id,
            self.error_msg,
            self.metadata,
            self.created_at,
            self.updated_at,
            self.upstream_status,
        )


@dataclass(frozen=True, slots=True)
class CacheImport:
    """One cached LLM answer to import."""

    id: str
    cache_type: str
    mode: str
    chunk_id: str | None
    prompt: str
    response: str
    created_at: datetime | None = None

    def values(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.cache_type,
            self.mode,
            self.chunk_id,
            self.prompt,
            self.response,
            self.created_at,
        )


def _written(row: asyncpg.Record) -> Written:
    return Written(int(row["given"]), int(row["eligible"]), int(row["written"]))


def _json_list(values: Sequence[str]) -> tuple[str, ...]:
    """A list for a ``jsonb[]`` parameter (a tuple: the pool's codec writes it as a JSON list)."""
    return tuple(values)


class TransferStore:
    """The importer's batch writes and reads, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def create_document_map(self) -> None:
        """The session's map from upstream's document ids to ours (a temporary table)."""
        await self.conn.execute(SQL["create_document_map"])

    async def map_documents(self, rows: Sequence[tuple[str, str, bool]]) -> set[str]:
        """Record (upstream id, our id, first of the batch with that content); the upstream
        ids among them that own their document (see transfer.sql)."""
        if not rows:
            return set()
        return {r["upstream_id"] for r in await self.conn.fetch(SQL["map_documents"], *columns(rows, 3))}

    async def import_documents(self, rows: Sequence[tuple[str, str, str]]) -> int:
        """Store documents (id, content, file path) not stored yet, without a status; how many."""
        if not rows:
            return 0
        return int(await self.conn.fetchval(SQL["import_documents"], *columns(rows, 3)))

    async def import_statuses(
        self, rows: Sequence[StatusImport], tag: str
    ) -> dict[str, tuple[str | None, str]]:
        """Give stored documents without a status theirs (rows by upstream's ids), marked with
        ``tag``; by upstream id, our id and the outcome (``imported``, ``resumed``, ``present``,
        ``duplicate`` or ``no_content``)."""
        if not rows:
            return {}
        found = await self.conn.fetch(SQL["import_statuses"], *columns((r.values() for r in rows), 13), tag)
        return {r["id"]: (r["doc_id"], r["outcome"]) for r in found}

    async def statusless_documents(self, after: str | None, limit: int) -> list[str]:
        """A page of stored documents without a status (not the reserved manual-edits one)."""
        return [r["id"] for r in await self.conn.fetch(SQL["statusless_documents"], after or "", limit)]

    async def pending_statuses(self, ids: Sequence[str], tag: str) -> int:
        """Give the documents ``ids`` a pending status marked with ``tag``; how many."""
        return int(await self.conn.fetchval(SQL["pending_statuses"], list(ids), tag)) if ids else 0

    async def import_chunks(self, rows: Sequence[tuple[str, str, int, int, str, str]], tag: str) -> Written:
        """Store chunks (id, doc id, order, tokens, content, file path) of documents imported from ``tag``."""
        if not rows:
            return Written(0, 0, 0)
        return _written(await self.conn.fetchrow(SQL["import_chunks"], *columns(rows, 6), tag))

    async def import_chunk_vectors(self, ids: Sequence[str], embeddings: np.ndarray, tag: str) -> Written:
        """Store vectors of imported chunks that have none."""
        if not ids:
            return Written(0, 0, 0)
        return _written(
            await self.conn.fetchrow(SQL["import_chunk_vectors"], list(ids), vectors(embeddings), tag)
        )

    async def import_cache(self, rows: Sequence[CacheImport]) -> int:
        """Store cached answers under keys not stored yet; how many."""
        if not rows:
            return 0
        return int(await self.conn.fetchval(SQL["import_cache"], *columns((r.values() for r in rows), 7)))

    async def import_entities(self, rows: Sequence[EntityRow]) -> int:
        """Store entities not stored yet (their name, type, description, lists, context
        tokens and creation time); how many."""
        if not rows:
            return 0
        values = [
            (
                r.name,
                r.entity_type,
                r.description,
                _json_list(r.source_ids),
                _json_list(r.file_paths),
                r.context_tokens,
                r.created_at,
            )
            for r in rows
        ]
        return int(await self.conn.fetchval(SQL["import_entities"], *columns(values, 7)))

    async def import_entity_vectors(
        self, names: Sequence[str], contents: Sequence[str], embeddings: np.ndarray
    ) -> Written:
        """Store vectors of stored entities that have none."""
        if not names:
            return Written(0, 0, 0)
        return _written(
            await self.conn.fetchrow(
                SQL["import_entity_vectors"], list(names), list(contents), vectors(embeddings)
            )
        )

    async def import_relations(self, rows: Sequence[RelationRow]) -> Written:
        """Store relations not stored yet whose endpoints are stored."""
        if not rows:
            return Written(0, 0, 0)
        values = [
            (
                r.src,
                r.tgt,
                r.keywords,
                r.description,
                r.weight,
                _json_list(r.source_ids),
                _json_list(r.file_paths),
                r.context_tokens,
                r.created_at,
            )
            for r in rows
        ]
        return _written(await self.conn.fetchrow(SQL["import_relations"], *columns(values, 9)))

    async def import_relation_vectors(
        self, pairs: Sequence[tuple[str, str]], contents: Sequence[str], embeddings: np.ndarray
    ) -> Written:
        """Store vectors of stored relations (canonical pairs) that have none."""
        if not pairs:
            return Written(0, 0, 0)
        src, tgt = columns(pairs, 2)
        return _written(
            await self.conn.fetchrow(
                SQL["import_relation_vectors"], src, tgt, list(contents), vectors(embeddings)
            )
        )

    async def imported_chunks_with_answers(
        self, tag: str, after: str | None, limit: int
    ) -> list[asyncpg.Record]:
        """A page of chunks imported from ``tag`` with upstream's cached extraction answers
        (``answers``: JSON list of ``{id, response, initial}``, oldest first)."""
        return list(await self.conn.fetch(SQL["imported_chunks_with_answers"], tag, after or "", limit))

    async def add_entity_fragments(self, fragments: Sequence[EntityFragmentRow]) -> int:
        """Record fragments of stored entities with their documents' links; how many."""
        if not fragments:
            return 0
        return int(
            await self.conn.fetchval(
                SQL["add_entity_fragments"], *columns((f.values() for f in fragments), 7)
            )
        )

    async def add_relation_fragments(self, fragments: Sequence[RelationFragmentRow]) -> int:
        """Record fragments of stored relations with their documents' links; how many."""
        if not fragments:
            return 0
        return int(
            await self.conn.fetchval(
                SQL["add_relation_fragments"], *columns((f.values() for f in fragments), 9)
            )
        )

    async def fill_entity_fragments(
        self, lists: Sequence[tuple[str, Sequence[str]]], tag: str
    ) -> tuple[int, int]:
        """For each (entity, chunk ids): a fragment with the entity's whole description for every
        imported chunk that has none of it; then those of the entities no document contributes
        to are deleted. (Fragments recorded, entities deleted.)"""
        if not lists:
            return 0, 0
        names = [n for n, _ in lists]
        chunks = [_json_list(c) for _, c in lists]
        row = await self.conn.fetchrow(SQL["fill_entity_fragments"], names, chunks, tag)
        return int(row["filled"]), int(row["swept"])

    async def fill_relation_fragments(
        self, lists: Sequence[tuple[tuple[str, str], Sequence[str]]], tag: str
    ) -> tuple[int, int]:
        """As :meth:`fill_entity_fragments` for relations (canonical pairs), sharing out the
        weight their recorded fragments leave."""
        if not lists:
            return 0, 0
        src = [p[0] for p, _ in lists]
        tgt = [p[1] for p, _ in lists]
        chunks = [_json_list(c) for _, c in lists]
        row = await self.conn.fetchrow(SQL["fill_relation_fragments"], src, tgt, chunks, tag)
        return int(row["filled"]), int(row["swept"])

    async def mixed_entities(self, tag: str, after: str | None, limit: int) -> tuple[str | None, list[str]]:
        """Among a page of entities, those holding contributions of ``tag`` and of other documents."""
        row = await self.conn.fetchrow(SQL["mixed_entities"], tag, after or "", limit)
        return row["last"], list(row["mixed"])

    async def mixed_relations(
        self, tag: str, after: tuple[str, str] | None, limit: int
    ) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
        """As :meth:`mixed_entities` for relations."""
        src, tgt = after if after else ("", "")
        row = await self.conn.fetchrow(SQL["mixed_relations"], tag, src, tgt, limit)
        last = (row["last_src"], row["last_tgt"]) if row["last_src"] is not None else None
        return last, list(zip(row["srcs"], row["tgts"], strict=True))

    async def stored_documents(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored documents."""
        return {r["id"] for r in await self.conn.fetch(SQL["stored_documents"], list(ids))} if ids else set()

    async def stored_entities(self, names: Sequence[str]) -> set[str]:
        """Which of ``names`` are stored entities."""
        return (
            {r["name"] for r in await self.conn.fetch(SQL["stored_entities"], list(names))}
            if names
            else set()
        )

    async def stored_relations(self, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of the canonical ``pairs`` are stored relations."""
        if not pairs:
            return set()
        rows = await self.conn.fetch(SQL["stored_relations"], *columns(pairs, 2))
        return {(r["src"], r["tgt"]) for r in rows}

    async def reembed_running(self) -> bool:
        """Whether a re-embed of the workspace is in progress."""
        return bool(await self.conn.fetchval(SQL["reembed_running"]))

    async def export_page(self, kind: str, after: tuple[str, ...] | None, limit: int) -> list[asyncpg.Record]:
        """A page of the exporter's ``kind`` (statuses, chunks, cache, entities, relations,
        doc_links) after the key ``after`` (one value, two for relations)."""
        width = 2 if kind == "relations" else 1
        keys = list(after) if after else [""] * width
        return list(await self.conn.fetch(SQL[f"export_{kind}"], *keys, limit))

    async def foreign_documents(self, tag: str) -> bool:
        """Whether the workspace holds a document not imported from ``tag``."""
        return bool(await self.conn.fetchval(SQL["foreign_documents"], tag))

    async def vectors_present(self) -> bool:
        """Whether any vector table holds a row."""
        return bool(await self.conn.fetchval(SQL["vectors_present"]))

    async def drop_hnsw(self) -> None:
        """Drop the three vector tables' HNSW indexes (for a bulk load; see :meth:`build_hnsw`)."""
        await self.conn.execute(SQL["drop_hnsw"])

    async def build_hnsw(self, dim: int) -> list[str]:
        """Build those of the three HNSW indexes that are missing (halfvec above 2,000
        dimensions, as the migrations make them); the names of those built. Call it with no
        statement timeout: it reads a whole table."""
        present = {r["name"] for r in await self.conn.fetch(SQL["hnsw_present"])}
        block = "hnsw_vector" if dim <= VECTOR_HNSW_MAX_DIM else "hnsw_halfvec"
        built = []
        for table in ("chunk_vectors", "entity_vectors", "relation_vectors"):
            name = f"{table}_embedding_hnsw"
            if name in present:
                continue
            ident, index = relation_of(table), relation_of(name)
            assert ident is not None and index is not None
            async with self.conn.transaction():
                await self.conn.execute(SQL["build_memory"], BUILD_MEMORY)
                await self.conn.execute(render(SQL[block], table=ident, index=index, dim=dim))
            built.append(name)
        return built

    async def imported_counts(self, tag: str) -> dict[str, int]:
        """Documents, chunks and fragments of ``tag``, and the workspace's entities and relations."""
        row = await self.conn.fetchrow(SQL["imported_counts"], tag)
        return {k: int(v) for k, v in dict(row).items()}
