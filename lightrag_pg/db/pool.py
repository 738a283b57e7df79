"""One asyncpg pool for many workspaces, and the per-workspace handle the stores use as "the pool".

A :class:`SharedPool`'s connections start with its *home* workspace first on
``search_path`` (set at connect time, no statement). A :class:`WorkspacePool`
is one workspace's view of it: on checkout it points the connection at its
workspace with one ``set_config`` statement, only when the connection last
served another workspace (each connection remembers which), so a connection
that keeps serving one workspace costs nothing extra. Each workspace may hold
at most its *share* of the connections, so one busy workspace cannot take
them all from the others. PostgreSQL re-parses a prepared statement whose
``search_path`` changed since its last use, so asyncpg's statement cache stays
valid across workspaces as long as no statement returns a column whose type
depends on the workspace: re-parsed to another result type (a ``vector(8)``
column read in a workspace of 16 dimensions) it fails inside a transaction
with ``InvalidCachedStatementError``. So vectors leave the database as
``real[]`` (tests/test_shared_pool.py checks every statement that returns rows).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from ..config import DEFAULT_STATEMENT_TIMEOUT_MS
from ..errors import LightRAGError, PoolExhausted
from ..tasks import FairScheduler
from .connect import CONNECT_ERRORS, connect_failure
from .embedded import redact_dsn
from .identifiers import WorkspaceName, search_path
from .sqlfile import load_queries
from .translate import DRIVER_ERRORS, translate, translated

log = logging.getLogger(__name__)

SQL = load_queries(__package__, "pool.sql")

HNSW_EF_SEARCH = 200

MAX_CACHEABLE_STATEMENT = 64 * 1024
"""The longest statement text (bytes) the driver keeps prepared: asyncpg's default, 15 KiB,
is less than the commented retrieval statement, which would then be parsed and planned
again on every query (15 ms against 5 ms of execution at 200 documents)."""


async def init_connection(conn: asyncpg.Connection) -> None:
    """Register the pgvector and jsonb codecs, load AGE (when permitted) and, on a Citus
    coordinator, plan each statement with its values.

    Citus cannot build a distributed plan from a generic plan of a statement whose
    parameters feed an ``INSERT ... SELECT`` or a function (``plan_cache_mode``'s
    ``force_generic_plan``, see :func:`server_settings`), so connections to a database
    with Citus use ``force_custom_plan`` (:class:`WorkspaceConnection` keeps it over a reset).
    """
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    has_age, has_citus = await conn.fetchrow(SQL["extensions_installed"])
    if has_citus:
        await conn.execute(SQL["custom_plans"])
        if isinstance(conn, WorkspaceConnection):
            conn.on_citus = True
    if has_age:
        try:
            await conn.execute(SQL["load_age"])
        except asyncpg.InsufficientPrivilegeError:
            log.debug("LOAD 'age' not permitted; Cypher needs age in session_preload_libraries")


async def keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset on release: nothing is sent to the server.

    asyncpg's default reset costs one round trip per checkout (closing cursors,
    UNLISTEN, RESET ALL, releasing advisory locks), which was a third of a
    query's statements. asyncpg still rolls back a transaction left open before
    calling this, without a round trip when there is none. Nothing else needs
    resetting because lightrag_pg leaves no session state on a pooled
    connection but one: its ``search_path``, which points at the workspace it
    last served and which every checkout sets when it serves another
    (:meth:`WorkspaceConnection.point_at`). The other session settings are fixed
    at connect time (``server_settings``), settings inside statements are
    ``SET LOCAL`` / ``set_config(..., true)``, cursors live only inside
    transactions, nothing LISTENs, and session advisory locks are held on a
    dedicated connection outside the pool (:mod:`lightrag_pg.db.advisory`).
    Code that changes session state on a connection from ``rag.pool`` must call
    ``await conn.reset()`` before releasing it (which also makes the connection
    forget its workspace, so the next checkout points it again).
    """


