"""The query pipeline over a small hand-built corpus, through the scripted LLM server."""

from __future__ import annotations

import dataclasses

import asyncpg
import pytest

from lightrag_pg import InvalidInput, LightRAG, QueryParam
from lightrag_pg.query.answer_prompts import FAIL_RESPONSE
from lightrag_pg.query.knowledge import EMPTY_WORKSPACE
from lightrag_pg.testing import StatementCounter, hashed_vectors

from .fake_openai import FakeOpenAI

CORPUS = {
    "alice.md": "Alice met Bob in Paris. Alice works at Acme as a researcher.",
    "globex.md": "Bob joined Globex in Berlin. Acme and Globex compete in Berlin.",
    "lab.md": "Carol leads the Quantum Lab in Paris. Carol and Alice publish papers together.",
}
QUESTION = "How is Alice related to Bob and Acme?"


@pytest.fixture
async def corpus_rag(llm_rag: LightRAG) -> LightRAG:
    await llm_rag.ainsert(list(CORPUS.values()), file_paths=list(CORPUS))
    return llm_rag


def names(data: dict) -> list[str]:
    return [e["entity_name"] for e in data["data"]["entities"]]


def pairs(data: dict) -> list[tuple[str, str]]:
    return [(r["src_id"], r["tgt_id"]) for r in data["data"]["relationships"]]


