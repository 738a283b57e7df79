"""The ``LightRAG`` facade: one object per workspace, backed by one PostgreSQL.

Its methods delegate: the pool, models and engines live in one
:class:`~lightrag_pg.services.Services` built by :meth:`LightRAG.initialize`;
document status reads are in :mod:`lightrag_pg.rag_status`, graph reads and
edits in :mod:`lightrag_pg.rag_graph`, the returned shapes in :mod:`lightrag_pg.results`.
"""

from __future__ import annotations

import os
from collections.abc import Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeVar

from .db.identifiers import WorkspaceName
from .db.pool import SharedPool, WorkspacePool
from .db.workspace import TableStat, WorkspaceInfo
from .handle import Handle
from .index.progress import Progress, ProgressCallback, ignore_progress
from .index.reembed import DEFAULT_BATCH_SIZE as DEFAULT_REEMBED_BATCH
from .index.reembed import ReembedCallback, ReembedResult, ignore_reembed_progress
from .llm.embedding_func import EmbeddingFunc
from .llm.wrap import LLMFunc
from .query.engine import QueryStream, RerankFunc
from .query.param import QueryParam
from .rag_graph import GraphMethods
from .rag_status import StatusMethods
from .rag_transfer import TransferMethods
from .results import InsertResult, new_track_id
from .services import Parts
from .store.uow import Stores, session, unit_of_work
from .store.workspace import ClearResult

if TYPE_CHECKING:  # loaded on first use, so that a query does not import them
    from .export import ExportResult
    from .index.deletion import DeletionResult

__all__ = ["InsertResult", "LightRAG", "new_track_id"]

T = TypeVar("T")