@asynccontextmanager
async def without_statement_timeout(conn: asyncpg.Connection) -> AsyncIterator[asyncpg.Connection]:
    """``conn`` with no statement timeout inside the block, for the few deliberately long
    statements on a pooled connection (building an index over a whole table); the pool's
    own timeout is back afterwards. Migrations need none of this: they run on a connection
    of their own, which has no timeout."""
    await conn.execute(SQL["no_statement_timeout"])
    try:
        yield conn
    finally:
        await conn.execute(SQL["restore_statement_timeout"])


def server_settings(workspace: WorkspaceName, statement_timeout_ms: int = 0) -> dict[str, str]:
    """Session settings applied once per connection, at connect time.

    ``statement_timeout`` (``Settings.statement_timeout_ms``, none when 0) bounds every
    statement on the pool: PostgreSQL cancels one that runs longer, which surfaces as
    :class:`~lightrag_pg.errors.StatementTimeout`.

    ``plan_cache_mode=force_generic_plan``: a prepared statement (asyncpg prepares
    and caches every statement) is planned once per connection, not on each
    execution; planning the retrieval statement cost ~2 ms of every graph query. Its
    generic plans keep the HNSW and relation index scans (checked up to 100k
    entities, docs/scale.md; tests/test_generic_plans.py).
    """
    settings = {
        "search_path": search_path(workspace),
        "hnsw.ef_search": str(HNSW_EF_SEARCH),
        "hnsw.iterative_scan": "relaxed_order",
        "plan_cache_mode": "force_generic_plan",
        "application_name": "lightrag_pg",
    }
    if statement_timeout_ms:
        settings["statement_timeout"] = str(statement_timeout_ms)
    return settings


async def point_connection(conn: asyncpg.Connection, workspace: WorkspaceName) -> None:
    """Put ``workspace`` first on the ``search_path`` of a connection outside the pool."""
    await conn.execute(SQL["point_at"], search_path(workspace))


class WorkspaceConnection(asyncpg.Connection):  # type: ignore[misc]
    """A pooled connection that knows which workspace its ``search_path`` points at.

    ``workspace`` is ``None`` when unknown (after :meth:`reset`), which the
    next :meth:`point_at` treats as pointing elsewhere.
    """

    workspace: WorkspaceName | None = None
    on_citus: bool = False

    async def point_at(self, workspace: WorkspaceName) -> None:
        """Put ``workspace`` first on ``search_path``: one statement, none if it already is."""
        if self.workspace == workspace:
            return
        self.workspace = None
        await self.execute(SQL["point_at"], search_path(workspace))
        self.workspace = workspace

    async def reset(self, *, timeout: float | None = None) -> None:
        """asyncpg's reset (``RESET ALL`` among others); the workspace is then unknown."""
        self.workspace = None
        await super().reset(timeout=timeout)
        if self.on_citus:
            await self.execute(SQL["custom_plans"])


