"""The indexing pipeline end to end, through the real openai client and the scripted server."""

from __future__ import annotations

import re

import asyncpg
import pytest

from lightrag_pg import InvalidInput, LightRAG
from lightrag_pg.types import DocStatus

from .fake_openai import FakeOpenAI

DOCS = [
    "Alice met Bob in Paris. Alice works at Acme.",
    "Bob joined Globex in Berlin. Acme and Globex compete.",
]


async def table_counts(conn: asyncpg.Connection, ws: str) -> dict[str, int]:
    tables = [
        "full_docs",
        "doc_status",
        "text_chunks",
        "chunk_vectors",
        "entities",
        "entity_vectors",
        "relations",
        "relation_vectors",
        "doc_entities",
        "doc_relations",
    ]
    return {t: await conn.fetchval(f"SELECT count(*) FROM {ws}.{t}") for t in tables}


async def graph_counts(conn: asyncpg.Connection, ws: str) -> tuple[int, int]:
    g = f"{ws}_kg"
    v = await conn.fetchval(f'SELECT count(*) FROM {g}."entity"')
    e = await conn.fetchval(f'SELECT count(*) FROM {g}."DIRECTED"')
    return v, e


async def test_insert_builds_exactly_the_scripted_graph(
    llm_rag: LightRAG, conn: asyncpg.Connection, llm_server: FakeOpenAI
) -> None:
    result = await llm_rag.ainsert(DOCS, file_paths=["a.txt", "b.txt"])
    assert len(result.new_ids) == 2 and all(i.startswith("doc-") for i in result.new_ids)
    assert result.progress.docs_done == 2 and result.progress.docs_failed == 0
    ws = llm_rag.workspace
    entities = {r["name"]: r for r in await conn.fetch(f"SELECT * FROM {ws}.entities")}
    assert set(entities) == {"Alice", "Bob", "Paris", "Acme", "Globex", "Berlin"}
    assert entities["Alice"]["entity_type"] == "Person"
    assert entities["Acme"]["entity_type"] == "Organization"
    assert sorted(entities["Bob"]["file_paths"]) == ["a.txt", "b.txt"]
    assert len(entities["Bob"]["source_ids"]) == 2
    relations = {(r["src"], r["tgt"]): r for r in await conn.fetch(f"SELECT * FROM {ws}.relations")}
    assert set(relations) == {
        ("Alice", "Bob"),
        ("Alice", "Paris"),
        ("Bob", "Paris"),
        ("Acme", "Alice"),
        ("Berlin", "Bob"),
        ("Bob", "Globex"),
        ("Berlin", "Globex"),
        ("Acme", "Globex"),
    }
    assert relations[("Alice", "Bob")]["weight"] == 1.0
    assert relations[("Alice", "Bob")]["description"] == "Alice met Bob in Paris."
    counts = await table_counts(conn, ws)
    assert counts["entity_vectors"] == 6 and counts["relation_vectors"] == 8
    assert counts["text_chunks"] == counts["chunk_vectors"] == 2
    assert await graph_counts(conn, ws) == (6, 8)
    statuses = await conn.fetch(f"SELECT status, chunks_count, metadata FROM {ws}.doc_status")
    assert {(s["status"], s["chunks_count"]) for s in statuses} == {("processed", 1)}
    async with llm_rag.session() as s:
        rows = await s.docs.statuses([r["id"] for r in await conn.fetch(f"SELECT id FROM {ws}.doc_status")])
    assert {(r.status, r.chunks_count, r.metadata["entities"] > 0) for r in rows} == {
        (DocStatus.PROCESSED, 1, True)
    }


async def test_reinsert_makes_no_llm_call_and_adds_nothing(
    llm_rag: LightRAG, conn: asyncpg.Connection, llm_server: FakeOpenAI
) -> None:
    await llm_rag.ainsert(DOCS)
    before = await table_counts(conn, llm_rag.workspace)
    calls = llm_server.calls
    result = await llm_rag.ainsert(DOCS)
    assert result.new_ids == [] and len(result.skipped_ids) == 2
    assert llm_server.calls == calls
    assert await table_counts(conn, llm_rag.workspace) == before


