"""Hostile query input beyond the question: conversation history holding NUL or lone
surrogates, too long or too many messages, and file paths too long to store or to cite."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from lightrag_pg import InvalidInput, LightRAG, QueryParam
from lightrag_pg.errors import QueryTooLong
from lightrag_pg.query.param import MAX_HISTORY_MESSAGES

from .server_support import TEXT, serving

MODES = ("local", "global", "hybrid", "naive", "mix", "bypass")
DOCS = ["Alice founded Acme in Paris.", "Bob joined Acme in Berlin.", "Carol met Alice in Rome."]
QUESTION = "Where did Alice found Acme?"
HOSTILE = [
    {"role": "user", "content": "Tell me about Alice\x00 and\x00\x00Bob \ud800."},
    {"role": "assistant", "content": "Alice \udfff founded Acme.\x00"},
    {"role": "system", "content": "\ud83d\ude00 be brief\x00"},
    {"role": "user", "content": "And Carol? \udc00"},
]
CLEAN = [
    {"role": "user", "content": "Tell me about Alice and Bob \ufffd."},
    {"role": "assistant", "content": "Alice \ufffd founded Acme. "},
    {"role": "system", "content": "\U0001f600 be brief "},
    {"role": "user", "content": "And Carol? \ufffd"},
]


async def test_hostile_history_is_scrubbed_in_every_mode(llm_rag: LightRAG) -> None:
    """NUL and lone surrogates in any history message (user, assistant, system) are
    scrubbed as in the question: every mode answers, through the real OpenAI client and
    the LLM cache, exactly as with the scrubbed history."""
    result = await llm_rag.ainsert(DOCS)
    assert result.progress.docs_failed == 0
    for mode in MODES:
        hostile = QueryParam(mode=mode, conversation_history=HOSTILE)  # type: ignore[arg-type]
        clean = QueryParam(mode=mode, conversation_history=CLEAN)  # type: ignore[arg-type]
        assert hostile.conversation_history == CLEAN
        answer = await llm_rag.aquery(QUESTION, hostile)
        assert answer and answer == await llm_rag.aquery(QUESTION, clean)
        if mode != "bypass":
            data = await llm_rag.aquery_data(QUESTION, hostile)
            assert data["status"] == "success" and data["data"]["chunks"], mode
            assert data["data"] == (await llm_rag.aquery_data(QUESTION, clean))["data"]
        streamed = await llm_rag.aquery_stream(QUESTION, hostile)
        assert "".join([piece async for piece in streamed]) == answer


async def test_history_is_bounded_like_the_question(llm_rag: LightRAG) -> None:
    """A message longer than max_query_chars is QueryTooLong, naming the message; more
    than MAX_HISTORY_MESSAGES messages is InvalidInput; nothing is searched or asked."""
    limit = llm_rag.settings.max_query_chars
    long = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x" * (limit + 1)}]
    for mode in MODES:
        with pytest.raises(QueryTooLong, match=r"conversation_history\[1\] has 100,001 characters"):
            await llm_rag.aquery(QUESTION, QueryParam(mode=mode, conversation_history=long))  # type: ignore[arg-type]
    fits = [{"role": "user", "content": "x" * limit}]
    assert await llm_rag.aquery(QUESTION, QueryParam(mode="bypass", conversation_history=fits))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=f"at most {MAX_HISTORY_MESSAGES:,} items, got 1,001"):
        QueryParam(conversation_history=[{"role": "user", "content": "hi"}] * (MAX_HISTORY_MESSAGES + 1))  # type: ignore[list-item]


async def test_the_server_refuses_hostile_history_with_a_400_and_bounds_it(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    """Through /query, /query/data, /query/stream and /api/chat (earlier messages), a NUL or
    a lone surrogate in a history message is a 400 naming it, as in the question; a message
    past the question's bound a 422; the next clean request is answered."""
    from lightrag_pg.server import ServerSettings
    from lightrag_pg.server.validate import MAX_QUERY_CHARS

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "inputs")
    async with serving(settings) as server:
        posted = await server.client.post("/documents/text", json={"text": TEXT})
        await server.track(posted.json()["track_id"])
        json_header = {"content-type": "application/json"}
        for bad, word in (('"Alice \\u0000"', "NUL"), ('"Alice \\ud800"', "surrogate")):
            history = f'[{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": {bad}}}]'
            for path in ("/query", "/query/data", "/query/stream"):
                body = f'{{"query": "Who founded Acme?", "conversation_history": {history}}}'
                refused = await server.client.post(path, content=body.encode(), headers=json_header)
                assert refused.status_code == 400 and word in refused.json()["detail"], (path, refused.text)
            messages = history[:-1] + ', {"role": "user", "content": "Who founded Acme?"}]'
            chat = f'{{"model": "lightrag:latest", "stream": false, "messages": {messages}}}'
            refused = await server.client.post("/api/chat", content=chat.encode(), headers=json_header)
            assert refused.status_code == 400 and word in refused.json()["detail"], refused.text
        long = [{"role": "user", "content": "x" * (MAX_QUERY_CHARS + 1)}]
        over = await server.client.post("/query", json={"query": "Who?", "conversation_history": long})
        assert over.status_code == 422 and str(MAX_QUERY_CHARS) in over.text
        chat_over = {"model": "m", "stream": False, "messages": [*long, {"role": "user", "content": "Who?"}]}
        over = await server.client.post("/api/chat", json=chat_over)
        assert over.status_code == 422 and str(MAX_QUERY_CHARS) in over.text
        clean = [{"role": "user", "content": "Tell me about Acme."}]
        for path in ("/query", "/query/data"):
            answered = await server.client.post(
                path, json={"query": "Who founded Acme?", "conversation_history": clean}
            )
            assert answered.status_code == 200, answered.text
        chat_ok = {"model": "m", "stream": False, "messages": [*clean, {"role": "user", "content": "Who?"}]}
        assert (await server.client.post("/api/chat", json=chat_ok)).status_code == 200


async def stored_path_rows(conn: asyncpg.Connection, ws: str, doc_id: str, path: str) -> None:
    """Give a stored document's rows ``path``, as an older version or an analyst's SQL could."""
    for table, key in (("full_docs", "id"), ("doc_status", "id"), ("text_chunks", "doc_id")):
        await conn.execute(f'UPDATE "{ws}".{table} SET file_path = $1 WHERE {key} = $2', path, doc_id)
