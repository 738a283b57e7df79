"""All a ``LightRAG`` holds: one :class:`Handle`, with what it was given
(:class:`~lightrag_pg.services.Parts`) and, once ``initialize()`` has run, its
:class:`~lightrag_pg.services.Services`. Each piece of state lives in one place: the
facade keeps nothing but its handle, and its methods (:class:`Facade`) only delegate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Settings
from .db.identifiers import WorkspaceName
from .errors import LightRAGError
from .llm.embedding_func import EmbeddingFunc
from .llm.tokenizer import Tokenizer, get_tokenizer
from .services import Parts, Services, open_services
from .store.uow import session

if TYPE_CHECKING:
    from .index.reembed import ReembedCallback, ReembedResult

T = TypeVar("T")


class Handle:
    """All a ``LightRAG`` holds: what it was given (:attr:`parts`, completed with the
    resolved DSN and the default models once initialized) and its :class:`Services`
    while it is initialized."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.services: Services | None = None

    @property
    def run(self) -> Services:
        """The services; :class:`LightRAGError` unless initialized."""
        if self.services is None:
            raise LightRAGError("LightRAG is not initialized: call `await rag.initialize()` first")
        return self.services

    def _use(self, services: Services) -> None:
        self.services, self.parts = services, services.parts

    async def open(self) -> None:
        """Open the services unless they are open."""
        if self.services is None:
            self._use(await open_services(self.parts))

    async def close(self) -> None:
        """Close the services if they are open."""
        services, self.services = self.services, None
        if services is not None:
            await services.close()

    async def reembed(
        self, embedding_func: EmbeddingFunc, batch_size: int, progress: ReembedCallback
    ) -> ReembedResult:
        """:meth:`Services.reembed`, then go on with the services it returns."""
        result, services = await self.run.reembed(embedding_func, batch_size, progress)
        self._use(services)
        return result

    async def drop(self) -> None:
        """Drop the workspace (schema and graph) and close the services."""
        services = self.run
        async with session(services.pool) as s:
            await s.workspace.drop()
        services.meter.discard()
        await self.close()

    @property
    def dsn(self) -> str:
        """The DSN given, or resolved by :meth:`open` (the embedded server's)."""
        if self.parts.dsn is None:
            raise LightRAGError("call initialize() first")
        return self.parts.dsn

    def sync(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion, initializing and finalizing around it unless open."""
        return run_sync(coro, opened=self.services is not None, initialize=self.open, finalize=self.close)


class Facade:
    """What the facade's groups of methods share: the handle of a ``LightRAG``."""

    _handle: Handle

    @property
    def settings(self) -> Settings:
        """The settings given (:class:`~lightrag_pg.config.Settings`)."""
        return self._handle.parts.settings

    @property
    def workspace(self) -> WorkspaceName:
        """The workspace's name (its schema)."""
        return self._handle.parts.workspace

    @property
    def initialized(self) -> bool:
        """Whether :meth:`initialize` has opened the pool (and :meth:`finalize` not closed it)."""
        return self._handle.services is not None

    @property
    def _run(self) -> Services:
        return self._handle.run

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of ``settings.tokenizer_name``, built on first use (or while
        :meth:`initialize` connects)."""
        return get_tokenizer(self.settings.tokenizer_name)


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
