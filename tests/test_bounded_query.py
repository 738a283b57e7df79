"""Bounded work in the library: a question's cost stays small whatever its length, and
every statement on the pool runs under a timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import asyncpg
import numpy as np
import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.pool import without_statement_timeout
from lightrag_pg.db.workspace import drop_workspace
from lightrag_pg.errors import InvalidInput, QueryTooLong, StatementTimeout
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.query.bounds import embeddable, leading_words
from lightrag_pg.testing import StatementCounter, hashed_vectors

TEXTS = [
    "Alice founded Acme in Paris. Bob joined Acme in Berlin.",
    "Carol leads the Quantum Lab in Paris. Carol and Alice publish papers together.",
]
TIMEOUT_QUESTION = "How is Alice related to Acme?"


def long_question(chars: int) -> str:
    """A question of ``chars`` characters: names and many distinct words, as pasted text has."""
    words = (f"{name} term{i} studies" for i, name in enumerate(["Alice", "Acme", "Paris", "Bob"] * chars))
    text, size = [], 0
    for word in words:
        if size >= chars:
            break
        text.append(word)
        size += len(word) + 1
    return " ".join(text)[:chars]


@pytest.fixture
async def filled(llm_rag: LightRAG) -> LightRAG:
    await llm_rag.ainsert(TEXTS)
    return llm_rag


@pytest.mark.slow
async def test_a_long_question_is_bounded(filled: LightRAG) -> None:
    question = long_question(99_000)
    started = time.perf_counter()
    async with asyncio.timeout(60):
        data = await filled.aquery_data(question, QueryParam(mode="mix"))
    assert time.perf_counter() - started < 10
    assert data["status"] == "success"
    assert "Alice" in {e["entity_name"] for e in data["data"]["entities"]}
    assert len(data["metadata"]["keywords"]["low_level"]) <= 20


@pytest.mark.slow
async def test_a_question_over_the_cap_is_refused_naming_it(filled: LightRAG) -> None:
    with StatementCounter() as counter:
        async with asyncio.timeout(60):
            with pytest.raises(QueryTooLong, match="max_query_chars") as refused:
                await filled.aquery_data(long_question(1_000_000), QueryParam(mode="mix"))
    assert isinstance(refused.value, InvalidInput)
    assert "1,000,000 characters" in str(refused.value) and "100,000" in str(refused.value)
    assert counter.total == 0


@pytest.mark.slow
async def test_a_one_megabyte_question_answers_when_the_cap_allows_it(
    make_rag: Callable[..., LightRAG], conn: asyncpg.Connection
) -> None:
    rag = make_rag(max_query_chars=2_000_000)
    await rag.initialize()
    try:
        await rag.ainsert(TEXTS)
        started = time.perf_counter()
        async with asyncio.timeout(60):
            data = await rag.aquery_data(long_question(1_000_000), QueryParam(mode="mix"))
        assert time.perf_counter() - started < 20
        assert data["metadata"]["keywords"]["low_level"] == ["Alice", "Acme", "Paris", "Bob"]
        assert data["message"] == "Query returned empty dataset."  # the question fills the prompt
    finally:
        await rag.finalize()
        await drop_workspace(conn, rag.workspace)


async def test_the_text_embedded_is_cut_to_the_models_input_limit(
    make_rag: Callable[..., LightRAG], conn: asyncpg.Connection
) -> None:
    embedded: list[str] = []

    def record(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return hashed_vectors(texts, 64)

    rag = make_rag(embedding_func=EmbeddingFunc(64, record, max_token_size=64))
    await rag.initialize()
    try:
        await rag.ainsert(TEXTS)
        embedded.clear()
        await rag.aquery_data(long_question(20_000), QueryParam(mode="mix"))
        tokenizer = get_tokenizer()
        assert embedded and max(tokenizer.count(t) for t in embedded) <= 64
    finally:
        await rag.finalize()
        await drop_workspace(conn, rag.workspace)


@pytest.mark.parametrize("field", ["top_k", "chunk_top_k", "max_total_tokens"])
def test_huge_numbers_in_a_query_param_are_refused_with_their_limit(field: str) -> None:
    with pytest.raises(InvalidInput, match=f"{field} must be at most"):
        QueryParam(**{field: 10**30})  # type: ignore[arg-type]


async def test_the_pool_runs_statements_under_a_30_second_timeout_by_default(rag: LightRAG) -> None:
    async with rag.pool.acquire() as c:
        assert await c.fetchval("SHOW statement_timeout") == "30s"
        async with without_statement_timeout(c):
            assert await c.fetchval("SHOW statement_timeout") == "0"
        assert await c.fetchval("SHOW statement_timeout") == "30s"


async def test_a_statement_over_the_timeout_raises_statement_timeout(
    make_rag: Callable[..., LightRAG], conn: asyncpg.Connection
) -> None:
    rag = make_rag(statement_timeout_ms=300)
    await rag.initialize()
    try:
        await rag.ainsert(TEXTS)
        async with conn.transaction():
            await conn.execute(f'LOCK TABLE "{rag.workspace}".entities IN ACCESS EXCLUSIVE MODE')
            started = time.perf_counter()
            with pytest.raises(StatementTimeout, match="statement_timeout_ms"):
                await rag.aquery_data(TIMEOUT_QUESTION, QueryParam(mode="local"))
            assert time.perf_counter() - started < 5
    finally:
        await rag.finalize()
        await drop_workspace(conn, rag.workspace)


def test_the_words_searched_are_the_first_ones_and_bounded_in_characters() -> None:
    assert leading_words("Who  founded\nAcme in\tParis?", 3) == "Who founded Acme"
    assert leading_words("x" * 10_000, 100, 4000) == "x" * 4000


class BytesOnly:
    """An encoder with no ``decode``: one token per byte."""

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


def test_a_text_is_cut_to_its_token_limit_even_without_a_decoder() -> None:
    tokenizer = get_tokenizer()
    short = "Who founded Acme?"
    assert embeddable(short, tokenizer, 64) == short
    cut = embeddable(long_question(5_000), tokenizer, 64)
    assert tokenizer.count(cut) <= 64 and long_question(5_000).startswith(cut[:100])
    assert len(embeddable("é" * 100, BytesOnly(), 64).encode("utf-8")) <= 64
