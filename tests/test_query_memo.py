"""The query memo: a question asked before reuses its vectors and token counts, with the same result."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import numpy as np
import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.llm import tokenizer as tokenizer_module
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.llm.memo import OpenMemo, QueryMemo, text_digest
from lightrag_pg.llm.tokenizer import LazyTokenizer, get_tokenizer
from lightrag_pg.testing import StatementCounter, hashed_vectors, scripted_llm

CORPUS = {
    "alice.md": 'Alice met Bob in Paris. Alice works at Acme as a researcher.\n\nShe writes "notes".',
    "globex.md": "Bob joined Globex in Berlin. Acme and Globex compete in Berlin.",
    "lab.md": "Carol leads the Quantum Lab in Paris. Carol and Alice publish papers together.",
}
QUESTION = "How is Alice related to Bob and Acme?"
MODES = ("local", "global", "hybrid", "naive", "mix")


class CountingEmbedding:
    """Hashed embeddings that record every text they embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return hashed_vectors(texts, 32)


class MemoryCache:
    """An in-memory answer cache."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self.rows.get(key)

    async def put(self, key: str, response: str, **fields: Any) -> None:
        self.rows[key] = response


def without_timings(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without what differs from call to call: timings and the calls' usage."""
    data["metadata"].pop("timings_ms", None)
    data["metadata"].pop("usage", None)
    return data


