"""The ``LightRAG`` facade: one object per workspace, backed by one PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from collections.abc import Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Settings
from .db.connect import connect, split_connect_timeout
from .db.embedded import resolve_dsn
from .db.identifiers import validate_workspace
from .db.pool import SharedPool, WorkspacePool, create_pool
from .db.translate import translated
from .db.workspace import WorkspaceInfo, create_workspace, drop_workspace, list_workspaces, read_info
from .defaults import choose_extractor, default_embedding, default_llm
from .errors import ConfigurationError, InvalidInput, LightRAGError
from .index.progress import Progress, ProgressCallback, ignore_progress
from .index.reembed import DEFAULT_BATCH_SIZE as DEFAULT_REEMBED_BATCH
from .index.reembed import ReembedCallback, Reembedder, ReembedResult, ignore_reembed_progress
from .llm.cached import CachedKeywords, CachedLLM
from .llm.embedding_func import EmbeddingFunc
from .llm.memo import QueryMemo
from .llm.tokenizer import LazyTokenizer, Tokenizer, encoding_name, get_tokenizer
from .llm.wrap import LLMFunc, wrap_embedding, wrap_llm
from .offline.keywords import offline_keywords, rule_version
from .query.engine import QueryEngine, QueryStream, RerankFunc
from .query.param import QueryParam
from .store.cache import PoolCache
from .store.clearing import ClearResult, clear_workspace
from .store.pipeline_state import PipelineStateStore
from .store.rows import DocumentRow
from .store.subgraph import KnowledgeGraph, SubgraphStore
from .store.uow import Stores, session, unit_of_work
from .types import DocStatus

if TYPE_CHECKING:  # loaded on first use, so that a query does not import them
    from .export import ExportResult
    from .index.deletion import DeletionResult, DocumentDeleter
    from .index.extract import Extractor
    from .index.graph_edit import GraphEditor
    from .index.intake import SkippedDuplicate
    from .index.pipeline import Pipeline

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class InsertResult:
    """What an insert did: the ids it added, those it skipped, and the run's counters.

    ``skipped_ids`` were already in the workspace (with this content, or
    without ``replace``); ``replaced_ids`` were in the workspace with other
    content and were replaced; ``duplicates`` are texts of this call whose
    content equals an earlier text of the same call, with the document they
    duplicate.
    """

    track_id: str
    new_ids: list[str]
    skipped_ids: list[str]
    progress: Progress
    duplicates: list[SkippedDuplicate] = field(default_factory=list)
    replaced_ids: list[str] = field(default_factory=list)


def new_track_id() -> str:
    """A fresh id for the documents of one insert call: ``insert-<UTC time>-<random>``."""
    return f"insert-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"


def _run_sync(rag: LightRAG, coro: Coroutine[Any, Any, T]) -> T:
    async def runner() -> T:
        opened = rag._pool is None
        if opened:
            await rag.initialize()
        try:
            return await coro
        finally:
            if opened:
                await rag.finalize()

    return asyncio.run(runner())


class LightRAG:
    """Graph-based retrieval-augmented generation over one workspace of one database.

    ``dsn`` defaults to ``$LIGHTRAG_PG_DSN``, else an embedded PostgreSQL
    (``pip install 'lightrag-pg[embedded]'``). ``workspace`` names the schema
    holding every table. ``llm_model_func`` has upstream LightRAG's signature
    ``async (prompt, system_prompt=None, history_messages=[], **kwargs) -> str``.
    ``rerank_model_func`` (optional) is ``async (query, documents, top_n)``
    returning ``[{"index": i, "relevance_score": s}, ...]``. Any
    :class:`~lightrag_pg.config.Settings` field can be passed as a keyword.
    ``pool`` (instead of ``dsn``): a :class:`~lightrag_pg.db.pool.SharedPool` to
    use, with other workspaces, instead of a pool of its own; ``pool_min_size``,
    ``pool_max_size``, ``statement_timeout_ms`` and ``pool_acquire_timeout`` are
    then the shared pool's, and :meth:`finalize` leaves it open.
    """

    def __init__(
        self,
        dsn: str | None = None,
        workspace: str = "default",
        llm_model_func: LLMFunc | None = None,
        embedding_func: EmbeddingFunc | None = None,
        rerank_model_func: RerankFunc | None = None,
        *,
        pool: SharedPool | None = None,
        **settings: Any,
    ) -> None:
        if pool is not None and dsn is not None:
            raise ConfigurationError("LightRAG takes a dsn or a shared pool, not both")
        self.settings = Settings.from_kwargs(**settings)
        self.workspace = validate_workspace(workspace)
        self._shared = pool
        self._dsn = pool.dsn if pool else dsn
        self._connect_timeout = pool.connect_timeout if pool else self.settings.connect_timeout
        self.llm_model_func = llm_model_func
        self.embedding_func = embedding_func
        self.info: WorkspaceInfo | None = None
        self._pool: WorkspacePool | None = None
        self._llm: CachedLLM | None = None
        self._embed: EmbeddingFunc | None = None
        self._pipeline_instance: Pipeline | None = None
        self._deleter_instance: DocumentDeleter | None = None
        self._editor_instance: GraphEditor | None = None
        self._engine_instance: QueryEngine | None = None
        self.rerank_model_func = rerank_model_func
        encoding_name(self.settings.tokenizer_name)  # an unknown name fails here

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of ``settings.tokenizer_name``, built on first use (or while
        :meth:`initialize` connects)."""
        return get_tokenizer(self.settings.tokenizer_name)

    async def initialize(self) -> None:
        """Start the embedded server if needed, create or upgrade the workspace, open the pool.

        The tokenizer is built in a worker thread meanwhile (with ``query_memo``, only
        when a query first needs it)."""
        if self._pool is not None:
            return
        if self.settings.query_memo:
            await self._open()
            return
        building = asyncio.ensure_future(asyncio.to_thread(get_tokenizer, self.settings.tokenizer_name))
        try:
            await self._open()
        except BaseException:
            await asyncio.gather(building, return_exceptions=True)
            raise
        await building

    async def _open(self) -> None:
        if self.embedding_func is None:
            self.embedding_func = await asyncio.to_thread(default_embedding, self.settings)
        if self.llm_model_func is None:
            self.llm_model_func = default_llm(self.settings)
        if self._shared is None:
            dsn = await asyncio.to_thread(resolve_dsn, self._dsn, self.settings.data_dir)
            self._dsn, self._connect_timeout = split_connect_timeout(dsn, self.settings.connect_timeout)
        assert self._dsn is not None
        conn = await connect(self._dsn, timeout=self._connect_timeout)
        async with translated():
            try:
                self.info = await create_workspace(
                    conn,
                    self._dsn,
                    self.workspace,
                    self.embedding_func.embedding_dim,
                    self.embedding_func.model_name,
                )
            finally:
                await conn.close()
        if self._shared is not None:
            self._pool = self._shared.workspace(self.workspace, self.info.embedding_dim)
        else:
            self._pool = await create_pool(
                self._dsn,
                self.workspace,
                embedding_dim=self.info.embedding_dim,
                min_size=self.settings.pool_min_size,
                max_size=self.settings.pool_max_size,
                statement_timeout_ms=self.settings.statement_timeout_ms,
                connect_timeout=self._connect_timeout,
                acquire_timeout=self.settings.pool_acquire_timeout,
            )
        s = self.settings
        self._embed = wrap_embedding(self.embedding_func, settings=s)
        if self.llm_model_func is not None:
            cache = PoolCache(self._pool) if s.enable_llm_cache else None
            self._llm = CachedLLM(wrap_llm(self.llm_model_func, settings=s), cache, s.llm_deadline)

    @property
    def _embedder(self) -> EmbeddingFunc:
        if self._embed is None:
            raise LightRAGError("LightRAG is not initialized: call `await rag.initialize()` first")
        return self._embed

    def _engine(self) -> QueryEngine:
        if self._engine_instance is None:
            self._engine_instance = QueryEngine(
                pool=self.pool,
                settings=self.settings,
                tokenizer=LazyTokenizer(self.settings.tokenizer_name),
                embed=self._embedder,
                llm=self._llm,
                keyword_fallback=CachedKeywords(
                    offline_keywords,
                    PoolCache(self.pool) if self.settings.enable_llm_cache else None,
                    rule_version(),
                ),
                rerank=self.rerank_model_func,
                memo=self._query_memo(),
            )
        return self._engine_instance

    def _query_memo(self) -> QueryMemo | None:
        s = self.settings
        if not (s.query_memo and s.enable_llm_cache) or self.embedding_func is None:
            return None
        return QueryMemo(
            PoolCache(self.pool),
            self.embedding_func.model_name,
            self.embedding_func.embedding_dim,
            encoding_name(s.tokenizer_name),
        )

    def _pipeline(self) -> Pipeline:
        if self._pipeline_instance is None:
            from .index.extract import LLMExtractor, NLPExtractor
            from .index.locks import DocumentLocks
            from .index.pipeline import Pipeline, scheduled_embedding, scheduled_llm, scheduler_width
            from .index.summary import Summarizer
            from .index.writer import GraphWriter

            s = self.settings
            kind = choose_extractor(s, self.llm_model_func)
            width = scheduler_width(s, offline=not (kind == "llm" and self._llm))
            llm = scheduled_llm(self._llm, self.workspace, width) if self._llm else None
            extractor: Extractor = LLMExtractor(llm, s) if kind == "llm" and llm else NLPExtractor(s)
            summarizer = Summarizer(s, self.tokenizer, llm if kind == "llm" else None)
            embed = scheduled_embedding(self._embedder, self.workspace, s.embedding_batch_num, width)
            offline = extractor.name == "nlp"
            self._pipeline_instance = Pipeline(
                pool=self.pool,
                settings=s,
                tokenizer=self.tokenizer,
                extractor=extractor,
                embed=embed,
                writer=GraphWriter(self.pool, embed, summarizer, s, entity_names_only=offline),
                locks=DocumentLocks(self.dsn, self.workspace, self._connect_timeout),
            )
        return self._pipeline_instance

    def _deleter(self) -> DocumentDeleter:
        if self._deleter_instance is None:
            pipeline = self._pipeline()
            from .index.deletion import DocumentDeleter

            self._deleter_instance = DocumentDeleter(
                self.pool, pipeline.writer, pipeline.locks, self.settings
            )
        return self._deleter_instance

    async def ainsert(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None = None,
        file_paths: str | Sequence[str] | None = None,
        *,
        progress: ProgressCallback = ignore_progress,
        replace: bool = False,
    ) -> InsertResult:
        """Insert documents and process them (and any left unfinished by an earlier run).

        Documents already in the workspace are not inserted again. With
        ``replace=True``, a document whose id is in the workspace with other
        content is replaced: in one transaction its old contributions are
        removed (as :meth:`adelete_by_doc_id` does, keeping the cached
        extraction answers so unchanged chunks cost no LLM call) and the new
        version is stored as pending; it is then processed like a new
        document. Same content stays a no-op. A document another process is
        indexing cannot be replaced (:class:`~lightrag_pg.errors.DocumentBusy`).
        When this returns, each of the given documents is ``processed`` or
        ``failed`` (with its error message in ``doc_status``); documents
        another process is working on are waited for.
        """
        queued = await self.aenqueue(texts, ids, file_paths, replace=replace)
        state = await self._pipeline().process(
            progress, wait_for={*queued.new_ids, *queued.skipped_ids, *queued.replaced_ids}
        )
        return dataclasses.replace(queued, progress=state)

    async def _replace_changed(self, docs: list[DocumentRow]) -> list[str]:
        async with session(self.pool) as s:
            stored = {d.id: d.content for d in await s.docs.get([d.id for d in docs])}
        changed = [d for d in docs if d.id in stored and stored[d.id] != d.content]
        if changed:
            await self._deleter().delete([d.id for d in changed], keep_cache=True, replacements=changed)
        return sorted(d.id for d in changed)

    async def adelete_by_doc_id(
        self, doc_ids: str | Sequence[str], *, keep_cache: bool = False, wait: float = 0.0
    ) -> DeletionResult:
        """Delete documents by id, in one transaction, as if they had never been inserted.

        Their status, chunks, chunk vectors, graph links, fragments and (unless
        ``keep_cache``) their chunks' cached extraction answers go; every
        entity and relation they contributed to is rebuilt once from what the
        other documents said (re-embedded only if its text changed) or deleted
        when nothing remains. Unknown ids raise
        :class:`~lightrag_pg.errors.DocumentNotFound` and change nothing. A
        document another process is indexing is waited for up to ``wait``
        seconds, then refused with :class:`~lightrag_pg.errors.DocumentBusy`.
        Workspaces indexed before provenance was recorded (migration 0006)
        refuse with :class:`~lightrag_pg.errors.ProvenanceMissing` when a
        touched row holds such older contributions.
        """
        ids = [doc_ids] if isinstance(doc_ids, str) else list(doc_ids)
        if not ids:
            raise InvalidInput("no document ids given")
        deleter = self._deleter()
        found = await deleter.resolve(ids=ids)
        return await deleter.delete(found, keep_cache=keep_cache, wait=wait)

    async def adelete_by_file_path(
        self, file_paths: str | Sequence[str], *, keep_cache: bool = False, wait: float = 0.0
    ) -> DeletionResult:
        """Delete every document stored with one of ``file_paths``; as :meth:`adelete_by_doc_id`
        (a path that matches no document raises :class:`~lightrag_pg.errors.DocumentNotFound`)."""
        paths = [file_paths] if isinstance(file_paths, str) else list(file_paths)
        if not paths:
            raise InvalidInput("no file paths given")
        deleter = self._deleter()
        found = await deleter.resolve(file_paths=paths)
        return await deleter.delete(found, keep_cache=keep_cache, wait=wait)

    def delete_by_doc_id(self, doc_ids: str | Sequence[str], *, keep_cache: bool = False) -> DeletionResult:
        """Synchronous :meth:`adelete_by_doc_id`."""
        return _run_sync(self, self.adelete_by_doc_id(doc_ids, keep_cache=keep_cache))

    def insert(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None = None,
        file_paths: str | Sequence[str] | None = None,
    ) -> InsertResult:
        """Synchronous :meth:`ainsert` (initializes and finalizes around the call if needed)."""
        return _run_sync(self, self.ainsert(texts, ids, file_paths))

    async def aprocess_pending(self, *, progress: ProgressCallback = ignore_progress) -> Progress:
        """Process documents left pending, processing or failed by earlier runs."""
        return await self._pipeline().process(progress)

    async def aquery(self, query: str, param: QueryParam | None = None) -> str:
        """Answer ``query`` (the fail response when nothing relevant is found).

        With ``param.only_need_context`` / ``only_need_prompt`` the context or
        the full prompt is returned instead. Without an LLM the retrieved
        knowledge is returned, formatted for reading.
        """
        return await self._engine().text(query, param or QueryParam())

    async def aquery_stream(self, query: str, param: QueryParam | None = None) -> QueryStream:
        """Like :meth:`aquery`, as an async iterator of text pieces with ``.references``."""
        return await self._engine().stream(query, param or QueryParam())

    async def aquery_data(self, query: str, param: QueryParam | None = None) -> dict[str, Any]:
        """The retrieved entities, relationships, chunks and references; no answer generated."""
        return await self._engine().data(query, param or QueryParam())

    def query(self, query: str, param: QueryParam | None = None) -> str:
        """Synchronous :meth:`aquery`."""
        return _run_sync(self, self.aquery(query, param))

    def query_data(self, query: str, param: QueryParam | None = None) -> dict[str, Any]:
        """Synchronous :meth:`aquery_data`."""
        return _run_sync(self, self.aquery_data(query, param))

    async def finalize(self) -> None:
        """Close the connection pool."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            if self._pipeline_instance is not None:
                await self._pipeline_instance.close()
            self._pipeline_instance = None
            self._deleter_instance = None
            self._editor_instance = None
            self._engine_instance = None
            self._llm = None
            self._embed = None
            await pool.close()

    async def __aenter__(self) -> LightRAG:
        await self.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.finalize()

    @property
    def dsn(self) -> str:
        """The DSN in use (known after :meth:`initialize`)."""
        if self._dsn is None:
            raise LightRAGError("call initialize() first")
        return self._dsn

    @property
    def pool(self) -> WorkspacePool:
        """The workspace's connection pool."""
        if self._pool is None:
            raise LightRAGError("LightRAG is not initialized: call `await rag.initialize()` first")
        return self._pool

    def unit_of_work(self) -> AbstractAsyncContextManager[Stores]:
        """``async with rag.unit_of_work() as uow:`` one connection, one transaction, all stores."""
        return unit_of_work(self.pool)

    def session(self) -> AbstractAsyncContextManager[Stores]:
        """``async with rag.session() as s:`` one connection for reads, autocommit."""
        return session(self.pool)

    async def list_workspaces(self) -> list[str]:
        """Every lightrag_pg workspace in this database."""
        async with self.pool.acquire() as conn:
            return await list_workspaces(conn)

    async def drop_workspace(self) -> None:
        """Drop this workspace (schema and graph) and close the pool."""
        async with self.pool.acquire() as conn:
            await drop_workspace(conn, self.workspace)
        await self.finalize()

    async def aget_knowledge_graph(
        self, node_label: str, max_depth: int = 3, max_nodes: int = 1000
    ) -> KnowledgeGraph:
        """The subgraph around entity ``node_label`` for visualisation (``"*"``: the whole graph's
        highest-degree nodes), in upstream LightRAG's shape (``.to_dict()`` for JSON).

        Breadth-first in SQL up to ``max_depth`` hops; at most ``max_nodes`` nodes, the
        closest first, then the highest degree, then by name (``is_truncated`` says some
        were left out); the edges are all relations among the nodes kept. Two statements.
        """
        async with self.session() as s:
            return await SubgraphStore(s.conn).knowledge_graph(node_label, max_depth, max_nodes)

    async def aget_graph_labels(self) -> list[str]:
        """Every entity name of the workspace, in byte order."""
        async with self.session() as s:
            return await SubgraphStore(s.conn).labels()

    async def aget_popular_labels(self, limit: int = 300) -> list[str]:
        """The ``limit`` entity names of highest degree (ties by name)."""
        async with self.session() as s:
            return await SubgraphStore(s.conn).popular_labels(limit)

    async def asearch_labels(self, query: str, limit: int = 50) -> list[str]:
        """Entity names matching ``query``, best first (whole name, prefix, start of a word,
        substring, then near misses by shared trigrams); case-insensitive."""
        async with self.session() as s:
            return await SubgraphStore(s.conn).search_labels(query, limit)

    async def aget_docs_paginated(
        self,
        status: DocStatus | str | Sequence[DocStatus | str] | None = None,
        page: int = 1,
        page_size: int = 50,
        sort_field: str = "updated_at",
        sort_direction: str = "desc",
    ) -> dict[str, Any]:
        """One page of documents with status ``status`` (a list: any of them; ``None``: all), in upstream's
        ``/documents/paginated`` shape: ``documents``, ``pagination``, ``status_counts``. Each
        document also carries ``entities_count`` and ``relations_count``: how many entities and
        relations it contributed to the graph.

        ``sort_field`` is one of ``created_at``, ``updated_at``, ``id``, ``file_path``;
        ``sort_direction`` ``asc`` or ``desc``; ties are broken by id. One statement.
        """
        async with self.session() as s:
            return await PipelineStateStore(s.conn).page(status, page, page_size, sort_field, sort_direction)

    async def aget_docs_by_track_id(self, track_id: str) -> dict[str, Any]:
        """The documents enqueued by one insert call (``InsertResult.track_id``), with a
        summary by status: ``track_id``, ``documents``, ``total_count``, ``status_summary``."""
        async with self.session() as s:
            return await PipelineStateStore(s.conn).by_track(track_id)

    async def aget_status_counts(self) -> dict[str, int]:
        """Number of documents in each status (zero included) and ``all``."""
        async with self.session() as s:
            return await PipelineStateStore(s.conn).counts()

    async def areprocess_failed(self, *, progress: ProgressCallback = ignore_progress) -> Progress:
        """Process the failed documents again (and whatever else is pending), waiting for
        those another process holds; like :meth:`aprocess_pending`, which also retries them."""
        async with self.session() as s:
            failed = await s.docs.ids_with_status(DocStatus.FAILED)
        return await self._pipeline().process(progress, wait_for=failed)

    async def aclear_cache(self, cache_types: Sequence[str] | None = None) -> int:
        """Delete cached LLM answers of the given types (``extract``, ``summary``,
        ``keywords``, ``query``, and ``query_memo``: the vectors and token counts kept
        by ``query_memo``; ``None``: all); return how many were deleted."""
        async with self.session() as s:
            return await PipelineStateStore(s.conn).clear_cache(cache_types)

    async def aclear_workspace(self, *, keep_cache: bool = False) -> ClearResult:
        """Empty the workspace in one transaction: every document (any status) with its
        chunks, vectors, entities, relations, fragments and AGE mirror, and (unless
        ``keep_cache``) every cached LLM answer. The workspace, its embedding model and
        settings stay. Refused with :class:`~lightrag_pg.errors.DocumentBusy` while
        documents are being indexed (here or by another process) and with
        :class:`~lightrag_pg.errors.ReembedConflict` while a re-embed runs; nothing is
        changed then."""
        graph_enabled = bool(self.info and self.info.graph_enabled)
        async with self.unit_of_work() as uow:
            return await clear_workspace(
                uow.conn, self.workspace, graph_enabled=graph_enabled, keep_cache=keep_cache
            )

    async def aexport_data(
        self,
        output_path: str | os.PathLike[str],
        file_format: str = "csv",
        include_vector_data: bool = False,
        *,
        include_chunks: bool = False,
    ) -> ExportResult:
        """Export entities and relations (and chunks with ``include_chunks``) to ``output_path``.

        ``file_format``: ``csv``, ``json``, ``md``, ``xlsx`` (needs ``pip install
        'lightrag-pg[export]'``) or ``graphml`` (graph only, for Gephi, yEd,
        Cytoscape). Rows are streamed from one snapshot; the file is written under
        a temporary name and renamed when complete, so a failure leaves nothing
        half-written. An unwritable path raises :class:`InvalidInput` before any read.
        """
        from .export import export_workspace

        return await export_workspace(
            self.pool,
            output_path,
            file_format,
            include_vector_data=include_vector_data,
            include_chunks=include_chunks,
        )

    async def aenqueue(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None = None,
        file_paths: str | Sequence[str] | None = None,
        *,
        track_id: str | None = None,
        replace: bool = False,
    ) -> InsertResult:
        """Store documents as pending without processing them; :meth:`aprocess_pending` does.

        Validation and ``replace`` are :meth:`ainsert`'s: bad input raises before
        anything is written.
        """
        from .index.intake import prepare_batch

        track_id = track_id or new_track_id()
        intake = prepare_batch(
            texts, ids, file_paths, track_id=track_id, max_bytes=self.settings.max_document_bytes
        )
        docs = intake.documents
        new_ids = await self._pipeline().enqueue(docs)
        added = set(new_ids)
        known = [d for d in docs if d.id not in added]
        replaced = await self._replace_changed(known) if replace and known else []
        return InsertResult(
            track_id=track_id,
            new_ids=new_ids,
            skipped_ids=[d.id for d in known if d.id not in set(replaced)],
            progress=Progress(),
            duplicates=intake.duplicates,
            replaced_ids=replaced,
        )

    async def areembed(
        self,
        embedding_func: EmbeddingFunc,
        *,
        batch_size: int = DEFAULT_REEMBED_BATCH,
        progress: ReembedCallback = ignore_reembed_progress,
    ) -> ReembedResult:
        """Change the workspace's embedding model in place, and switch this instance to it.

        Every entity, relation and chunk vector is embedded again with
        ``embedding_func``, ``batch_size`` texts at a time, into staging tables,
        while queries keep using the current vectors (this instance's, and other
        processes'); one transaction then swaps the new vectors in (HNSW indexes
        built beforehand) and records the new model and dimension. Interrupted,
        it is resumed by calling it again with the same model: only vectors not
        yet staged, or whose text changed since, are embedded. Inserts and
        deletes may run meanwhile; processes still using the old model must be
        restarted with the new one afterwards. Another model than the one being
        staged, or a second re-embed at the same time, raises
        :class:`~lightrag_pg.errors.ReembedConflict`. Details: :mod:`lightrag_pg.index.reembed`.
        """
        embed = wrap_embedding(embedding_func, settings=self.settings)
        result = await Reembedder(
            self.pool,
            self.dsn,
            self.workspace,
            embed,
            batch_size=batch_size,
            connect_timeout=self._connect_timeout,
        ).run(progress)
        if self._pipeline_instance is not None:
            await self._pipeline_instance.close()
        self._pipeline_instance = None
        self._deleter_instance = None
        self._editor_instance = None
        self._engine_instance = None
        self.embedding_func, self._embed = embedding_func, embed
        async with self.pool.acquire() as conn:
            info = await read_info(conn, self.workspace)
        self.info = info
        if info is not None:
            self.pool.embedding_dim = info.embedding_dim
        return result

    # ------------------------------------------------------------ graph editing

    def _editor(self) -> GraphEditor:
        if self._editor_instance is None:
            from .index.graph_edit import GraphEditor

            self._editor_instance = GraphEditor(self.pool, self._pipeline().writer, self.settings)
        return self._editor_instance

    async def acreate_entity(self, entity_name: str, entity_data: dict[str, Any]) -> dict[str, Any]:
        """Create an entity from ``entity_data`` (``description`` required, ``entity_type``),
        embedded, in one transaction; return :meth:`aget_entity_info`'s dict.

        The data is recorded as a manual contribution (chunk id ``manual_creation``),
        so deleting documents never removes it. An existing name raises
        :class:`~lightrag_pg.errors.GraphItemExists`.
        """
        await self._editor().create_entity(entity_name, entity_data)
        return await self.aget_entity_info(entity_name.strip())

    async def aedit_entity(
        self,
        entity_name: str,
        updated_data: dict[str, Any],
        allow_rename: bool = True,
        allow_merge: bool = False,
    ) -> dict[str, Any]:
        """Edit an entity's ``entity_type`` and ``description``, or rename it with
        ``entity_name``, in one transaction (re-embedded; the AGE mirror follows).

        The edit is a manual contribution that pins the type and description
        (documents indexed or deleted later do not change them). A rename moves
        every contribution, relation and link to the new name; renaming onto an
        existing entity raises :class:`~lightrag_pg.errors.GraphItemExists` unless
        ``allow_merge`` (then it is :meth:`amerge_entities`). Unknown names raise
        :class:`~lightrag_pg.errors.GraphItemNotFound`. Returns :meth:`aget_entity_info`.
        """
        name = await self._editor().edit_entity(
            entity_name, updated_data, allow_rename=allow_rename, allow_merge=allow_merge
        )
        return await self.aget_entity_info(name)

    async def amerge_entities(
        self,
        source_entities: Sequence[str],
        target_entity: str,
        merge_strategy: dict[str, str] | None = None,
        target_entity_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Merge ``source_entities`` into ``target_entity`` (created if missing), in one transaction.

        Every contribution of the sources becomes the target's, so its fields
        follow the insert's merge rules over the union (descriptions joined, or
        summarised when the rules call for it); relations are redirected to the
        target, those between merged entities dropped, and those landing on one
        pair merged. ``target_entity_data`` (``entity_type``, ``description``)
        pins fields as :meth:`aedit_entity` does. ``merge_strategy`` is accepted
        for compatibility with upstream, where it is deprecated, and not used.
        A target among the sources raises :class:`~lightrag_pg.errors.InvalidInput`.
        """
        if merge_strategy is not None and not isinstance(merge_strategy, dict):
            raise InvalidInput("merge_strategy must be a dict or None")
        await self._editor().merge_entities(source_entities, target_entity, target_entity_data)
        return await self.aget_entity_info(target_entity.strip())

    async def adelete_by_entity(self, entity_name: str) -> dict[str, Any]:
        """Delete an entity with its relations, vectors, contributions and AGE rows, in one
        statement; returns ``status``, ``entity_name``, ``relations_deleted`` and ``message``."""
        relations = await self._editor().delete_entity(entity_name)
        name = entity_name.strip()
        return {
            "status": "success",
            "entity_name": name,
            "relations_deleted": relations,
            "message": f"entity {name!r} and {relations} relations deleted",
        }

    async def acreate_relation(
        self, source_entity: str, target_entity: str, relation_data: dict[str, Any]
    ) -> dict[str, Any]:
        """Create a relation between two existing entities from ``relation_data``
        (``description`` required, ``keywords``, ``weight`` default 1.0), in one transaction.

        Relations are undirected. It is a manual contribution, and each endpoint
        gets a manual anchor, so deleting documents keeps all three. Returns
        :meth:`aget_relation_info`.
        """
        await self._editor().upsert_relation(source_entity, target_entity, relation_data, create=True)
        return await self.aget_relation_info(source_entity.strip(), target_entity.strip())

    async def aedit_relation(
        self, source_entity: str, target_entity: str, updated_data: dict[str, Any]
    ) -> dict[str, Any]:
        """Edit a relation's ``keywords``, ``description`` or ``weight`` in one transaction
        (re-embedded); the edit pins those fields as a manual contribution. Returns
        :meth:`aget_relation_info`."""
        await self._editor().upsert_relation(source_entity, target_entity, updated_data, create=False)
        return await self.aget_relation_info(source_entity.strip(), target_entity.strip())

    async def adelete_by_relation(self, source_entity: str, target_entity: str) -> dict[str, Any]:
        """Delete the relation between two entities (either order) with its vector and
        contributions, in one statement; returns ``status`` and ``message``."""
        await self._editor().delete_relation(source_entity, target_entity)
        return {
            "status": "success",
            "src_entity": source_entity.strip(),
            "tgt_entity": target_entity.strip(),
            "message": f"relation {source_entity.strip()!r} - {target_entity.strip()!r} deleted",
        }

    async def aget_entity_info(self, entity_name: str, include_vector_data: bool = False) -> dict[str, Any]:
        """An entity in upstream's shape (``entity_name``, ``source_id``, ``graph_data``;
        ``vector_data`` with ``include_vector_data``) plus ``contributions``: what each
        chunk, or a manual edit, said about it. Unknown names raise
        :class:`~lightrag_pg.errors.GraphItemNotFound`."""
        return await self._editor().entity_info(entity_name, include_vector_data)

    async def aget_relation_info(
        self, src_entity: str, tgt_entity: str, include_vector_data: bool = False
    ) -> dict[str, Any]:
        """A relation in upstream's shape (``src_entity``, ``tgt_entity``, ``source_id``,
        ``graph_data``; ``vector_data``) plus ``contributions``; see :meth:`aget_entity_info`."""
        return await self._editor().relation_info(src_entity, tgt_entity, include_vector_data)

    async def ainsert_custom_kg(
        self, custom_kg: dict[str, Any], full_doc_id: str | None = None
    ) -> dict[str, Any]:
        """Insert a knowledge graph given as ``{"chunks", "entities", "relationships"}``
        (upstream's shape; see :mod:`lightrag_pg.index.custom_kg`) in one transaction.

        The chunks become one processed document (``full_doc_id``, default
        ``doc-`` plus the payload's MD5) that :meth:`adelete_by_doc_id` removes
        again; entities and relations merge with the workspace's by the insert's
        rules. A ``source_id`` naming no chunk of the payload, or a relationship
        endpoint that is no entity of the payload or the workspace, raises
        :class:`~lightrag_pg.errors.InvalidInput` and changes nothing. Returns
        ``status``, ``doc_id`` and the numbers of chunks, entities and relationships.
        """
        from .index.custom_kg import CustomGraph, plan_custom_graph
        from .index.custom_kg import summary as custom_graph_summary

        graph = CustomGraph(custom_kg, full_doc_id, self.tokenizer)
        editor = self._editor()
        await editor.run(lambda: plan_custom_graph(editor, graph), f"custom graph {graph.doc_id!r}")
        return custom_graph_summary(graph)
