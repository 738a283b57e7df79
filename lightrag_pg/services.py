"""What an initialized ``LightRAG`` works with, built by ``initialize()`` from what it
was given (:class:`Parts`) as one object (see :mod:`lightrag_pg.handle`).

:class:`Services` holds the workspace's pool, the wrapped models, and the query
engine, indexing pipeline, deleter and graph editor built from them on first use
(a query imports nothing of the indexing pipeline). ``finalize()`` drops it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .config import Settings
from .db.connect import connect, split_connect_timeout
from .db.embedded import resolve_dsn
from .db.identifiers import WorkspaceName
from .db.pool import SharedPool, WorkspacePool, create_pool
from .db.translate import translated
from .db.workspace import WorkspaceInfo, create_workspace, read_info
from .defaults import choose_extractor, default_embedding, default_llm
from .errors import ConfigurationError
from .index.progress import ProgressCallback
from .llm.cached import CachedKeywords, CachedLLM
from .llm.embedding_func import EmbeddingFunc
from .llm.memo import QueryMemo
from .llm.tokenizer import LazyTokenizer, encoding_name, get_tokenizer
from .llm.usage import UsageMeter, metered_embedding
from .llm.wrap import LLMFunc, llm_model_name, wrap_embedding, wrap_llm
from .offline.keywords import offline_keywords, rule_version
from .query.engine import QueryEngine, RerankFunc
from .results import InsertResult, new_track_id
from .store.cache import PoolCache
from .store.usage import PoolUsageSink

if TYPE_CHECKING:  # loaded on first use, so that a query does not import them
    from .index.deletion import DocumentDeleter
    from .index.extract import Extractor
    from .index.graph_edit import GraphEditor
    from .index.lightrag_compat.importer import Target
    from .index.pipeline import Pipeline
    from .index.reembed import ReembedCallback, ReembedResult


@dataclass
class Services:
    """The pool, models and engines of one initialized workspace."""

    parts: Parts
    """What the ``LightRAG`` was given, completed: the DSN resolved, the default models."""
    pool: WorkspacePool
    info: WorkspaceInfo
    embed: EmbeddingFunc
    """:attr:`embedding_func` wrapped (retries, batches)."""
    llm: CachedLLM | None
    meter: UsageMeter
    """Where the workspace's LLM and embedding calls are recorded (:mod:`.llm.usage`)."""
    _engine: QueryEngine | None = field(default=None, init=False)
    _pipeline: Pipeline | None = field(default=None, init=False)
    _deleter: DocumentDeleter | None = field(default=None, init=False)
    _editor: GraphEditor | None = field(default=None, init=False)

    @property
    def settings(self) -> Settings:
        return self.parts.settings

    @property
    def workspace(self) -> WorkspaceName:
        return self.parts.workspace

    @property
    def dsn(self) -> str:
        assert self.parts.dsn is not None
        return self.parts.dsn

    @property
    def embedding_func(self) -> EmbeddingFunc:
        """The caller's embedding function (or the default one); :attr:`embed` is it wrapped."""
        assert self.parts.embedding_func is not None
        return self.parts.embedding_func

    def engine(self) -> QueryEngine:
        """The query engine."""
        if self._engine is None:
            s = self.settings
            self._engine = QueryEngine(
                pool=self.pool,
                settings=s,
                tokenizer=LazyTokenizer(s.tokenizer_name),
                embed=metered_embedding(self.embed, self.meter),
                llm=self.llm,
                keyword_fallback=CachedKeywords(
                    offline_keywords, PoolCache(self.pool) if s.enable_llm_cache else None, rule_version()
                ),
                rerank=self.parts.rerank,
                memo=self._query_memo(),
                meter=self.meter,
            )
        return self._engine

    def _query_memo(self) -> QueryMemo | None:
        s = self.settings
        if not (s.query_memo and s.enable_llm_cache):
            return None
        return QueryMemo(
            PoolCache(self.pool),
            self.embedding_func.model_name,
            self.embedding_func.embedding_dim,
            encoding_name(s.tokenizer_name),
        )

    def pipeline(self) -> Pipeline:
        """The indexing pipeline (with its document locks and graph writer)."""
        if self._pipeline is None:
            from .db.advisory import DocumentLocks
            from .index.extract import LLMExtractor, NLPExtractor
            from .index.pipeline import Pipeline, scheduled_embedding, scheduled_llm, scheduler_width
            from .index.summary import Summarizer
            from .index.writer import GraphWriter

            s, tokenizer = self.settings, get_tokenizer(self.settings.tokenizer_name)
            kind = choose_extractor(s, self.parts.llm_model_func)
            width = scheduler_width(s, offline=not (kind == "llm" and self.llm))
            scheduler = self.pool.shared.scheduler
            scheduler.widen(width)
            llm = scheduled_llm(self.llm, self.workspace, scheduler) if self.llm else None
            extractor: Extractor = LLMExtractor(llm, s) if kind == "llm" and llm else NLPExtractor(s)
            summarizer = Summarizer(s, tokenizer, llm if kind == "llm" else None)
            embed = metered_embedding(
                scheduled_embedding(self.embed, self.workspace, s.embedding_batch_num, scheduler, width),
                self.meter,
            )
            offline = extractor.name == "nlp"
            self._pipeline = Pipeline(
                pool=self.pool,
                settings=s,
                tokenizer=tokenizer,
                extractor=extractor,
                embed=embed,
                writer=GraphWriter(
                    self.pool, embed, summarizer, s, vector_texts="short" if offline else "full"
                ),
                locks=DocumentLocks(self.dsn, self.workspace, self.parts.connect_timeout),
                scheduler=scheduler,
                meter=self.meter,
            )
        return self._pipeline

    def deleter(self) -> DocumentDeleter:
        """The document deleter (sharing the pipeline's writer and locks)."""
        if self._deleter is None:
            from .index.deletion import DocumentDeleter

            pipeline = self.pipeline()
            self._deleter = DocumentDeleter(self.pool, pipeline.writer, pipeline.locks, self.settings)
        return self._deleter

    def editor(self) -> GraphEditor:
        """The graph editor (sharing the pipeline's writer)."""
        if self._editor is None:
            from .index.graph_edit import GraphEditor

            self._editor = GraphEditor(self.pool, self.pipeline().writer, self.settings)
        return self._editor

    async def enqueue(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None,
        file_paths: str | Sequence[str] | None,
        *,
        track_id: str | None,
        replace: bool,
    ) -> InsertResult:
        """Store documents as pending (``replace``: those stored with other content replaced)."""
        from .index.intake import prepare_batch
        from .index.progress import Progress

        track_id = track_id or new_track_id()
        max_bytes = self.settings.max_document_bytes
        intake = prepare_batch(texts, ids, file_paths, track_id=track_id, max_bytes=max_bytes)
        new_ids = await self.pipeline().enqueue(intake.documents)
        known = [d for d in intake.documents if d.id not in set(new_ids)]
        replaced = await self.deleter().replace_changed(known) if replace and known else []
        skipped = [d.id for d in known if d.id not in set(replaced)]
        return InsertResult(track_id, new_ids, skipped, Progress(), intake.duplicates, replaced)

    async def insert(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None,
        file_paths: str | Sequence[str] | None,
        *,
        progress: ProgressCallback,
        replace: bool,
    ) -> InsertResult:
        """:meth:`enqueue`, then process until each of the given documents is done."""
        queued = await self.enqueue(texts, ids, file_paths, track_id=None, replace=replace)
        wait_for = {*queued.new_ids, *queued.skipped_ids, *queued.replaced_ids}
        state = await self.pipeline().process(progress, wait_for=wait_for)
        return dataclasses.replace(queued, progress=state)

    async def insert_custom_kg(self, custom_kg: dict[str, Any], full_doc_id: str | None) -> dict[str, Any]:
        """Insert a knowledge graph in upstream's shape as one document, in one transaction."""
        from .index.custom_kg import CustomGraph, plan_custom_graph, summary

        graph, editor = (
            CustomGraph(custom_kg, full_doc_id, get_tokenizer(self.settings.tokenizer_name)),
            self.editor(),
        )
        await editor.run(lambda: plan_custom_graph(editor, graph), f"custom graph {graph.doc_id!r}")
        return summary(graph)

    def transfer_target(self) -> Target:
        """The workspace as the import from and export to upstream LightRAG see it."""
        from .index.lightrag_compat.importer import Target

        return Target(
            pool=self.pool,
            workspace=self.workspace,
            settings=self.settings,
            tokenizer=get_tokenizer(self.settings.tokenizer_name),
            embedding_dim=self.info.embedding_dim,
            embedding_model=self.info.embedding_model or self.embedding_func.model_name,
        )

    async def close_engines(self) -> None:
        """Release what the engines hold (the document locks' connection)."""
        if self._pipeline is not None:
            await self._pipeline.close()

    async def close(self) -> None:
        """Close the engines, write the usage records waiting, then close the pool."""
        try:
            await self.close_engines()
            await self.meter.close()
        finally:
            await self.pool.close()

    async def reembed(
        self, embedding_func: EmbeddingFunc, batch_size: int, progress: ReembedCallback
    ) -> tuple[ReembedResult, Services]:
        """Re-embed the workspace with ``embedding_func``; the result, and these services
        after it: the same pool, the workspace's new info, engines built afresh."""
        from .index.reembed import Reembedder

        embed = wrap_embedding(embedding_func, settings=self.settings)
        reembedder = Reembedder(
            self.pool,
            self.dsn,
            self.workspace,
            embed,
            batch_size=batch_size,
            connect_timeout=self.parts.connect_timeout,
        )
        result = await reembedder.run(progress)
        await self.close_engines()
        async with self.pool.acquire() as conn:
            info = await read_info(conn, self.workspace)
        parts = dataclasses.replace(self.parts, embedding_func=embedding_func)
        if info is None:
            return result, dataclasses.replace(self, parts=parts, embed=embed)
        self.pool.embedding_dim = info.embedding_dim
        return result, dataclasses.replace(self, parts=parts, info=info, embed=embed)


