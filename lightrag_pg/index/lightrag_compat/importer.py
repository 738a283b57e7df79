"""Import an upstream LightRAG 1.5.7 workspace without any LLM or embedding call.

The import runs in phases, each a stream of batches read from the source, each
batch written in one transaction by one or a few set-based statements
(:class:`~lightrag_pg.store.transfer.TransferStore`) that leave what is stored
alone. Nothing is kept between batches but counters, so memory does not grow
with the source; an interrupted import is finished by running it again (each
batch first asks which of its rows are stored, and stored rows cost nothing
more); importing twice changes nothing.

1. documents under our ids (``doc-`` plus the MD5 of the text, where upstream 1.5.7
   names a document given with a file after the path; the same text is one document,
   and upstream documents holding the same text are imported once), then their
   statuses, marked with the source's name, upstream's status and upstream's id; a
   document the workspace already held keeps its own status and is skipped from
   then on;
2. chunks (upstream's ids, order, token counts, files), their vectors as stored,
   the LLM cache as stored, for documents processed upstream;
3. entities and relations as upstream stored them (description, type, keywords,
   weight, source chunk and file lists, creation time), their vectors as stored,
   and the token count of their context lines;
4. fragments: per chunk, upstream's cached extraction answers parsed as our
   pipeline parses its own (:mod:`.fragments`), then, for every chunk of a row's
   chunk list still without a fragment (its extraction is not cached), one
   fragment carrying its piece of the row's ``<SEP>``-joined description (or the
   whole, a summary; a relation's: an equal share of its weight). The answers are
   also filed under our extractor's keys;
5. rows no imported chunk contributes to (those of skipped documents) go again;
   rows the workspace held that imported documents also contribute to are
   rebuilt from all their fragments by the insert's rules, descriptions joined.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import asyncpg
import numpy as np

from ...config import Settings
from ...db.pool import WorkspacePool, without_statement_timeout
from ...errors import EmbeddingMismatch, InvalidInput, ReembedConflict
from ...llm.tokenizer import Tokenizer
from ...store.graph import GraphStore
from ...store.rows import EntityRow, RelationRow, canonical_pair
from ...store.statistics import StatisticsStore
from ...store.transfer import CacheImport, TransferStore
from ...store.uow import session
from ..intake import md5_id
from ..merge import build_entity, build_relation, with_context_tokens
from ..summary import Summarizer
from .file_source import FileSource
from .formats import model_suffix
from .fragments import ImportedChunk, fragments_of
from .pg_source import GRAPH_KINDS, GraphKind, PgSource
from .records import Embedding, Source
from .report import ImportCallback, ImportProgress, ImportReport, ignore_import_progress

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 500
DOCUMENT_BATCH = 32
"""Documents per batch: a document may be large, a chunk or a vector is not."""

PHASES = (
    "documents",
    "statuses",
    "chunks",
    "chunk_vectors",
    "cache",
    "entities",
    "entity_vectors",
    "relations",
    "relation_vectors",
    "fragments",
    "entity_chunks",
    "relation_chunks",
    "finishing",
)


@dataclass(frozen=True, slots=True)
class Target:
    """The workspace imported into: its pool, settings, tokenizer and embedding model."""

    pool: WorkspacePool
    workspace: str
    settings: Settings
    tokenizer: Tokenizer
    embedding_dim: int
    embedding_model: str | None


async def open_source(
    source: str | os.PathLike[str],
    source_workspace: str | None = None,
    *,
    embedding_model: str | None = None,
    graph: str = "auto",
    connect_timeout: float = 10.0,
) -> Source:
    """The source to import: a ``postgresql://`` DSN (``source_workspace``: upstream's
    ``workspace`` value, default ``default``) or a working directory (``source_workspace``:
    its subfolder, if given)."""
    if graph not in GRAPH_KINDS:
        raise InvalidInput(f"graph must be one of {', '.join(GRAPH_KINDS)}, got {graph!r}")
    text = str(source)
    if text.startswith(("postgresql://", "postgres://")):
        pg = PgSource(
            text,
            source_workspace,
            embedding_model=embedding_model,
            graph=cast(GraphKind, graph),
            connect_timeout=connect_timeout,
        )
        await pg.open()
        return pg
    folder = Path(source).expanduser()
    if source_workspace:
        if Path(source_workspace).name != source_workspace or source_workspace in (".", ".."):
            raise InvalidInput(f"source workspace {source_workspace!r} must be a folder name")
        folder = folder / source_workspace
    files = FileSource(folder, embedding_model)
    files.check()
    return files


def check_embedding(found: Embedding, given: str | None, target: Target) -> str:
    """Refuse vectors of another dimension or model than the target's; describe the match.

    The source's model is read from its data where upstream records it (its PostgreSQL
    vector tables are named after it), else ``given`` must name it; when both exist,
    they must agree.
    """
    if found.dim is None:
        return "the source holds no vectors"
    if found.dim != target.embedding_dim:
        raise EmbeddingMismatch(
            f"{found.where}: vectors of {found.dim} dimensions, but workspace {target.workspace!r} "
            f"holds {target.embedding_dim}-dimensional ones; import into a workspace created with "
            "the model upstream used"
        )
    dim = found.dim
    recorded = f"{found.model}_{dim}d" if found.model else None
    if given and recorded and model_suffix(given, dim) != recorded:
        raise EmbeddingMismatch(
            f"{found.where}: upstream's vectors are of model {found.model!r}, not {given!r}"
        )
    source_key = recorded or (model_suffix(given, dim) if given else None)
    if source_key is None:
        raise EmbeddingMismatch(
            f"{found.where}: upstream's file storages do not record the embedding model; name the "
            "model upstream indexed with (embedding_model=..., --embedding-model)"
        )
    if not target.embedding_model:
        raise EmbeddingMismatch(
            f"workspace {target.workspace!r} records no embedding model to compare with {source_key!r}"
        )
    if model_suffix(target.embedding_model, target.embedding_dim) != source_key:
        raise EmbeddingMismatch(
            f"upstream's vectors are of model {found.model or given!r} ({dim} dimensions), but workspace "
            f"{target.workspace!r} embeds with {target.embedding_model!r}: its queries would be "
            "compared with vectors of another model. Import into a workspace of that model (then "
            "`lightrag-pg reembed` to move to another)"
        )
    return f"{found.model or given} ({dim} dimensions), as the workspace's"


class Importer:
    """One import of a source into a target workspace (see the module docstring).

    Every write goes through one connection held for the whole run (:attr:`conn`), which
    keeps the session's map of upstream's document ids to ours."""

    conn: asyncpg.Connection
    store: TransferStore

    def __init__(
        self,
        target: Target,
        source: Source,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: ImportCallback = ignore_import_progress,
    ) -> None:
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {batch_size}")
        self.target = target
        self.source = source
        self.size = batch_size
        self.progress = progress
        self.tag = source.tag
        self.report = ImportReport(source.description, target.workspace)
        self.totals: dict[str, int | None] = {}
        self.settings = target.settings

    # ------------------------------------------------------------ driver

    async def run(self, embedding_model: str | None = None) -> ImportReport:
        started = time.monotonic()
        async with self.target.pool.acquire() as conn:
            self.conn = conn
            self.store = TransferStore(conn)
            if await self.store.reembed_running():
                raise ReembedConflict(
                    f"workspace {self.target.workspace!r} is being re-embedded; finish or abort the "
                    "re-embed before importing"
                )
            found = await self.source.embedding()
            self.report.embedding = check_embedding(found, embedding_model, self.target)
            self.totals = await self.source.totals()
            await self.store.create_document_map()
            async with conn.transaction():
                if not await self.store.vectors_present():
                    await self.store.drop_hnsw()
                    self.report.indexes_deferred = True
            try:
                await self._phases()
            except asyncio.CancelledError:
                raise  # the next run builds the indexes (a search meanwhile scans: slower, exact)
            except BaseException:
                await self._build_indexes()
                raise
        self.report.seconds = round(time.monotonic() - started, 3)
        return self.report

    async def _build_indexes(self) -> None:
        """Build the HNSW indexes a bulk load dropped (or an interrupted one left missing)."""
        async with without_statement_timeout(self.conn):
            built = await self.store.build_hnsw(self.target.embedding_dim)
        self.report.indexes_built += built

    async def _phases(self) -> None:
        steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("documents", self._documents),
            ("statuses", self._statuses),
            ("chunks", self._chunks),
            ("chunk_vectors", self._chunk_vectors),
            ("cache", self._cache),
            ("entities", self._entities),
            ("entity_vectors", lambda: self._vectors("entity_vectors")),
            ("relations", self._relations),
            ("relation_vectors", lambda: self._vectors("relation_vectors")),
            ("fragments", self._exact_fragments),
            ("entity_chunks", self._fill_entities),
            ("relation_chunks", self._fill_relations),
            ("finishing", self._finish),
        ]
        for index, (phase, step) in enumerate(steps):
            self._phase = (phase, index)
            begun = time.monotonic()
            self._tick()
            await step()
            self.report.phase_seconds[phase] = round(time.monotonic() - begun, 3)
        stats = self.source.stats
        self.report.unreadable = dict(stats.unreadable)
        self.report.unreadable_examples = {k: list(v) for k, v in stats.examples.items()}
        self.report.totals = await self.store.imported_counts(self.tag)

    def _tick(self) -> None:
        phase, index = self._phase
        done, total = self.source.position.get(phase, (0, 0))
        unit = "rows" if phase == "fragments" else self.source.unit
        if not total:
            total = self.totals.get(phase) or 0
        self.progress(ImportProgress(phase, done, max(total, done), unit, index, len(PHASES)))

    async def _each(
        self, stream: AsyncIterator[Sequence[T]], write: Callable[[Sequence[T]], Awaitable[None]]
    ) -> None:
        """``write`` every batch of ``stream`` in turn, reading the next batch meanwhile."""
        pending: asyncio.Future[None] | None = None
        try:
            async for batch in stream:
                if pending is not None:
                    await pending
                    self._tick()
                pending = asyncio.ensure_future(write(batch)) if batch else None
            if pending is not None:
                await pending
                self._tick()
        finally:
            if pending is not None and not pending.done():
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)

    # ------------------------------------------------------------ documents

    async def _documents(self) -> None:
        count = self.report.count("documents")

        async def write(batch: Sequence[Any]) -> None:
            count.read += len(batch)
            docs: dict[str, tuple[str, str, str]] = {}
            mapped = []
            for d in batch:
                content = d.content.strip()
                if not content:
                    count.skip("empty text")
                    continue
                doc_id = md5_id("doc-", content)
                mapped.append((d.id, doc_id, doc_id not in docs))
                docs.setdefault(doc_id, (doc_id, content, d.file_path))
            async with self.conn.transaction():
                owners = await self.store.map_documents(mapped)
                new = [docs[ours] for upstream, ours, _ in mapped if upstream in owners]
                stored = await self.store.stored_documents([d[0] for d in new])
                written = await self.store.import_documents([d for d in new if d[0] not in stored])
            count.written += written
            count.kept += len(new) - written
            count.skip("same text as another upstream document", len(mapped) - len(new))

        await self._each(self.source.documents(DOCUMENT_BATCH), write)

    async def _statuses(self) -> None:
        count = self.report.count("statuses")
        skipped = self.report.skipped_documents

        async def write(batch: Sequence[Any]) -> None:
            count.read += len(batch)
            async with self.conn.transaction():
                outcomes = await self.store.import_statuses(batch, self.tag)
            for doc_id, outcome in outcomes.values():
                if outcome == "imported":
                    count.written += 1
                elif outcome == "resumed":
                    count.kept += 1
                elif outcome == "present":
                    count.skip("document already in the workspace")
                    if len(skipped) < 20 and doc_id:
                        skipped.append(doc_id)
                elif outcome == "duplicate":
                    count.skip("same text as another upstream document")
                else:
                    count.skip("no document text upstream")

        await self._each(self.source.statuses(self.size), write)
        after: str | None = None
        while True:
            async with self.conn.transaction():
                ids = await self.store.statusless_documents(after, self.size)
                if not ids:
                    return
                added = await self.store.pending_statuses(ids, self.tag)
            count.written += added
            self.report.pending_without_status += added
            after = ids[-1]

    # ------------------------------------------------------------ chunks, vectors, cache

    async def _chunks(self) -> None:
        count = self.report.count("chunks")

        async def write(batch: Sequence[Any]) -> None:
            rows = [(c.id, c.doc_id, c.order, c.tokens, c.content, c.file_path) for c in batch]
            async with self.conn.transaction():
                done = await self.store.import_chunks(rows, self.tag)
            self._counted(
                count,
                done.given,
                done.eligible,
                done.written,
                "document not imported or not processed upstream",
            )

        await self._each(self.source.chunks(self.size), write)

    def _counted(self, count: Any, given: int, eligible: int, written: int, reason: str) -> None:
        count.read += given
        count.written += written
        count.kept += eligible - written
        count.skip(reason, given - eligible)

    async def _chunk_vectors(self) -> None:
        count = self.report.count("chunk_vectors")

        async def write(batch: Sequence[Any]) -> None:
            ids = [v.key[0] for v in batch]
            async with self.conn.transaction():
                done = await self.store.import_chunk_vectors(ids, _matrix(batch), self.tag)
            self._counted(count, done.given, done.eligible, done.written, "chunk not imported")

        await self._each(self.source.chunk_vectors(self.size), write)

    async def _cache(self) -> None:
        count = self.report.count("cache")

        async def write(batch: Sequence[Any]) -> None:
            rows = [
                CacheImport(e.id, e.cache_type, e.mode, e.chunk_id, e.prompt, e.response, e.created_at)
                for e in {e.id: e for e in batch}.values()
            ]
            async with self.conn.transaction():
                written = await self.store.import_cache(rows)
            count.read += len(batch)
            count.written += written
            count.kept += len(batch) - written

        await self._each(self.source.cache(self.size), write)

    # ------------------------------------------------------------ graph rows

    async def _entities(self) -> None:
        count = self.report.count("entities")

        async def write(batch: Sequence[Any]) -> None:
            count.read += len(batch)
            unique = {e.name: e for e in batch}
            stored = await self.store.stored_entities(list(unique))
            rows = [
                EntityRow(
                    name=e.name,
                    entity_type=e.entity_type,
                    description=e.description,
                    source_ids=e.source_ids,
                    file_paths=e.file_paths,
                    created_at=e.created_at,
                )
                for name, e in unique.items()
                if name not in stored
            ]
            rows = with_context_tokens(rows, self.target.tokenizer)
            async with self.conn.transaction():
                written = await self.store.import_entities(rows)
            count.written += written
            count.kept += len(batch) - written

        await self._each(self.source.entities(self.size), write)

    async def _relations(self) -> None:
        count = self.report.count("relations")

        async def write(batch: Sequence[Any]) -> None:
            count.read += len(batch)
            unique = {canonical_pair(r.src, r.tgt): r for r in batch}
            stored = await self.store.stored_relations(list(unique))
            rows = [
                RelationRow(
                    src=pair[0],
                    tgt=pair[1],
                    keywords=r.keywords,
                    description=r.description,
                    weight=r.weight,
                    source_ids=r.source_ids,
                    file_paths=r.file_paths,
                    created_at=r.created_at,
                )
                for pair, r in unique.items()
                if pair not in stored
            ]
            rows = with_context_tokens(rows, self.target.tokenizer)
            async with self.conn.transaction():
                done = await self.store.import_relations(rows)
            count.written += done.written
            count.kept += len(batch) - done.given + done.eligible - done.written
            count.skip("an endpoint is not an entity", done.given - done.eligible)

        await self._each(self.source.relations(self.size), write)

    async def _vectors(self, kind: str) -> None:
        count = self.report.count(kind)
        relations = kind == "relation_vectors"
        stream = (
            self.source.relation_vectors(self.size) if relations else self.source.entity_vectors(self.size)
        )

        async def write(batch: Sequence[Any]) -> None:
            keyed = {canonical_pair(*v.key) if relations else v.key[0]: v for v in batch}
            values = list(keyed.values())
            contents = [v.content for v in values]
            async with self.conn.transaction():
                store = self.store
                if relations:
                    pairs = [canonical_pair(*v.key) for v in values]
                    done = await store.import_relation_vectors(pairs, contents, _matrix(values))
                else:
                    names = [v.key[0] for v in values]
                    done = await store.import_entity_vectors(names, contents, _matrix(values))
            count.read += len(batch)
            count.written += done.written
            count.kept += done.eligible - done.written + len(batch) - len(values)
            count.skip("its entity or relation is not imported", done.given - done.eligible)

        await self._each(stream, write)

    # ------------------------------------------------------------ fragments

    async def _imported_chunks(self) -> AsyncIterator[list[ImportedChunk]]:
        """The imported chunks with upstream's cached extraction answers, a page at a time."""
        after: str | None = None
        done = 0
        while True:
            async with session(self.target.pool) as s:
                page = await TransferStore(s.conn).imported_chunks_with_answers(self.tag, after, self.size)
            if not page:
                return
            after = page[-1]["id"]
            done += len(page)
            self.source.position["fragments"] = (done, max(done, self.totals.get("chunks") or 0))
            yield [
                ImportedChunk(r["id"], r["doc_id"], r["content"], r["file_path"], _answers(r["answers"]))
                for r in page
            ]

    async def _exact_fragments(self) -> None:
        entities, relations = self.report.count("entity_fragments"), self.report.count("relation_fragments")
        translated = self.report.count("translated_cache")

        async def write(chunks: Sequence[ImportedChunk]) -> None:
            found = fragments_of(chunks, self.settings)
            async with self.conn.transaction():
                store = self.store
                e = await store.add_entity_fragments(found.entities)
                r = await store.add_relation_fragments(found.relations)
                c = await store.import_cache(found.cache)
            entities.read += len(found.entities)
            entities.written += e
            relations.read += len(found.relations)
            relations.written += r
            translated.read += len(found.cache)
            translated.written += c
            translated.kept += len(found.cache) - c
            self.report.fragments_exact += e + r
            self.report.chunks_without_cached_extraction += found.chunks_without_answers

        await self._each(self._imported_chunks(), write)

    async def _fill_entities(self) -> None:
        count = self.report.count("entity_fragments")

        async def write(batch: Sequence[Any]) -> None:
            lists = [(c.key[0], c.chunk_ids) for c in batch]
            async with self.conn.transaction():
                written, swept = await self.store.fill_entity_fragments(lists, self.tag)
            count.written += written
            self.report.fragments_filled += written
            self.report.rows_swept += swept

        await self._each(self.source.entity_chunks(self.size), write)

    async def _fill_relations(self) -> None:
        count = self.report.count("relation_fragments")

        async def write(batch: Sequence[Any]) -> None:
            lists = [(canonical_pair(*c.key), c.chunk_ids) for c in batch if c.key[0] != c.key[1]]
            async with self.conn.transaction():
                written, swept = await self.store.fill_relation_fragments(lists, self.tag)
            count.written += written
            self.report.fragments_filled += written
            self.report.rows_swept += swept

        await self._each(self.source.relation_chunks(self.size), write)

    # ------------------------------------------------------------ finishing

    async def _finish(self) -> None:
        for step, run in (("merge", self._merge_mixed), ("indexes", self._build_indexes)):
            begun = time.monotonic()
            await run()
            self.report.phase_seconds[f"finishing: {step}"] = round(time.monotonic() - begun, 3)
        await StatisticsStore(self.conn).analyze_grown()

    async def _merge_mixed(self) -> None:
        """Rebuild the rows holding both imported and other contributions, from all their
        fragments, as a merge would (descriptions joined: no model is called; the stored
        vector stays until the row next changes)."""
        if not await self.store.foreign_documents(self.tag):
            return
        join = Summarizer(self.settings, self.target.tokenizer, None).join
        last: str | None = None
        while True:
            last, names = await self.store.mixed_entities(self.tag, last, self.size)
            if names:
                await self._rebuild_entities(names, join)
            if last is None:
                break
        last_pair: tuple[str, str] | None = None
        while True:
            last_pair, pairs = await self.store.mixed_relations(self.tag, last_pair, self.size)
            if pairs:
                await self._rebuild_relations(pairs, join)
            if last_pair is None:
                break

    async def _rebuild_entities(self, names: list[str], join: Callable[[list[str]], str]) -> None:
        async with self.conn.transaction():
            graph = GraphStore(self.conn)
            await graph.lock_entities(names)
            states = await graph.entity_states("", names)
            fragments: dict[str, list[Any]] = {}
            for f in await graph.entity_fragments(names):
                fragments.setdefault(f.entity_name, []).append(f)
            rows = []
            for name in names:
                state = states[name]
                if state.row is None or state.unrecorded or name not in fragments:
                    self.report.rows_not_merged += state.unrecorded
                    continue
                row, pieces = build_entity(name, fragments[name], self.settings, state.row.version)
                row = replace(row, description=join(pieces))
                stored = state.row
                if (row.entity_type, row.description, row.source_ids, row.file_paths) != (
                    stored.entity_type,
                    stored.description,
                    stored.source_ids,
                    stored.file_paths,
                ):
                    rows.append(row)
            written = await graph.write_entities(with_context_tokens(rows, self.target.tokenizer))
        self.report.rows_merged += len(written)

    async def _rebuild_relations(
        self, pairs: list[tuple[str, str]], join: Callable[[list[str]], str]
    ) -> None:
        async with self.conn.transaction():
            graph = GraphStore(self.conn)
            await graph.lock_relations(pairs)
            states = await graph.relation_states("", pairs)
            fragments: dict[tuple[str, str], list[Any]] = {}
            for f in await graph.relation_fragments(pairs):
                fragments.setdefault(f.pair, []).append(f)
            rows = []
            for pair in pairs:
                state = states[pair]
                if state.row is None or state.unrecorded or pair not in fragments:
                    self.report.rows_not_merged += state.unrecorded
                    continue
                row, pieces = build_relation(pair, fragments[pair], self.settings, state.row.version)
                row = replace(row, description=join(pieces))
                stored = state.row
                if (row.keywords, row.description, row.weight, row.source_ids, row.file_paths) != (
                    stored.keywords,
                    stored.description,
                    stored.weight,
                    stored.source_ids,
                    stored.file_paths,
                ):
                    rows.append(row)
            written, _ = await graph.write_relations(with_context_tokens(rows, self.target.tokenizer))
        self.report.rows_merged += len(written)


def _matrix(batch: Sequence[Any]) -> np.ndarray:
    return np.stack([np.asarray(v.vector, dtype=np.float32) for v in batch])


def _answers(value: Any) -> list[dict[str, Any]]:
    import json

    found = json.loads(value) if isinstance(value, str) else value
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


async def import_lightrag(
    target: Target,
    source: str | os.PathLike[str],
    source_workspace: str | None = None,
    *,
    embedding_model: str | None = None,
    graph: str = "auto",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: ImportCallback = ignore_import_progress,
) -> ImportReport:
    """Import the upstream workspace at ``source`` into ``target``; see the module docstring."""
    opened = await open_source(
        source,
        source_workspace,
        embedding_model=embedding_model,
        graph=graph,
        connect_timeout=target.settings.connect_timeout,
    )
    try:
        importer = Importer(target, opened, batch_size=batch_size, progress=progress)
        return await importer.run(embedding_model)
    finally:
        await opened.close()