async def expected_entity_ranking(rag: LightRAG, keywords: str, conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch(f"SELECT name, content FROM {rag.workspace}.entity_vectors")
    query = hashed_vectors([keywords])[0]
    sims = hashed_vectors([r["content"] for r in rows]) @ query
    ranked = sorted(zip(sims, [r["name"] for r in rows], strict=False), key=lambda p: (-p[0], p[1]))
    return [name for sim, name in ranked if sim >= 0.2]


async def test_local_mode_ranks_entities_then_edges(corpus_rag: LightRAG, conn: asyncpg.Connection) -> None:
    data = await corpus_rag.aquery_data(QUESTION, QueryParam(mode="local", lexical=False))
    assert data["status"] == "success"
    assert data["metadata"]["keywords"]["low_level"] == ["Alice", "Bob", "Acme"]
    assert names(data) == await expected_entity_ranking(corpus_rag, "Alice, Bob, Acme", conn)
    rels = data["data"]["relationships"]
    keys = [(r["rank"], r["weight"]) for r in rels]
    assert rels and keys == sorted(keys, reverse=True), "edges ranked by (edge degree, weight)"
    found = set(names(data))
    assert all(r["src_id"] in found or r["tgt_id"] in found for r in rels)
    assert data["data"]["chunks"] and data["data"]["references"]


async def test_with_lexical_search_the_entities_the_question_names_come_first(corpus_rag: LightRAG) -> None:
    data = await corpus_rag.aquery_data(QUESTION, QueryParam(mode="local"))
    named = {n for n in ("Alice", "Bob", "Acme") if n in QUESTION}
    assert named and set(names(data)[: len(named)]) == named


async def test_global_mode_returns_relations_and_their_endpoints(corpus_rag: LightRAG) -> None:
    param = QueryParam(mode="global", hl_keywords=["Alice met Bob"], ll_keywords=[])
    data = await corpus_rag.aquery_data(QUESTION, param)
    assert pairs(data)[0] == ("Alice", "Bob")
    endpoints = {n for p in pairs(data) for n in p}
    assert set(names(data)) <= endpoints
    assert names(data)[:2] == ["Alice", "Bob"]


async def test_hybrid_and_mix_merge_both_sides(corpus_rag: LightRAG) -> None:
    hybrid = await corpus_rag.aquery_data(QUESTION, QueryParam(mode="hybrid"))
    mix = await corpus_rag.aquery_data(QUESTION, QueryParam(mode="mix"))
    assert set(names(hybrid)) <= set(names(mix)) | set(names(hybrid))
    assert len(set(names(mix))) == len(names(mix)), "entities are de-duplicated"
    assert len(set(pairs(mix))) == len(pairs(mix)), "relations are de-duplicated"
    chunk_ids = [c["chunk_id"] for c in mix["data"]["chunks"]]
    assert len(set(chunk_ids)) == len(chunk_ids)
    assert mix["metadata"]["query_mode"] == "mix"


async def test_naive_mode_uses_chunks_only(corpus_rag: LightRAG) -> None:
    data = await corpus_rag.aquery_data("Carol Quantum Lab Paris", QueryParam(mode="naive"))
    assert names(data) == [] and pairs(data) == []
    assert data["data"]["chunks"][0]["content"].startswith("Carol leads")
    assert data["data"]["references"][0]["file_path"] == "lab.md"


async def test_bypass_sends_the_question_to_the_llm(corpus_rag: LightRAG, llm_server: FakeOpenAI) -> None:
    answer = await corpus_rag.aquery("Say hello", QueryParam(mode="bypass"))
    assert "Scripted answer" in answer and "Say hello" in answer


async def test_answers_streams_and_cache(corpus_rag: LightRAG, llm_server: FakeOpenAI) -> None:
    answer = await corpus_rag.aquery(QUESTION)
    assert answer.startswith("Scripted answer")
    calls = llm_server.calls
    assert await corpus_rag.aquery(QUESTION) == answer
    assert llm_server.calls == calls, "keywords and answer come from the cache"
    stream = await corpus_rag.aquery_stream(QUESTION, QueryParam(mode="local"))
    assert stream.references
    pieces = [p async for p in stream]
    assert len(pieces) > 1 and "".join(pieces).startswith("Scripted answer")


async def test_context_and_prompt_only(corpus_rag: LightRAG) -> None:
    ctx = await corpus_rag.aquery(QUESTION, QueryParam(only_need_context=True))
    assert "Knowledge Graph Data (Entity)" in ctx and "Reference Document List" in ctx
    prompt = await corpus_rag.aquery(QUESTION, QueryParam(only_need_prompt=True))
    assert prompt.endswith(QUESTION) and "---User Query---" in prompt


async def test_budgets_are_respected(corpus_rag: LightRAG) -> None:
    tokenizer = corpus_rag.tokenizer
    small = QueryParam(mode="mix", max_entity_tokens=60, max_relation_tokens=60, max_total_tokens=2500)
    data = await corpus_rag.aquery_data(QUESTION, small)
    full = await corpus_rag.aquery_data(QUESTION, QueryParam(mode="mix"))
    assert len(names(data)) < len(names(full))
    prompt = await corpus_rag.aquery(QUESTION, dataclasses.replace(small, only_need_prompt=True))
    assert tokenizer.count(prompt) <= 2500


async def test_empty_workspace_says_so_in_a_sentence(llm_rag: LightRAG) -> None:
    assert await llm_rag.aquery(QUESTION) == EMPTY_WORKSPACE
    data = await llm_rag.aquery_data(QUESTION)
    assert data["status"] == "failure"


async def test_query_without_keywords_fails_like_upstream(
    corpus_rag: LightRAG, llm_server: FakeOpenAI
) -> None:
    original = llm_server.responder
    llm_server.responder = lambda messages, body: '{"high_level_keywords": [], "low_level_keywords": []}'
    try:
        long_query = "please tell me everything that there is to know about this whole collection"
        assert await corpus_rag.aquery(long_query, QueryParam(mode="local")) == FAIL_RESPONSE
    finally:
        llm_server.responder = original


@pytest.mark.parametrize("question", ["", "  \n\t", "\x00"])
async def test_an_empty_question_is_refused_in_every_call(llm_rag: LightRAG, question: str) -> None:
    for call in (llm_rag.aquery, llm_rag.aquery_data, llm_rag.aquery_stream):
        with pytest.raises(InvalidInput, match="empty or whitespace only"):
            await call(question, QueryParam(mode="mix"))


def test_invalid_params_are_refused() -> None:
    with pytest.raises(InvalidInput):
        QueryParam(mode="sideways")
    with pytest.raises(InvalidInput):
        QueryParam(top_k=0)
    with pytest.raises(InvalidInput):
        QueryParam(cosine_threshold=2.0)


@pytest.mark.slow
@pytest.mark.parametrize("lexical", [False, True], ids=["vector", "lexical"])
@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix", "naive"])
async def test_round_trips_stay_small_and_do_not_grow_with_top_k(
    corpus_rag: LightRAG, mode: str, lexical: bool
) -> None:
    await corpus_rag.aquery_data(QUESTION, QueryParam(mode=mode, lexical=lexical))
    hits, misses = [], []
    for top_k in (2, 40):
        param = QueryParam(mode=mode, top_k=top_k, chunk_top_k=top_k, lexical=lexical)
        with StatementCounter() as counter:
            await corpus_rag.aquery_data(QUESTION, param)
        hits.append(counter.total)
        with StatementCounter() as counter:  # a new question: the keyword answer is looked up, then stored
            await corpus_rag.aquery_data(f"{QUESTION} ({top_k}, {lexical})", param)
        misses.append(counter.total)
    assert hits[0] == hits[1] and misses[0] == misses[1], "round trips must not grow with top_k"
    graph = mode != "naive"
    assert hits[1] == (2 if graph else 1), f"{mode}: keyword look-up and one retrieval statement"
    assert misses[1] == (3 if graph else 1), f"{mode}: look-up, store, retrieval; pool resets included"


async def test_pool_release_sends_nothing_but_still_ends_a_transaction(rag: LightRAG) -> None:
    with StatementCounter() as counter:
        async with rag.pool.acquire() as conn:
            await conn.fetchval("SELECT 1")
    assert counter.total == 1, counter.by_method
    async with rag.pool.acquire() as conn:
        await conn.execute("BEGIN")
        pid = await conn.fetchval("SELECT pg_backend_pid()")
    async with rag.pool.acquire() as conn:
        assert await conn.fetchval("SELECT pg_backend_pid()") == pid
        assert not conn.is_in_transaction()


def test_sync_wrappers(make_rag) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    rag = make_rag()
    result = rag.insert(CORPUS["alice.md"], file_paths="alice.md")
    assert result.progress.docs_done == 1
    data = rag.query_data(QUESTION, QueryParam(mode="local"))
    assert "Alice" in names(data)
    assert rag.query(QUESTION).startswith("Scripted answer")

    async def drop() -> None:
        await rag.initialize()
        await rag.drop_workspace()

    asyncio.run(drop())
