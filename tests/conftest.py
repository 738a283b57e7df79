"""Test fixtures: one embedded PostgreSQL per session, one workspace per test."""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.llm.openai_client import OpenAIChat
from lightrag_pg.testing import hashed_embedding_func as embedding_func
from lightrag_pg.testing import hashed_vectors, responder

from .citus_cluster import citus  # noqa: F401  (the Citus cluster fixture)
from .fake_openai import FakeOpenAI

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


@pytest.fixture(scope="session")
def llm_server() -> Iterator[FakeOpenAI]:
    """The scripted OpenAI-compatible server, shared by the session."""

    def embedder(texts: list[str]) -> list[list[float]]:
        return hashed_vectors(texts, 64).tolist()

    with FakeOpenAI(responder, embedder) as server:
        yield server


@pytest.fixture
def make_rag(dsn: str, workspace_name: str, llm_server: FakeOpenAI) -> Iterator[Callable[..., LightRAG]]:
    """Build LightRAG instances on this test's workspace, talking to the scripted LLM server."""
    made: list[LightRAG] = []

    def factory(**settings: object) -> LightRAG:
        chat = OpenAIChat(
            model="fake-model",
            base_url=llm_server.base_url,
            api_key="test",
            timeout=float(settings.pop("llm_timeout", 10.0)),  # type: ignore[arg-type]
            max_retries=int(settings.pop("max_retries", 1)),  # type: ignore[call-overload]
            base_delay=0.01,
        )
        settings.setdefault("retry_base_delay", 0.01)
        instance = LightRAG(
            dsn=dsn,
            workspace=workspace_name,
            llm_model_func=chat,
            embedding_func=settings.pop("embedding_func", None) or embedding_func(),  # type: ignore[arg-type]
            **settings,
        )
        made.append(instance)
        return instance

    yield factory
    llm_server.reset_faults()


@pytest_asyncio.fixture
async def llm_rag(make_rag: Callable[..., LightRAG], conn: asyncpg.Connection) -> AsyncIterator[LightRAG]:
    """An initialized LightRAG with the scripted LLM, on its own workspace."""
    instance = make_rag()
    await instance.initialize()
    yield instance
    await instance.finalize()
    if await workspace_exists(conn, instance.workspace):
        await drop_workspace(conn, instance.workspace)


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, llm_server: FakeOpenAI) -> None:
    """The environment a user sets for the command line: the fake endpoint for chat and embeddings."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LLM_MODEL", "fake-model")
    monkeypatch.setenv("EMBEDDING_MODEL", "fake-embedding")
    monkeypatch.setenv("EMBEDDING_DIM", "64")
