"""The ``LightRAG`` facade: one object per workspace, backed by one PostgreSQL."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any

import asyncpg

from .config import Settings
from .db.embedded import resolve_dsn
from .db.errors import translated
from .db.identifiers import validate_workspace
from .db.pool import create_pool
from .db.workspace import WorkspaceInfo, create_workspace, drop_workspace, list_workspaces
from .errors import ConfigurationError, LightRAGError
from .llm.embedding import EmbeddingFunc
from .llm.wrap import LLMFunc
from .store.uow import Stores, session, unit_of_work


class LightRAG:
    """Graph-based retrieval-augmented generation over one workspace of one database.

    ``dsn`` defaults to ``$LIGHTRAG_PG_DSN``, else an embedded PostgreSQL
    (``pip install 'lightrag-pg[embedded]'``). ``workspace`` names the schema
    holding every table. ``llm_model_func`` has upstream LightRAG's signature
    ``async (prompt, system_prompt=None, history_messages=[], **kwargs) -> str``.
    Any :class:`~lightrag_pg.config.Settings` field can be passed as a keyword.
    """

    def __init__(
        self,
        dsn: str | None = None,
        workspace: str = "default",
        llm_model_func: LLMFunc | None = None,
        embedding_func: EmbeddingFunc | None = None,
        **settings: Any,
    ) -> None:
        self.settings = Settings.from_kwargs(**settings)
        self.workspace = validate_workspace(workspace)
        self._dsn = dsn
        self.llm_model_func = llm_model_func
        self.embedding_func = embedding_func
        self.info: WorkspaceInfo | None = None
        self._pool: asyncpg.Pool | None = None

    async def initialize(self) -> None:
        """Start the embedded server if needed, create or upgrade the workspace, open the pool."""
        if self._pool is not None:
            return
        if self.embedding_func is None:
            raise ConfigurationError("embedding_func is required")
        self._dsn = await asyncio.to_thread(resolve_dsn, self._dsn, self.settings.data_dir)
        async with translated():
            conn = await asyncpg.connect(self._dsn)
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
        self._pool = await create_pool(
            self._dsn,
            self.workspace,
            min_size=self.settings.pool_min_size,
            max_size=self.settings.pool_max_size,
            statement_timeout_ms=self.settings.statement_timeout_ms,
        )

    async def finalize(self) -> None:
        """Close the connection pool."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
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
    def pool(self) -> asyncpg.Pool:
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