@dataclass(frozen=True)
class Parts:
    """What a ``LightRAG`` was given: the models (``None``: the defaults) and where to connect."""

    settings: Settings
    workspace: WorkspaceName
    dsn: str | None
    connect_timeout: float
    shared: SharedPool | None
    embedding_func: EmbeddingFunc | None
    llm_model_func: LLMFunc | None
    rerank: RerankFunc | None

    @classmethod
    def given(
        cls,
        dsn: str | None,
        workspace: str,
        llm_model_func: LLMFunc | None,
        embedding_func: EmbeddingFunc | None,
        rerank_model_func: RerankFunc | None,
        pool: SharedPool | None,
        settings: dict[str, Any],
    ) -> Parts:
        """The arguments of ``LightRAG(...)``, checked: the workspace's name, the settings
        (and their tokenizer's name), a DSN or a shared pool."""
        if pool is not None and dsn is not None:
            raise ConfigurationError("LightRAG takes a dsn or a shared pool, not both")
        s = Settings.from_kwargs(**settings)
        name = WorkspaceName(workspace)
        encoding_name(s.tokenizer_name)  # an unknown name fails here
        if pool is not None:
            return cls(
                s,
                name,
                pool.dsn,
                pool.connect_timeout,
                pool,
                embedding_func,
                llm_model_func,
                rerank_model_func,
            )
        return cls(s, name, dsn, s.connect_timeout, None, embedding_func, llm_model_func, rerank_model_func)