@pytest.fixture
async def memo_rags(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> AsyncIterator[tuple[Any, ...]]:
    """(with the memo, without it, the embedding of the one with it), on one indexed workspace."""
    embedding = CountingEmbedding()
    func = EmbeddingFunc(embedding_dim=32, func=embedding, model_name="counting-hashed-32")
    memo = LightRAG(
        dsn=dsn, workspace=workspace_name, llm_model_func=scripted_llm, embedding_func=func, query_memo=True
    )
    plain = LightRAG(dsn=dsn, workspace=workspace_name, llm_model_func=scripted_llm, embedding_func=func)
    async with memo, plain:
        await memo.ainsert(list(CORPUS.values()), file_paths=list(CORPUS))
        embedding.texts.clear()
        yield memo, plain, embedding
        await memo.drop_workspace()


def refuse_to_tokenize(name: str) -> Any:
    raise AssertionError(f"the tokenizer {name} was asked for")


async def test_a_question_asked_before_embeds_and_tokenizes_nothing_and_gives_the_same_result(
    memo_rags: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    memo, plain, embedding = memo_rags
    for mode in MODES:
        param = QueryParam(mode=mode)  # type: ignore[arg-type]
        expected = without_timings(await plain.aquery_data(QUESTION, param))
        expected_text = await plain.aquery(QUESTION, QueryParam(mode=mode, only_need_prompt=True))  # type: ignore[arg-type]
        embedding.texts.clear()
        assert without_timings(await memo.aquery_data(QUESTION, param)) == expected  # stored
        # the first time, the question is embedded while its keywords are found, then the keywords
        # (naive mode finds none: its two empty keyword texts go first)
        assert embedding.texts[2 if mode == "naive" else 0] == QUESTION and len(embedding.texts) == 3
        embedding.texts.clear()
        with monkeypatch.context() as patch:
            patch.setattr(tokenizer_module, "get_tokenizer", refuse_to_tokenize)
            assert without_timings(await memo.aquery_data(QUESTION, param)) == expected
            prompt = await memo.aquery(QUESTION, QueryParam(mode=mode, only_need_prompt=True))  # type: ignore[arg-type]
        assert prompt == expected_text
        assert embedding.texts == [], mode


async def test_a_changed_chunk_is_counted_again_not_answered_from_the_memo(
    memo_rags: tuple[Any, ...], conn: asyncpg.Connection
) -> None:
    memo, plain, _ = memo_rags
    param = QueryParam(mode="mix", max_total_tokens=3000)
    assert len((await memo.aquery_data(QUESTION, param))["data"]["chunks"]) == 3
    await conn.execute(
        f"UPDATE {memo.workspace}.text_chunks SET content = content || repeat(' Longer and longer.', 300)"
    )
    expected = without_timings(await plain.aquery_data(QUESTION, param))
    assert len(expected["data"]["chunks"]) == 1  # the longer chunks no longer fit
    assert without_timings(await memo.aquery_data(QUESTION, param)) == expected


async def test_other_keywords_for_a_question_asked_before_are_embedded_again(
    memo_rags: tuple[Any, ...],
) -> None:
    memo, plain, embedding = memo_rags
    first = QueryParam(mode="hybrid", hl_keywords=["research"], ll_keywords=["Alice"])
    other = QueryParam(mode="hybrid", hl_keywords=["competition"], ll_keywords=["Globex"])
    await memo.aquery_data(QUESTION, first)
    embedding.texts.clear()
    expected = without_timings(await plain.aquery_data(QUESTION, other))
    embedding.texts.clear()
    assert without_timings(await memo.aquery_data(QUESTION, other)) == expected
    assert embedding.texts == ["Globex", "competition"]  # the question's own vector was kept
    embedding.texts.clear()
    assert without_timings(await memo.aquery_data(QUESTION, other)) == expected
    assert embedding.texts == []


async def test_the_memo_costs_one_statement_and_one_more_the_first_time(memo_rags: tuple[Any, ...]) -> None:
    memo, plain, _ = memo_rags
    param = QueryParam(mode="mix", hl_keywords=["research"], ll_keywords=["Alice"])
    with StatementCounter() as counter:
        await plain.aquery_data(QUESTION, param)
    without = counter.total
    with StatementCounter() as counter:
        await memo.aquery_data(QUESTION, param)
    assert counter.total == without + 2, counter.by_method  # look-up and write
    with StatementCounter() as counter:
        await memo.aquery_data(QUESTION, param)
    assert counter.total == without + 1, counter.by_method  # look-up only
    assert counter.total <= 3


async def test_the_memo_is_cleared_with_the_cache(
    memo_rags: tuple[Any, ...], conn: asyncpg.Connection
) -> None:
    memo, _, _ = memo_rags
    await memo.aquery_data(QUESTION, QueryParam(mode="naive"))
    count = f"SELECT count(*) FROM {memo.workspace}.llm_cache WHERE cache_type = 'query_memo'"
    assert await conn.fetchval(count) == 1
    assert await memo.aclear_cache(["query_memo"]) == 1
    assert await conn.fetchval(count) == 0


async def test_an_open_memo_answers_what_it_holds_and_asks_for_the_rest() -> None:
    cache = MemoryCache()
    memo = QueryMemo(cache, "model", 2, "o200k_base")  # type: ignore[arg-type]
    texts = ["low", "high", "question"]
    first = await memo.open("mix", "question")
    assert [first.vector(t) for t in texts] == [None] * 3
    first.keep_vectors(texts, np.array([[1, 0], [0, 1], [0.5, 0.5]], dtype=np.float32))
    counter = first.counter(get_tokenizer("o200k_base"))
    assert counter.count("hello world") == 2
    await first.save()
    assert len(cache.rows) == 1

    second = await memo.open("mix", "question")
    vectors = [second.vector(t) for t in texts]
    assert all(v is not None and v.dtype == np.float32 for v in vectors)
    assert [v.tolist() for v in vectors] == [[1, 0], [0, 1], [0.5, 0.5]]  # type: ignore[union-attr]
    tokenizer = LazyTokenizer("o200k_base")
    counter = second.counter(tokenizer)
    assert counter.count("hello world") == 2 and not second.computed
    assert counter.count("hello there, world") == len(
        get_tokenizer("o200k_base").encode("hello there, world")
    )
    assert second.computed
    await second.save()
    stored = json.loads(next(iter(cache.rows.values())))
    assert set(stored["counts"]) == {text_digest("hello world"), text_digest("hello there, world")}

    assert (await memo.open("naive", "question")).vector("low") is None  # another mode, another memo
    other = QueryMemo(cache, "other model", 2, "o200k_base")  # type: ignore[arg-type]
    assert (await other.open("mix", "question")).vector("low") is None


async def test_a_memo_that_is_not_one_is_read_as_empty() -> None:
    cache = MemoryCache()
    memo = QueryMemo(cache, "model", 2, "o200k_base")  # type: ignore[arg-type]
    opened = await memo.open("mix", "a")
    for stored in (
        "not json",
        "[]",
        '{"vectors": [], "counts": {}}',
        json.dumps({"vectors": {text_digest("a"): "AAAA"}, "counts": {text_digest("a"): "3"}}),
        json.dumps({"vectors": {text_digest("a"): "not base64!"}, "counts": {text_digest("a"): True}}),
    ):
        cache.rows[opened.key] = stored
        again = await memo.open("mix", "a")
        assert again.vector("a") is None
        assert again.stored_counts == {}


async def test_a_memo_that_computed_nothing_is_not_written_again() -> None:
    cache = MemoryCache()
    opened = OpenMemo(cache, "key", "mix", {text_digest("a"): b"\0" * 8}, {text_digest("a"): 1})  # type: ignore[arg-type]
    assert opened.vector("a") is not None
    assert opened.counter(LazyTokenizer("o200k_base")).count("a") == 1
    await opened.save()
    assert cache.rows == {}


def test_a_lazy_tokenizer_counts_as_the_tokenizer() -> None:
    lazy = LazyTokenizer("gpt-4o-mini")
    assert lazy.name == "o200k_base"
    text = 'Chunks {"content": "a\\nb"}\n'
    assert lazy.count(text) == get_tokenizer("o200k_base").count(text)
    assert lazy.encode(text) == get_tokenizer("o200k_base").encode(text)
    assert lazy.built