class SharedPool:
    """One asyncpg pool whose connections serve any workspace; open it with :func:`open_shared_pool`.

    :meth:`workspace` gives a workspace's :class:`WorkspacePool`. ``share``
    bounds the connections one workspace holds at once (below ``max_size`` so
    that a busy workspace leaves some to the others); a wait longer than
    ``acquire_timeout`` seconds for a connection raises
    :class:`~lightrag_pg.errors.PoolExhausted`. ``dsn`` (without
    ``connect_timeout``) and ``connect_timeout`` are what the pool connects
    with, for the dedicated connections a workspace needs beside it.
    """

    def __init__(
        self,
        dsn: str,
        home: WorkspaceName,
        *,
        min_size: int,
        max_size: int,
        share: int,
        statement_timeout_ms: int,
        connect_timeout: float,
        acquire_timeout: float,
    ) -> None:
        if not 0 < share <= max_size:
            raise LightRAGError(f"a workspace's share must be in 1..{max_size} (max_size), got {share}")
        self.dsn = dsn
        self.home = home
        self.share = share
        self.connect_timeout = connect_timeout
        self.acquire_timeout = acquire_timeout
        self.waiting = 0
        """Checkouts waiting for a workspace's share or a free connection."""
        self.scheduler = FairScheduler(1)
        """The slots of the indexing jobs of the pool's workspaces, shared fairly between them
        (each pipeline widens it to its ``max_parallel_chunks``)."""
        self._shares: dict[str, asyncio.Semaphore] = {}
        self.pool = asyncpg.Pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            max_queries=50_000,
            max_inactive_connection_lifetime=300.0,
            max_cacheable_statement_size=MAX_CACHEABLE_STATEMENT,
            init=self._init,
            reset=keep_session,
            loop=None,
            connection_class=WorkspaceConnection,
            record_class=asyncpg.Record,
            server_settings=server_settings(self.home, statement_timeout_ms),
            timeout=connect_timeout,
        )

    async def _init(self, conn: asyncpg.Connection) -> None:
        await init_connection(conn)
        conn.workspace = self.home

    @property
    def max_size(self) -> int:
        """The most connections the pool opens."""
        return int(self.pool.get_max_size())

    def connections(self) -> dict[str, int]:
        """Connections open, in use, idle, and checkouts waiting for one."""
        size, idle = self.pool.get_size(), self.pool.get_idle_size()
        return {"open": size, "in_use": size - idle, "idle": idle, "waiting": self.waiting}

    def workspace(self, name: WorkspaceName, embedding_dim: int) -> WorkspacePool:
        """The pool as workspace ``name`` (of ``embedding_dim`` dimensions) uses it."""
        gate = self._shares.setdefault(name, asyncio.Semaphore(self.share))
        return WorkspacePool(self, name, embedding_dim, gate)

    async def close(self) -> None:
        """Close every connection, waiting for those in use to be released."""
        await self.pool.close()


class WorkspacePool:
    """One workspace's connections from a :class:`SharedPool`: what the stores call "the pool".

    ``acquire()`` waits at most ``acquire_timeout`` seconds (in all) for the
    workspace's share and a free connection, then raises
    :class:`~lightrag_pg.errors.PoolExhausted` instead of hanging: the usual
    cause is a caller holding every connection (a ``rag.session()`` or
    ``rag.unit_of_work()`` block) while calling the same LightRAG.
    Driver errors raised inside ``async with pool.acquire() as conn:`` leave
    it as :mod:`lightrag_pg.errors` classes (:mod:`~lightrag_pg.db.translate`):
    this is where the stores' errors are translated, once.
    ``embedding_dim`` is the workspace's vector width, which the stores on its
    connections write their vector searches for. :meth:`close` closes the
    shared pool only if this handle owns it (:func:`create_pool`).
    """

    __slots__ = ("_gate", "acquire_timeout", "embedding_dim", "owns_shared", "shared", "workspace")

    def __init__(
        self, shared: SharedPool, workspace: WorkspaceName, embedding_dim: int, gate: asyncio.Semaphore
    ) -> None:
        self.shared = shared
        self.workspace = workspace
        self.embedding_dim = embedding_dim
        self.acquire_timeout = shared.acquire_timeout
        self.owns_shared = False
        self._gate = gate

    def get_max_size(self) -> int:
        """The most connections this workspace holds at once (its share of the shared pool)."""
        return self.shared.share

    def acquire(self, *, timeout: float | None = None) -> _WorkspaceAcquire:
        """``async with pool.acquire() as conn:`` a connection pointed at this workspace."""
        return _WorkspaceAcquire(self, self.acquire_timeout if timeout is None else timeout)

    async def close(self) -> None:
        """Close the shared pool if this handle owns it; a shared one stays open for the others."""
        if self.owns_shared:
            await self.shared.close()


