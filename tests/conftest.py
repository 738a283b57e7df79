"""Test fixtures: one embedded PostgreSQL per session, one workspace per test."""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG
from lightrag_pg.db.workspace import drop_workspace, workspace_exists

from .embeddings import embedding_func

_counter = itertools.count()


@pytest.fixture(scope="session")
def dsn(tmp_path_factory: pytest.TempPathFactory) -> str:
    """DSN of the embedded server (or of $LIGHTRAG_PG_TEST_DSN when set)."""
    external = os.environ.get("LIGHTRAG_PG_TEST_DSN")
    if external:
        return external
    import pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
    return server.get_uri()


@pytest.fixture
def workspace_name() -> str:
    """A fresh, unique workspace name."""
    return f"t{next(_counter)}_{uuid.uuid4().hex[:8]}"


@pytest_asyncio.fixture
async def conn(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection (default search_path) for inspecting the database."""
    connection = await asyncpg.connect(dsn)
    yield connection
    await connection.close()


@pytest_asyncio.fixture
async def rag(dsn: str, workspace_name: str, conn: asyncpg.Connection) -> AsyncIterator[LightRAG]:
    """An initialized LightRAG on its own workspace, dropped afterwards."""
    instance = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=embedding_func())
    await instance.initialize()
    yield instance
    await instance.finalize()
    if await workspace_exists(conn, workspace_name):
        await drop_workspace(conn, workspace_name)


class CountingConnection:
    """Wraps a connection and counts the statements sent through it (round trips)."""

    _COUNTED = frozenset({"fetch", "fetchrow", "fetchval", "execute", "executemany"})

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self.count = 0

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._conn, name)
        if name not in self._COUNTED:
            return attr

        async def counted(*args: object, **kwargs: object) -> object:
            self.count += 1
            return await attr(*args, **kwargs)

        return counted
