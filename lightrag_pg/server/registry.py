"""The workspaces a server process serves, opened on first use and kept, up to a bound.

Every workspace has its own :class:`~lightrag_pg.LightRAG`, and all of them
share one connection pool (:class:`~lightrag_pg.db.pool.SharedPool`,
``pool_size`` connections) in which a workspace holds at most
``workspace_pool_size`` connections at once, so a busy workspace leaves
connections to the others; a connection is pointed at a workspace's schema
when it is checked out for it. At most ``max_workspaces`` are open (each holds
its LightRAG and, while indexing, a dedicated connection for its advisory
locks); opening one more closes the least recently used idle one, and when
none is idle the request gets a 503. Opening a workspace (or failing to)
happens in its own task, on a connection of its own, so a slow or broken
workspace never holds up requests for another. Listing workspaces and the
health check use a small pool of their own, so they answer while the shared
pool is saturated. Opening a workspace starts no indexing (see
:mod:`.runtime`); closing the registry is bounded by the server's
``shutdown_timeout``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import asyncpg

from ..config import Settings
from ..db.connect import split_connect_timeout
from ..db.identifiers import WorkspaceName
from ..db.pool import SQL as POOL_SQL
from ..db.pool import SharedPool, open_shared_pool
from ..db.translate import translated
from ..db.workspace import list_workspaces, read_info
from ..errors import ConfigurationError, LightRAGError, StorageError, WorkspaceNotFound
from ..rag import LightRAG
from .files import InputFolder
from .runtime import WorkspaceRuntime
from .settings import ServerSettings

log = logging.getLogger(__name__)

RagFactory = Callable[[str, SharedPool], LightRAG]
"""Builds the (uninitialized) LightRAG of a workspace on the server's pool:
``factory(workspace, pool)``, which passes ``pool=pool`` to :class:`~lightrag_pg.LightRAG`."""


CLOSE_SHARE = 0.25
"""Of the server's ``shutdown_timeout``, what closing the workspaces may take, and then
closing each pool half of it (``lightrag-pg serve`` gives requests in flight 40% before)."""


class ServerBusy(LightRAGError):
    """Every open workspace is busy and the bound on open workspaces is reached."""


class WorkspaceRegistry:
    """Open workspaces by name; see the module docstring."""

    def __init__(self, settings: ServerSettings, dsn: str, factory: RagFactory) -> None:
        self.settings = settings
        self.dsn = dsn
        self.factory = factory
        self._open: OrderedDict[str, WorkspaceRuntime] = OrderedDict()
        self._opening: dict[str, asyncio.Task[WorkspaceRuntime]] = {}
        self._admin: asyncpg.Pool | None = None
        self._pool: SharedPool | None = None
        self._closing: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Connect, and open (creating it if needed) the default workspace."""
        library = Settings()
        dsn, timeout = split_connect_timeout(self.dsn, library.connect_timeout)
        async with translated():
            self._admin = await asyncpg.create_pool(dsn, min_size=0, max_size=2, timeout=timeout)
            self._pool = await open_shared_pool(  # empty: the default workspace creates the extensions
                dsn,
                self.settings.default_workspace,
                min_size=0,
                max_size=self.settings.pool_size,
                share=self.settings.workspace_pool_size,
                statement_timeout_ms=self.settings.statement_timeout_ms,
                connect_timeout=timeout,
                acquire_timeout=library.pool_acquire_timeout,
            )
        (await self.get(self.settings.default_workspace)).resume()

    @property
    def admin(self) -> asyncpg.Pool:
        if self._admin is None:
            raise LightRAGError("the workspace registry is not started")
        return self._admin

    @property
    def pool(self) -> SharedPool:
        """The connection pool every workspace shares."""
        if self._pool is None:
            raise LightRAGError("the workspace registry is not started")
        return self._pool

    def opened(self) -> list[WorkspaceRuntime]:
        return list(self._open.values())

    async def names(self) -> list[WorkspaceName]:
        """Every workspace in the database."""
        async with translated(), self.admin.acquire() as conn:
            return await list_workspaces(conn)

    async def database_reachable(self, timeout: float = 5.0) -> bool:
        try:
            async with translated(), self.admin.acquire(timeout=timeout) as conn:
                await conn.fetchval(POOL_SQL["ping"], timeout=timeout)
        except (LightRAGError, OSError, asyncio.TimeoutError):
            return False
        return True

    @asynccontextmanager
    async def use(self, name: WorkspaceName) -> AsyncIterator[WorkspaceRuntime]:
        """``async with registry.use(name) as runtime:`` the workspace, not closed while in use.

        A storage error in a workspace that no longer exists (dropped while
        open) becomes :class:`WorkspaceNotFound`, and the workspace is closed.
        """
        runtime = await self.get(name)
        runtime.users += 1
        try:
            yield runtime
        except StorageError as exc:
            if await self._dropped(runtime):
                raise WorkspaceNotFound(f"workspace {runtime.name!r} no longer exists") from exc
            raise
        finally:
            runtime.users -= 1

    async def _dropped(self, runtime: WorkspaceRuntime) -> bool:
        """Whether ``runtime``'s workspace is gone from the database; if so, stop serving it."""
        async with translated(), self.admin.acquire() as conn:
            if await read_info(conn, runtime.name) is not None:
                return False
        if self._open.get(runtime.name) is runtime:
            del self._open[runtime.name]
            log.warning("workspace %s was dropped while open; closing it", runtime.name)
            task = asyncio.create_task(runtime.close(self._grace))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        return True

    async def get(self, name: WorkspaceName) -> WorkspaceRuntime:
        """The open workspace ``name``, opening it if needed.

        :class:`WorkspaceNotFound` if it does not exist and creation is not
        allowed (the default workspace is always created).
        """
        runtime = self._open.get(name)
        if runtime is not None:
            self._open.move_to_end(name)
            return runtime
        task = self._opening.get(name)
        if task is None:
            task = asyncio.create_task(self._open_workspace(name), name=f"open:{name}")
            self._opening[name] = task
            task.add_done_callback(lambda _: self._opening.pop(name, None))
        return await asyncio.shield(task)

    async def _open_workspace(self, name: WorkspaceName) -> WorkspaceRuntime:
        if name != self.settings.default_workspace and not self.settings.allow_create:
            async with translated(), self.admin.acquire() as conn:
                if await read_info(conn, name) is None:
                    raise WorkspaceNotFound(
                        f"workspace {name!r} does not exist (the server was started without --allow-create)"
                    )
        await self._make_room()
        rag = self.factory(name, self.pool)
        await rag.initialize()
        if rag.pool.shared is not self.pool:
            await rag.finalize()
            raise ConfigurationError("the server's LightRAG factory must pass pool=pool to LightRAG")
        runtime = WorkspaceRuntime(rag, InputFolder(self.settings.input_dir, name))
        self._open[name] = runtime
        log.info("workspace %s opened", name)
        return runtime

    async def _make_room(self) -> None:
        while len(self._open) + len(self._opening) > self.settings.max_workspaces:
            victim = next((r for r in self._open.values() if r.idle), None)
            if victim is None:
                raise ServerBusy(
                    f"{len(self._open)} workspaces are open and busy (the server's limit is "
                    f"{self.settings.max_workspaces}); retry later"
                )
            del self._open[victim.name]
            log.info("closing idle workspace %s", victim.name)
            await victim.close(self._grace)

    @property
    def _grace(self) -> float:
        """Seconds a workspace gets to close: its share of the server's ``shutdown_timeout``."""
        return self.settings.shutdown_timeout * CLOSE_SHARE

    async def close(self) -> None:
        """Close every workspace, then the pools, within :attr:`_grace` and a little more
        (unfinished documents are resumed at the next start)."""
        for task in list(self._opening.values()):
            task.cancel()
        runtimes, self._open = list(self._open.values()), OrderedDict()
        await asyncio.gather(
            *(r.close(self._grace) for r in runtimes), *self._closing, return_exceptions=True
        )
        if self._pool is not None:
            pool, self._pool = self._pool.pool, None
            await _close_pool(pool, self._grace / 2)
        if self._admin is not None:
            admin, self._admin = self._admin, None
            await _close_pool(admin, self._grace / 2)


async def _close_pool(pool: asyncpg.Pool, timeout: float) -> None:
    """Close ``pool``, waiting ``timeout`` seconds at most for connections in use."""
    try:
        await asyncio.wait_for(pool.close(), timeout)
    except (asyncio.TimeoutError, OSError, asyncpg.PostgresError) as exc:
        log.warning("closing the connection pool: %s; connections terminated", exc or "timed out")
        pool.terminate()