async def open_services(parts: Parts) -> Services:
    """Start the embedded server if needed, create or upgrade the workspace, open the pool.

    The tokenizer is built in a worker thread meanwhile (with ``query_memo``, only
    when a query first needs it)."""
    if parts.settings.query_memo:
        return await _open(parts)
    building = asyncio.ensure_future(asyncio.to_thread(get_tokenizer, parts.settings.tokenizer_name))
    try:
        services = await _open(parts)
    except BaseException:
        await asyncio.gather(building, return_exceptions=True)
        raise
    await building
    return services


async def _open(parts: Parts) -> Services:
    s = parts.settings
    embedding_func = parts.embedding_func
    if embedding_func is None:
        embedding_func = await asyncio.to_thread(default_embedding, s)
    llm_model_func = parts.llm_model_func if parts.llm_model_func is not None else default_llm(s)
    dsn, timeout = parts.dsn, parts.connect_timeout
    if parts.shared is None:
        dsn = await asyncio.to_thread(resolve_dsn, dsn, s.data_dir)
        dsn, timeout = split_connect_timeout(dsn, s.connect_timeout)
    assert dsn is not None
    conn = await connect(dsn, timeout=timeout)
    async with translated():
        try:
            info = await create_workspace(
                conn, dsn, parts.workspace, embedding_func.embedding_dim, embedding_func.model_name
            )
        finally:
            await conn.close()
    if parts.shared is not None:
        pool = parts.shared.workspace(parts.workspace, info.embedding_dim)
    else:
        pool = await create_pool(
            dsn,
            parts.workspace,
            embedding_dim=info.embedding_dim,
            min_size=s.pool_min_size,
            max_size=s.pool_max_size,
            statement_timeout_ms=s.statement_timeout_ms,
            connect_timeout=timeout,
            acquire_timeout=s.pool_acquire_timeout,
        )
    meter = UsageMeter(
        parts.workspace,
        LazyTokenizer(s.tokenizer_name).count,
        PoolUsageSink(pool) if s.usage_accounting else None,
        llm_model=llm_model_name(llm_model_func),
    )
    llm = None
    if llm_model_func is not None:
        cache = PoolCache(pool) if s.enable_llm_cache else None
        llm = CachedLLM(wrap_llm(llm_model_func, settings=s), cache, s.llm_deadline, meter, s.trace_content)
    completed = dataclasses.replace(
        parts, dsn=dsn, connect_timeout=timeout, embedding_func=embedding_func, llm_model_func=llm_model_func
    )
    return Services(
        parts=completed,
        pool=pool,
        info=info,
        embed=wrap_embedding(embedding_func, settings=s),
        llm=llm,
        meter=meter,
    )
