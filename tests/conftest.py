"""Test fixtures: one embedded PostgreSQL per session, one workspace per test."""

from __future__ import annotations

import asyncio
import itertools
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.llm.openai_client import OpenAIChat
from lightrag_pg.testing import hashed_embedding_func as embedding_func
from lightrag_pg.testing import hashed_vectors, responder, scripted_llm

from .citus_cluster import citus  # noqa: F401  (the Citus cluster fixture)
from .fake_openai import FakeOpenAI
from .served_process import Server, serving_process

if TYPE_CHECKING:
    from .server_support import Served

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


def fresh_name() -> str:
    """A unique workspace name."""
    return f"t{next(_counter)}_{uuid.uuid4().hex[:8]}"


@pytest_asyncio.fixture
async def workspace_name(dsn: str) -> AsyncIterator[str]:
    """A fresh, unique workspace name; the workspace is dropped afterwards if the test made it."""
    name = fresh_name()
    yield name
    await drop_if_exists(dsn, name)


async def drop_if_exists(dsn: str, *names: str) -> None:
    """Drop each of ``names`` that is a workspace."""
    connection = await asyncpg.connect(dsn)
    try:
        for name in names:
            if await workspace_exists(connection, name):
                await drop_workspace(connection, name)
    finally:
        await connection.close()


async def passages(rag: LightRAG, question: str, param: QueryParam) -> list[str]:
    """The passages (file paths) of the chunks ``rag`` returns for ``question``, first
    occurrence first."""
    data = await rag.aquery_data(question, param)
    return list(dict.fromkeys(c["file_path"] for c in data["data"]["chunks"]))


@pytest_asyncio.fixture
async def conn(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection (default search_path) for inspecting the database."""
    connection = await asyncpg.connect(dsn)
    yield connection
    await connection.close()


@pytest_asyncio.fixture
async def rag(dsn: str, workspace_name: str) -> AsyncIterator[LightRAG]:
    """An initialized LightRAG on its own workspace, dropped afterwards."""
    instance = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=embedding_func())
    await instance.initialize()
    yield instance
    await instance.finalize()


RagFactory = Callable[..., Awaitable[LightRAG]]


@pytest_asyncio.fixture
async def rag_factory(dsn: str) -> AsyncIterator[RagFactory]:
    """``await rag_factory(workspace=None, **settings)``: an initialized LightRAG with the
    scripted LLM and hashed embeddings (``llm_model_func=``, ``embedding_func=`` and any
    setting override them) on a fresh workspace, or on ``workspace``; each is finalized and
    its workspace dropped afterwards."""
    made: list[LightRAG] = []

    async def factory(workspace: str | None = None, **settings: Any) -> LightRAG:
        settings.setdefault("llm_model_func", scripted_llm)
        settings.setdefault("embedding_func", embedding_func())
        instance = LightRAG(dsn=dsn, workspace=workspace or fresh_name(), **settings)
        await instance.initialize()
        made.append(instance)
        return instance

    yield factory
    for instance in made:
        await instance.finalize()
    await drop_if_exists(dsn, *dict.fromkeys(instance.workspace for instance in made))


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
async def llm_rag(make_rag: Callable[..., LightRAG]) -> AsyncIterator[LightRAG]:
    """An initialized LightRAG with the scripted LLM, on its own workspace."""
    instance = make_rag()
    await instance.initialize()
    yield instance
    await instance.finalize()


@pytest.fixture(scope="session")
def serve_process(dsn: str, llm_server: FakeOpenAI) -> Callable[..., AbstractContextManager[Server]]:
    """``with serve_process(workspace, folder, key=None, args=(), **env) as server:``
    ``lightrag-pg serve`` as a real process (see :func:`tests.served_process.serving_process`)
    with the scripted LLM; its workspace is dropped afterwards."""

    @contextmanager
    def serve(workspace: str, folder: Path, key: str | None = None, **options: Any) -> Iterator[Server]:
        try:
            with serving_process(dsn, llm_server, workspace, folder, key, **options) as server:
                yield server
        finally:
            with ThreadPoolExecutor(1) as thread:  # callers may be inside a running event loop
                thread.submit(asyncio.run, drop_if_exists(dsn, workspace)).result()

    return serve


@pytest_asyncio.fixture
async def served(dsn: str, workspace_name: str, tmp_path: Path) -> AsyncIterator[Served]:
    """The server's app, in this event loop with the scripted LLM, serving this test's workspace
    (input folder ``tmp_path / "inputs"``), and an httpx client for it."""
    from lightrag_pg.server import ServerSettings  # the server's extra, only for the tests that need it

    from .server_support import serving

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "inputs")
    async with serving(settings) as server:
        yield server


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, llm_server: FakeOpenAI) -> None:
    """The environment a user sets for the command line: the fake endpoint for chat and embeddings."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LLM_MODEL", "fake-model")
    monkeypatch.setenv("EMBEDDING_MODEL", "fake-embedding")
    monkeypatch.setenv("EMBEDDING_DIM", "64")