class LightRAG(StatusMethods, GraphMethods, TransferMethods):
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
        self._handle = Handle(
            Parts.given(dsn, workspace, llm_model_func, embedding_func, rerank_model_func, pool, settings)
        )

    def _sync(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._handle.sync(coro)

    async def initialize(self) -> None:
        """Start the embedded server if needed, create or upgrade the workspace, open the pool.

        The tokenizer is built in a worker thread meanwhile (with ``query_memo``, only
        when a query first needs it)."""
        await self._handle.open()

    async def __aenter__(self) -> LightRAG:
        await self.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.finalize()

    async def finalize(self) -> None:
        """Close the connection pool."""
        await self._handle.close()

    @property
    def dsn(self) -> str:
        """The DSN in use (known after :meth:`initialize`)."""
        return self._handle.dsn

    @property
    def info(self) -> WorkspaceInfo | None:
        """What the workspace records about itself (while initialized)."""
        return self._handle.services.info if self._handle.services else None

    @property
    def llm_model_func(self) -> LLMFunc | None:
        """The LLM function given (after :meth:`initialize`: or the default one, if any)."""
        return self._handle.parts.llm_model_func

    @property
    def embedding_func(self) -> EmbeddingFunc | None:
        """The embedding function given (after :meth:`initialize`: or the default one)."""
        return self._handle.parts.embedding_func

    @property
    def rerank_model_func(self) -> RerankFunc | None:
        """The rerank function given, if any."""
        return self._handle.parts.rerank

    @property
    def pool(self) -> WorkspacePool:
        """The workspace's connection pool."""
        return self._run.pool

    def unit_of_work(self) -> AbstractAsyncContextManager[Stores]:
        """``async with rag.unit_of_work() as uow:`` one connection, one transaction, all stores."""
        return unit_of_work(self.pool)

    def session(self) -> AbstractAsyncContextManager[Stores]:
        """``async with rag.session() as s:`` one connection for reads, autocommit."""
        return session(self.pool)

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
        return await self._run.insert(texts, ids, file_paths, progress=progress, replace=replace)

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
        return await self._run.enqueue(texts, ids, file_paths, track_id=track_id, replace=replace)

    async def aprocess_pending(self, *, progress: ProgressCallback = ignore_progress) -> Progress:
        """Process documents left pending, processing or failed by earlier runs."""
        return await self._run.pipeline().process(progress)

    async def areprocess_failed(self, *, progress: ProgressCallback = ignore_progress) -> Progress:
        """Process the failed documents again (and whatever else is pending), waiting for
        those another process holds; like :meth:`aprocess_pending`, which also retries them."""
        return await self._run.pipeline().process_failed(progress)

    def insert(
        self,
        texts: str | Sequence[str],
        ids: str | Sequence[str] | None = None,
        file_paths: str | Sequence[str] | None = None,
    ) -> InsertResult:
        """Synchronous :meth:`ainsert` (initializes and finalizes around the call if needed)."""
        return self._sync(self.ainsert(texts, ids, file_paths))

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
        return await self._run.deleter().delete_ids(doc_ids, keep_cache=keep_cache, wait=wait)

    async def adelete_by_file_path(
        self, file_paths: str | Sequence[str], *, keep_cache: bool = False, wait: float = 0.0
    ) -> DeletionResult:
        """Delete every document stored with one of ``file_paths``; as :meth:`adelete_by_doc_id`
        (a path that matches no document raises :class:`~lightrag_pg.errors.DocumentNotFound`)."""
        return await self._run.deleter().delete_files(file_paths, keep_cache=keep_cache, wait=wait)

    def delete_by_doc_id(self, doc_ids: str | Sequence[str], *, keep_cache: bool = False) -> DeletionResult:
        """Synchronous :meth:`adelete_by_doc_id`."""
        return self._sync(self.adelete_by_doc_id(doc_ids, keep_cache=keep_cache))

    async def aquery(self, query: str, param: QueryParam | None = None) -> str:
        """Answer ``query`` (the fail response when nothing relevant is found).

        With ``param.only_need_context`` / ``only_need_prompt`` the context or
        the full prompt is returned instead. Without an LLM the retrieved
        knowledge is returned, formatted for reading.
        """
        return await self._run.engine().text(query, param or QueryParam())

    async def aquery_stream(self, query: str, param: QueryParam | None = None) -> QueryStream:
        """Like :meth:`aquery`, as an async iterator of text pieces with ``.references``."""
        return await self._run.engine().stream(query, param or QueryParam())

    async def aquery_data(self, query: str, param: QueryParam | None = None) -> dict[str, Any]:
        """The retrieved entities, relationships, chunks and references; no answer generated."""
        return await self._run.engine().data(query, param or QueryParam())

    def query(self, query: str, param: QueryParam | None = None) -> str:
        """Synchronous :meth:`aquery`."""
        return self._sync(self.aquery(query, param))

    def query_data(self, query: str, param: QueryParam | None = None) -> dict[str, Any]:
        """Synchronous :meth:`aquery_data`."""
        return self._sync(self.aquery_data(query, param))

    async def list_workspaces(self) -> list[WorkspaceName]:
        """Every lightrag_pg workspace in this database."""
        async with self.session() as s:
            return await s.workspace.names()

    async def drop_workspace(self) -> None:
        """Drop this workspace (schema and graph) and close the pool."""
        await self._handle.drop()

    async def atable_stats(self) -> list[TableStat]:
        """Every table and view of the workspace with its exact row count and comment."""
        async with self.session() as s:
            return await s.workspace.tables()

    async def aclear_workspace(self, *, keep_cache: bool = False) -> ClearResult:
        """Empty the workspace in one transaction: every document (any status) with its
        chunks, vectors, entities, relations, fragments and AGE mirror, and (unless
        ``keep_cache``) every cached LLM answer. The workspace, its embedding model and
        settings stay. Refused with :class:`~lightrag_pg.errors.DocumentBusy` while
        documents are being indexed (here or by another process) and with
        :class:`~lightrag_pg.errors.ReembedConflict` while a re-embed runs; nothing is
        changed then."""
        async with self.unit_of_work() as uow:
            return await uow.workspace.clear(
                graph_enabled=self._run.info.graph_enabled, keep_cache=keep_cache
            )

    async def aclear_cache(self, cache_types: Sequence[str] | None = None) -> int:
        """Delete cached LLM answers of the given types (``extract``, ``summary``,
        ``keywords``, ``query``, and ``query_memo``: the vectors and token counts kept
        by ``query_memo``; ``None``: all); return how many were deleted."""
        async with self.session() as s:
            return await s.status.clear_cache(cache_types)

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
        return await self._handle.reembed(embedding_func, batch_size, progress)
