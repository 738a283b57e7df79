"""Every wait is bounded and names what it waited for; vectors that cannot be searched are refused."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import numpy as np
import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.connect import split_connect_timeout
from lightrag_pg.errors import ConfigurationError, ConnectFailed, EmbeddingError, PoolExhausted
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors

from .conftest import drop_if_exists


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_connect_timeout_is_taken_out_of_the_dsn() -> None:
    dsn = "postgresql://u:p@h:5432/db?sslmode=disable&connect_timeout=3"
    assert split_connect_timeout(dsn, 10.0) == ("postgresql://u:p@h:5432/db?sslmode=disable", 3.0)
    assert split_connect_timeout("postgresql://h/db", 10.0) == ("postgresql://h/db", 10.0)
    with pytest.raises(ConfigurationError, match="connect_timeout in the DSN must be a number"):
        split_connect_timeout("postgresql://h/db?connect_timeout=soon", 10.0)
    with pytest.raises(ConfigurationError, match="must be positive"):
        split_connect_timeout("postgresql://h/db?connect_timeout=0", 10.0)


@pytest.mark.parametrize("via_dsn", [True, False])
async def test_a_server_that_never_answers_is_a_bounded_clear_error(
    silent_server: int, via_dsn: bool
) -> None:
    dsn = f"postgresql://me:secret@127.0.0.1:{silent_server}/db"
    settings = {} if via_dsn else {"connect_timeout": 0.5}
    if via_dsn:
        dsn += "?connect_timeout=0.5"
    rag = LightRAG(dsn=dsn, embedding_func=hashed_embedding_func(), **settings)
    started = time.monotonic()
    with pytest.raises(ConnectFailed) as caught:
        await rag.initialize()
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert f"127.0.0.1:{silent_server}" in message and "no answer within 0.5 s" in message
    assert "secret" not in message


async def test_holding_the_only_connection_while_calling_the_same_instance_fails_fast(
    dsn: str, workspace_name: str
) -> None:
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        embedding_func=hashed_embedding_func(),
        pool_min_size=1,
        pool_max_size=1,
        pool_acquire_timeout=0.5,
    )
    await rag.initialize()
    try:
        started = time.monotonic()
        async with rag.session():
            with pytest.raises(
                PoolExhausted, match=r"no free connection in the pool of workspace .* after 0.5 s"
            ):
                await rag.aquery_data("Who met Bob?", QueryParam(mode="naive"))
        assert time.monotonic() - started < 5
        data = await rag.aquery_data("Who met Bob?", QueryParam(mode="naive"))
        assert data["status"] in ("success", "failure")
    finally:
        await rag.finalize()
        await drop_if_exists(dsn, workspace_name)


def test_waits_must_be_positive() -> None:
    for name in ("connect_timeout", "pool_acquire_timeout"):
        with pytest.raises(ConfigurationError, match=f"{name} must be positive seconds"):
            LightRAG(**{name: 0})


def zero_for(word: str, dim: int = 32) -> EmbeddingFunc:
    """Hashed embeddings, except an all-zero vector for texts containing ``word``."""

    async def embed(texts: list[str]) -> np.ndarray:
        vectors = hashed_vectors(texts, dim)
        vectors[[i for i, t in enumerate(texts) if word in t]] = 0.0
        return vectors

    return EmbeddingFunc(embedding_dim=dim, func=embed, model_name="zero-for-some")


async def test_an_all_zero_query_vector_is_an_error_not_an_empty_answer(
    dsn: str, workspace_name: str
) -> None:
    async with LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=zero_for("zzz")) as rag:
        try:
            await rag.ainsert("Alice met Bob in Berlin.")
            with pytest.raises(EmbeddingError, match="all-zero vectors"):
                await rag.aquery_data("zzz", QueryParam(mode="naive"))
        finally:
            await rag.drop_workspace()


@pytest.mark.slow
async def test_a_document_embedded_to_zero_fails_with_the_reason(dsn: str, workspace_name: str) -> None:
    async with LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=zero_for("zzz")) as rag:
        try:
            result = await rag.ainsert("zzz zzz zzz")
            assert result.progress.docs_failed == 1
            async with rag.session() as s:
                (status,) = await s.docs.statuses(result.new_ids)
            assert "all-zero vectors" in (status.error_msg or "")
        finally:
            await rag.drop_workspace()