class _WorkspaceAcquire:
    """The context manager of :meth:`WorkspacePool.acquire`."""

    __slots__ = ("_inner", "_pool", "_timeout")

    def __init__(self, pool: WorkspacePool, timeout: float) -> None:
        self._pool, self._timeout = pool, timeout
        self._inner: Any = None

    async def __aenter__(self) -> asyncpg.Connection:
        async with translated():
            return await self._enter()

    async def _enter(self) -> asyncpg.Connection:
        self._pool.shared.waiting += 1
        try:
            return await self._wait()
        finally:
            self._pool.shared.waiting -= 1

    async def _wait(self) -> asyncpg.Connection:
        pool, loop = self._pool, asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        try:
            async with asyncio.timeout(self._timeout):
                await pool._gate.acquire()
        except TimeoutError as exc:
            raise self._exhausted(f"{pool.shared.share} connections (its share) in use") from exc
        try:
            self._inner = pool.shared.pool.acquire(timeout=max(deadline - loop.time(), 0.0))
            try:
                conn = await self._inner.__aenter__()
            except asyncio.TimeoutError as exc:
                raise self._exhausted(f"all {pool.shared.max_size} connections in use") from exc
            try:
                await conn.point_at(pool.workspace)
            except BaseException as exc:
                await self._inner.__aexit__(type(exc), exc, exc.__traceback__)
                raise
        except BaseException:
            pool._gate.release()
            raise
        return conn

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            async with translated():
                await self._inner.__aexit__(kind, exc, tb)
        finally:
            self._pool._gate.release()
        if isinstance(exc, DRIVER_ERRORS):
            raise translate(exc) from exc

    def _exhausted(self, why: str) -> PoolExhausted:
        return PoolExhausted(
            f"no free connection in the pool of workspace {self._pool.workspace!r} after "
            f"{self._timeout:g} s ({why}; pool_max_size={self._pool.shared.max_size}, "
            "pool_acquire_timeout): is a rag.session() or rag.unit_of_work() block held "
            "while calling the same LightRAG? Otherwise raise pool_max_size"
        )


async def open_shared_pool(
    dsn: str,
    home: WorkspaceName,
    *,
    min_size: int = 1,
    max_size: int = 8,
    share: int | None = None,
    statement_timeout_ms: int = DEFAULT_STATEMENT_TIMEOUT_MS,
    connect_timeout: float = 10.0,
    acquire_timeout: float = 30.0,
) -> SharedPool:
    """Open a :class:`SharedPool` whose connections start pointed at ``home``;
    each workspace holds at most ``share`` connections (default: ``max_size``)."""
    shared = SharedPool(
        dsn,
        home,
        min_size=min_size,
        max_size=max_size,
        share=max_size if share is None else share,
        statement_timeout_ms=statement_timeout_ms,
        connect_timeout=connect_timeout,
        acquire_timeout=acquire_timeout,
    )
    try:
        await shared.pool
    except CONNECT_ERRORS as exc:
        raise connect_failure(exc, redact_dsn(dsn), connect_timeout) from exc
    return shared


async def create_pool(
    dsn: str,
    workspace: WorkspaceName,
    *,
    embedding_dim: int,
    min_size: int = 1,
    max_size: int = 8,
    statement_timeout_ms: int = DEFAULT_STATEMENT_TIMEOUT_MS,
    connect_timeout: float = 10.0,
    acquire_timeout: float = 30.0,
) -> WorkspacePool:
    """Open a pool of one workspace (of ``embedding_dim`` dimensions): a :class:`SharedPool`
    of its own, with ``workspace`` as home, that closes with the returned handle."""
    shared = await open_shared_pool(
        dsn,
        workspace,
        min_size=min_size,
        max_size=max_size,
        statement_timeout_ms=statement_timeout_ms,
        connect_timeout=connect_timeout,
        acquire_timeout=acquire_timeout,
    )
    pool = shared.workspace(workspace, embedding_dim)
    pool.owns_shared = True
    return pool