async def test_extraction_is_cached_across_workspace_reprocessing(
    llm_rag: LightRAG, conn: asyncpg.Connection, llm_server: FakeOpenAI
) -> None:
    await llm_rag.ainsert(DOCS[0])
    ws = llm_rag.workspace
    await conn.execute(f"UPDATE {ws}.doc_status SET status = 'failed'")
    calls = llm_server.calls
    result = await llm_rag.ainsert(DOCS[0])
    assert result.progress.docs_done == 1
    assert llm_server.calls == calls
    assert (await table_counts(conn, ws))["relations"] == 4
    weight = await conn.fetchval(f"SELECT weight FROM {ws}.relations WHERE src = 'Alice' AND tgt = 'Bob'")
    assert weight == 1.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("texts", "kwargs", "match"),
    [
        ("", {}, "empty"),
        ("   \n\t ", {}, "empty"),
        (["a", "b"], {"ids": ["only-one"]}, "ids has 1 entries"),
        (["a", "b"], {"file_paths": ["x"]}, "file_paths has 1 entries"),
        (["a", "b"], {"ids": ["same", "same"]}, "unique"),
        ([], {}, "no documents"),
        ([3], {}, "expected str"),
    ],
)
async def test_bad_input_gets_a_clear_error_and_writes_nothing(
    llm_rag: LightRAG, conn: asyncpg.Connection, texts: object, kwargs: dict, match: str
) -> None:
    with pytest.raises(InvalidInput, match=match):
        await llm_rag.ainsert(texts, **kwargs)  # type: ignore[arg-type]
    assert (await table_counts(conn, llm_rag.workspace))["full_docs"] == 0


async def test_nul_bytes_and_duplicates_in_a_batch(llm_rag: LightRAG, conn: asyncpg.Connection) -> None:
    result = await llm_rag.ainsert(["Alice\x00 met Bob.  ", "Alice met Bob.", "Alice met Bob."])
    assert len(result.new_ids) == 1
    content = await conn.fetchval(f"SELECT content FROM {llm_rag.workspace}.full_docs")
    assert content == "Alice met Bob."


async def test_oversized_document_is_refused(make_rag, conn: asyncpg.Connection) -> None:  # type: ignore[no-untyped-def]
    rag = make_rag(max_document_bytes=1000)
    await rag.initialize()
    try:
        with pytest.raises(InvalidInput, match="max_document_bytes"):
            await rag.ainsert("x" * 2000)
    finally:
        await rag.drop_workspace()


async def test_llm_errors_mark_the_document_failed_then_a_later_insert_finishes_it(
    llm_rag: LightRAG, conn: asyncpg.Connection, llm_server: FakeOpenAI
) -> None:
    llm_server.fail_next(1000, status=500)
    result = await llm_rag.ainsert(DOCS[0])
    assert result.progress.docs_failed == 1
    ws = llm_rag.workspace
    row = await conn.fetchrow(f"SELECT status, error_msg FROM {ws}.doc_status")
    assert row["status"] == "failed" and "LLMError" in row["error_msg"] and "500" in row["error_msg"]
    counts = await table_counts(conn, ws)
    assert counts["entities"] == counts["text_chunks"] == counts["relations"] == 0
    llm_server.reset_faults()
    result = await llm_rag.ainsert(DOCS[1])
    assert result.progress.docs_done == 2
    assert set(await conn.fetch(f"SELECT DISTINCT status FROM {ws}.doc_status")) == {("processed",)}


async def test_llm_timeout_marks_the_document_failed(
    make_rag,
    conn: asyncpg.Connection,
    llm_server: FakeOpenAI,  # type: ignore[no-untyped-def]
) -> None:
    rag = make_rag(llm_timeout=0.2, max_retries=0)
    await rag.initialize()
    try:
        llm_server.delay = 1.0
        result = await rag.ainsert(DOCS[0])
        assert result.progress.docs_failed == 1
        msg = await conn.fetchval(f"SELECT error_msg FROM {rag.workspace}.doc_status")
        assert "LLMTimeout" in msg
    finally:
        llm_server.reset_faults()
        await rag.drop_workspace()


