"""What an initialized ``LightRAG`` works with, built by ``initialize()`` as one object.

:class:`Services` holds the workspace's pool, the wrapped models, and the query
engine, indexing pipeline, deleter and graph editor built from them on first use
(a query imports nothing of the indexing pipeline). ``finalize()`` drops it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Settings
from .db.connect import connect, split_connect_timeout
from .db.embedded import resolve_dsn
from .db.identifiers import WorkspaceName
from .db.pool import SharedPool, WorkspacePool, create_pool
from .db.translate import translated
from .db.workspace import WorkspaceInfo, create_workspace, read_info
from .defaults import choose_extractor, default_embedding, default_llm
from .errors import LightRAGError
from .llm.cached import CachedKeywords, CachedLLM
from .llm.embedding_func import EmbeddingFunc
from .llm.memo import QueryMemo
from .llm.tokenizer import LazyTokenizer, Tokenizer, encoding_name, get_tokenizer
from .llm.usage import UsageMeter, metered_embedding
from .llm.wrap import LLMFunc, llm_model_name, wrap_embedding, wrap_llm
from .offline.keywords import offline_keywords, rule_version
from .query.engine import QueryEngine, RerankFunc
from .store.cache import PoolCache
from .store.usage import PoolUsageSink

if TYPE_CHECKING:  # loaded on first use, so that a query does not import them
    from .index.deletion import DocumentDeleter
    from .index.extract import Extractor
    from .index.graph_edit import GraphEditor
    from .index.pipeline import Pipeline

T = TypeVar("T")


@dataclass
class Services:
    """The pool, models and engines of one initialized workspace."""

    settings: Settings
    workspace: WorkspaceName
    dsn: str
    connect_timeout: float
    pool: WorkspacePool
    info: WorkspaceInfo
    embedding_func: EmbeddingFunc
    """The caller's embedding function; :attr:`embed` is it wrapped (retries, batches)."""
    embed: EmbeddingFunc
    llm: CachedLLM | None
    llm_model_func: LLMFunc | None
    rerank: RerankFunc | None
    meter: UsageMeter
    """Where the workspace's LLM and embedding calls are recorded (:mod:`.llm.usage`)."""
    _engine: QueryEngine | None = field(default=None, init=False)
    _pipeline: Pipeline | None = field(default=None, init=False)
    _deleter: DocumentDeleter | None = field(default=None, init=False)
    _editor: GraphEditor | None = field(default=None, init=False)

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
                rerank=self.rerank,
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
            kind = choose_extractor(s, self.llm_model_func)
            width = scheduler_width(s, offline=not (kind == "llm" and self.llm))
            llm = scheduled_llm(self.llm, self.workspace, width) if self.llm else None
            extractor: Extractor = LLMExtractor(llm, s) if kind == "llm" and llm else NLPExtractor(s)
            summarizer = Summarizer(s, tokenizer, llm if kind == "llm" else None)
            embed = metered_embedding(
                scheduled_embedding(self.embed, self.workspace, s.embedding_batch_num, width), self.meter
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
                locks=DocumentLocks(self.dsn, self.workspace, self.connect_timeout),
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

    async def reembedded(self, embedding_func: EmbeddingFunc, embed: EmbeddingFunc) -> Services:
        """These services after a re-embed to ``embedding_func`` (``embed``: it wrapped):
        the same pool, the workspace's new info, engines built afresh."""
        await self.close_engines()
        async with self.pool.acquire() as conn:
            info = await read_info(conn, self.workspace)
        if info is None:
            return dataclasses.replace(self, embedding_func=embedding_func, embed=embed)
        self.pool.embedding_dim = info.embedding_dim
        return dataclasses.replace(self, info=info, embedding_func=embedding_func, embed=embed)


class Facade:
    """What the facade's groups of methods share: the settings and the services of an
    initialized ``LightRAG``."""

    settings: Settings
    workspace: WorkspaceName
    _services: Services | None

    @property
    def initialized(self) -> bool:
        """Whether :meth:`initialize` has opened the pool (and :meth:`finalize` not closed it)."""
        return self._services is not None

    @property
    def _run(self) -> Services:
        if self._services is None:
            raise LightRAGError("LightRAG is not initialized: call `await rag.initialize()` first")
        return self._services

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of ``settings.tokenizer_name``, built on first use (or while
        :meth:`initialize` connects)."""
        return get_tokenizer(self.settings.tokenizer_name)


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
    return Services(
        settings=s,
        workspace=parts.workspace,
        dsn=dsn,
        connect_timeout=timeout,
        pool=pool,
        info=info,
        embedding_func=embedding_func,
        embed=wrap_embedding(embedding_func, settings=s),
        llm=llm,
        llm_model_func=llm_model_func,
        rerank=parts.rerank,
        meter=meter,
    )


def run_sync(
    coro: Coroutine[Any, Any, T],
    *,
    opened: bool,
    initialize: Callable[[], Awaitable[None]],
    finalize: Callable[[], Awaitable[None]],
) -> T:
    """Run ``coro`` to completion, with ``initialize()`` and ``finalize()`` around it unless ``opened``."""

    async def runner() -> T:
        if not opened:
            await initialize()
        try:
            return await coro
        finally:
            if not opened:
                await finalize()

    return asyncio.run(runner())
