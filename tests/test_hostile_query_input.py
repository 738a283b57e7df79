"""Hostile query input beyond the question: conversation history holding NUL or lone
surrogates, too long or too many messages, and file paths too long to store or to cite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg import InvalidInput, LightRAG, QueryParam
from lightrag_pg.config import MAX_FILE_PATH_CHARS
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


async def test_a_file_path_past_the_bound_is_refused_at_intake_and_stores_nothing(
    rag_factory: Any, conn: asyncpg.Connection
) -> None:
    """ainsert, aenqueue and ainsert_custom_kg refuse a file path longer than
    MAX_FILE_PATH_CHARS with an error naming it and the bound; a path of exactly that
    many characters is stored as given."""
    rag = await rag_factory()
    longest = "d/" * (MAX_FILE_PATH_CHARS // 2)
    too_long = longest + "x"
    for call in (rag.ainsert, rag.aenqueue):
        with pytest.raises(InvalidInput, match=r"file_paths\[1\] is 4,097 characters long.*at most 4,096"):
            await call(DOCS[:2], file_paths=["a.txt", too_long])
    chunk = {"content": "Frank builds boats.", "source_id": "k1", "file_path": too_long}
    with pytest.raises(InvalidInput, match=r"chunks\[0\]: file_path is 4,097 characters long"):
        await rag.ainsert_custom_kg({"chunks": [chunk]})
    entity = {"entity_name": "Frank", "entity_type": "person", "description": "A builder.", "source_id": "k1"}
    with pytest.raises(InvalidInput, match=r"entities\[0\]: file_path is 4,097 characters long"):
        await rag.ainsert_custom_kg(
            {"chunks": [{**chunk, "file_path": "k.txt"}], "entities": [{**entity, "file_path": too_long}]}
        )
    assert await conn.fetchval(f'SELECT count(*) FROM "{rag.workspace}".full_docs') == 0
    result = await rag.ainsert(DOCS[:1], file_paths=[longest])
    assert result.progress.docs_done == 1
    assert await conn.fetchval(f'SELECT file_path FROM "{rag.workspace}".text_chunks') == longest


async def test_a_huge_stored_file_path_does_not_blank_any_mode(
    rag_factory: Any, conn: asyncpg.Connection
) -> None:
    """A document stored with a 100,000-character file path (rows older than the intake
    bound, or written by SQL): every mode still answers with entities, relations and
    chunks; only that document's chunk, whose citation cannot fit, is left out."""
    rag = await rag_factory()
    result = await rag.ainsert(DOCS, ids=["a", "b", "c"], file_paths=["a.txt", "b.txt", "c.txt"])
    assert result.progress.docs_failed == 0
    before = {mode: await rag.aquery_data(QUESTION, QueryParam(mode=mode)) for mode in MODES[:-1]}
    await stored_path_rows(conn, rag.workspace, "a", "p" * 100_000)
    for mode in MODES[:-1]:
        data = (await rag.aquery_data(QUESTION, QueryParam(mode=mode)))["data"]
        kept = {c["file_path"] for c in data["chunks"]}
        assert kept and kept <= {"b.txt", "c.txt"}, (mode, kept)
        expected = before[mode]["data"]
        if mode != "naive":
            assert data["entities"] and data["relationships"], mode
            assert [e["entity_name"] for e in data["entities"]] == [
                e["entity_name"] for e in expected["entities"]
            ]
        assert [c["chunk_id"] for c in data["chunks"]] == [
            c["chunk_id"] for c in expected["chunks"] if c["file_path"] != "a.txt"
        ]
        answer = await rag.aquery(QUESTION, QueryParam(mode=mode))
        assert answer and "p" * 1000 not in answer


async def test_a_long_file_path_costs_its_own_chunk_not_the_context() -> None:
    """build_context charges a citation to the first chunk of its file. A chunk whose
    citation alone is over the chunk budget is passed over; one whose citation fits alone
    but pushes the context over costs only itself and the chunks after it (dropped from
    the end), never the chunks before it or the entities, in naive as in the graph modes."""
    from lightrag_pg.llm.tokenizer import get_tokenizer
    from lightrag_pg.query.context import build_context
    from lightrag_pg.store.rows import ChunkRow, EntityRow

    tokenizer = get_tokenizer("cl100k_base")
    entity = EntityRow("Alice", "person", "Alice founded Acme.")

    def path_of(tokens: int) -> str:
        return "/".join(f"folder{i}" for i in range(tokens // 3))

    for mode in ("naive", "mix"):
        param = QueryParam(mode=mode, max_total_tokens=8000)  # type: ignore[arg-type]
        empty = build_context([entity], [], [], tokenizer=tokenizer, param=param, query=QUESTION)
        budget = empty.tokens.chunk_budget
        words = budget // 8 // 2  # eight chunks of a token a word fill about half the budget
        chunks = [
            ChunkRow(f"c{i}", "d", i, words, f"Chunk {i}:" + " apple" * words, f"{i}.txt") for i in range(8)
        ]
        for position in (0, 3, 7):
            for tokens, passed_over in ((2 * budget, True), (budget * 3 // 4, False)):
                rows = list(chunks)
                rows[position] = ChunkRow("long", "d", 9, 5, "The long one about Alice.", path_of(tokens))
                context = build_context([entity], [], rows, tokenizer=tokenizer, param=param, query=QUESTION)
                kept = [c.id for c in context.chunks]
                assert context.tokens.total <= param.max_total_tokens, (mode, position, tokens)
                if passed_over:
                    assert kept == [c.id for c in rows if c.id != "long"], (mode, position)
                else:
                    assert kept == [c.id for c in rows[: len(kept)]] and len(kept) >= position, (mode, kept)
                    assert len(kept) < len(rows), "the citation pushed the context over"
                if mode != "naive":
                    assert [e.name for e in context.entities] == ["Alice"]


async def test_the_server_bounds_file_sources_like_the_library(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    """/documents/text and /documents/texts refuse a source past MAX_FILE_PATH_CHARS with a
    422 naming the bound, store nothing, and take one of exactly that length."""
    from lightrag_pg.server import ServerSettings

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "inputs")
    longest = "s" * MAX_FILE_PATH_CHARS
    async with serving(settings) as server:
        for path, body in (
            ("/documents/text", {"text": "Carol lives in Rome.", "file_source": longest + "s"}),
            ("/documents/texts", {"texts": ["Carol lives in Rome."], "file_sources": [longest + "s"]}),
        ):
            refused = await server.client.post(path, json=body)
            assert refused.status_code == 422 and str(MAX_FILE_PATH_CHARS) in refused.text, refused.text
            assert len(refused.content) < 2_000
        counts = (await server.client.get("/documents/status_counts")).json()["status_counts"]
        assert counts["all"] == 0
        taken = await server.client.post("/documents/text", json={"text": TEXT, "file_source": longest})
        assert taken.status_code == 200, taken.text
        done = await server.track(taken.json()["track_id"])
        assert [d["file_path"] for d in done["documents"]] == [longest]