async def test_malformed_and_truncated_llm_output_is_tolerated(
    make_rag,
    conn: asyncpg.Connection,
    llm_server: FakeOpenAI,  # type: ignore[no-untyped-def]
) -> None:
    original = llm_server.responder
    llm_server.responder = lambda messages, body: (
        "garbage line\nentity<|#|>Alice<|#|>Person<|#|>A person.\nentity<|#|>broken\n"
        "relation<|#|>Alice<|#|>Bob<|#|>kw<|#|>They met.\nrelation<|#|>Alice<|#|>Al"
    )
    rag = make_rag(entity_extract_max_gleaning=0)
    await rag.initialize()
    try:
        result = await rag.ainsert("Alice met Bob.")
        assert result.progress.docs_done == 1
        ws = rag.workspace
        assert {r[0] for r in await conn.fetch(f"SELECT name FROM {ws}.entities")} == {"Alice", "Bob"}
        bob = await conn.fetchrow(f"SELECT entity_type, description FROM {ws}.entities WHERE name = 'Bob'")
        assert bob["entity_type"] == "UNKNOWN" and bob["description"] == "They met."
        meta = await conn.fetchval(f"SELECT metadata FROM {ws}.doc_status")
        assert '"dropped_lines": 1' in meta or '"dropped_lines": 2' in meta
    finally:
        llm_server.responder = original
        await rag.drop_workspace()


@pytest.mark.parametrize("fault", ["dimension", "count"])
async def test_bad_embeddings_fail_the_document_cleanly(
    make_rag,
    conn: asyncpg.Connection,
    fault: str,  # type: ignore[no-untyped-def]
) -> None:
    import numpy as np

    from lightrag_pg import EmbeddingFunc

    async def broken(texts: list[str]) -> np.ndarray:
        if fault == "dimension":
            return np.ones((len(texts), 7), dtype=np.float32)
        return np.ones((len(texts) + 1, 32), dtype=np.float32)

    rag = make_rag(embedding_func=EmbeddingFunc(embedding_dim=32, func=broken))
    await rag.initialize()
    try:
        result = await rag.ainsert(DOCS[0])
        assert result.progress.docs_failed == 1
        ws = rag.workspace
        msg = await conn.fetchval(f"SELECT error_msg FROM {ws}.doc_status")
        assert "EmbeddingError" in msg
        counts = await table_counts(conn, ws)
        assert counts["entities"] == counts["text_chunks"] == 0
    finally:
        await rag.drop_workspace()


async def test_many_fragments_are_summarised_by_the_llm(
    make_rag,
    conn: asyncpg.Connection,  # type: ignore[no-untyped-def]
) -> None:
    rag = make_rag(force_llm_summary_on_merge=2)
    await rag.initialize()
    try:
        await rag.ainsert(["Alice met Bob.", "Alice saw Carol."])
        desc = await conn.fetchval(f"SELECT description FROM {rag.workspace}.entities WHERE name = 'Alice'")
        assert desc.startswith("Summary of 2 descriptions")
    finally:
        await rag.drop_workspace()


@pytest.mark.slow
async def test_a_10_mb_document_is_processed(make_rag, conn: asyncpg.Connection) -> None:  # type: ignore[no-untyped-def]
    rag = make_rag(chunk_token_size=60_000, chunk_overlap_token_size=0, entity_extract_max_gleaning=0)
    await rag.initialize()
    try:
        sentence = "Alice met Bob in Paris while Acme watched. "
        text = sentence * (10_000_000 // len(sentence))
        result = await rag.ainsert(text)
        assert result.progress.docs_done == 1
        ws = rag.workspace
        chunks = await conn.fetchval(f"SELECT count(*) FROM {ws}.text_chunks")
        assert chunks == await conn.fetchval(f"SELECT chunks_count FROM {ws}.doc_status") > 30
        weight = await conn.fetchval(f"SELECT weight FROM {ws}.relations WHERE src = 'Alice' AND tgt = 'Bob'")
        assert weight == chunks
    finally:
        await rag.drop_workspace()


async def test_doc_status_values_are_the_ones_the_schema_allows(
    rag: LightRAG, conn: asyncpg.Connection
) -> None:
    check = await conn.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conname = 'doc_status_status_check' AND connamespace = $1::regnamespace",
        rag.workspace,
    )
    allowed = set(re.findall(r"'(\w+)'::text", check))
    assert allowed == {s.value for s in DocStatus}
