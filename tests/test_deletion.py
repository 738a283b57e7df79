"""Deleting and replacing documents: the workspace ends as if the documents had never been
inserted (or had been inserted in their new version), every table and the AGE graph included."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest

from lightrag_pg import DocumentBusy, DocumentNotFound, InvalidInput, LightRAG, ProvenanceMissing
from lightrag_pg.db.advisory import TRY_LOCK, UNLOCK, lock_key
from lightrag_pg.testing import StatementCounter, classify_prompt, respond

from .conftest import RagFactory

DOCS = {
    "d0": "Alice met Bob in Paris. Alice works at Acme.",
    "d1": "Bob joined Globex in Berlin. Acme and Globex compete.",
    "d2": "Carol visited Paris with Alice. Quantum Lab hired Carol.",
    "d3": "Acme opened an office in Berlin. Bob left Acme for Globex.",
    "d4": "Globex sued Acme in Paris. Carol testified for Acme.",
    "d5": "Alice met Bob in Berlin. Quantum Lab moved to Berlin.",
}
PATHS = {i: f"{i}.txt" for i in DOCS}
NO_SUMMARY = {"force_llm_summary_on_merge": 1000, "summary_max_tokens": 100_000}
SUMMARIES = {"force_llm_summary_on_merge": 2}

SNAPSHOT = {
    "full_docs": "SELECT id, content, file_path FROM {ws}.full_docs ORDER BY id",
    "doc_status": "SELECT id, status, content_summary, content_length, chunks_count, chunks_list, "
    "file_path, error_msg FROM {ws}.doc_status ORDER BY id",
    "text_chunks": "SELECT id, doc_id, chunk_order_index, tokens, content, file_path "
    "FROM {ws}.text_chunks ORDER BY id",
    "chunk_vectors": "SELECT chunk_id, embedding::text FROM {ws}.chunk_vectors ORDER BY chunk_id",
    "entities": "SELECT name, entity_type, description, source_ids, file_paths "
    "FROM {ws}.entities ORDER BY name",
    "relations": "SELECT src, tgt, keywords, description, weight, source_ids, file_paths "
    "FROM {ws}.relations ORDER BY src, tgt",
    "entity_vectors": "SELECT name, content, embedding::text FROM {ws}.entity_vectors ORDER BY name",
    "relation_vectors": "SELECT src, tgt, content, embedding::text "
    "FROM {ws}.relation_vectors ORDER BY src, tgt",
    "entity_fragments": "SELECT entity_name, chunk_id, seq, doc_id, entity_type, description, file_path "
    "FROM {ws}.entity_fragments ORDER BY 1, 2, 3",
    "relation_fragments": "SELECT src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path "
    "FROM {ws}.relation_fragments ORDER BY 1, 2, 3, 4",
    "doc_entities": "SELECT doc_id, entity_name FROM {ws}.doc_entities ORDER BY 1, 2",
    "doc_relations": "SELECT doc_id, src, tgt FROM {ws}.doc_relations ORDER BY 1, 2, 3",
    "graph_vertices": """SELECT (properties::text)::jsonb - 'created_at'
    FROM "{ws}_kg"."entity" ORDER BY 1""",
    "graph_edges": """SELECT (s.properties::text)::jsonb ->> 'entity_id',
           (t.properties::text)::jsonb ->> 'entity_id',
           (e.properties::text)::jsonb - 'created_at'
    FROM "{ws}_kg"."DIRECTED" e
    JOIN "{ws}_kg"."entity" s ON s.id = e.start_id
    JOIN "{ws}_kg"."entity" t ON t.id = e.end_id
    ORDER BY 1, 2""",
}


async def snapshot(dsn: str, ws: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's content (no ids, versions or timestamps) and the AGE graph's."""
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "ag_catalog, public"})
    try:
        await conn.execute("LOAD 'age'")
        return {
            name: [tuple(r) for r in await conn.fetch(sql.format(ws=ws))] for name, sql in SNAPSHOT.items()
        }
    finally:
        await conn.close()


class CountingLLM:
    """The scripted LLM, counting the prompts it answers by kind."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    async def __call__(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        self.calls[classify_prompt(prompt) or "other"] += 1
        return respond(prompt, system_prompt)


@pytest.fixture
def workspaces(rag_factory: RagFactory) -> Callable[..., Any]:
    """Build initialized LightRAGs on fresh workspaces (a counting scripted LLM unless ``llm``)."""

    def factory(**settings: Any) -> Any:
        return rag_factory(llm_model_func=settings.pop("llm", None) or CountingLLM(), **settings)

    return factory


async def insert(rag: LightRAG, ids: list[str], docs: dict[str, str] = DOCS) -> None:
    result = await rag.ainsert([docs[i] for i in ids], ids=ids, file_paths=[PATHS[i] for i in ids])
    assert result.progress.docs_failed == 0, result.progress.failures


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings",
    [
        pytest.param(NO_SUMMARY, id="joined"),
        pytest.param(SUMMARIES, id="summarised"),
        pytest.param({**NO_SUMMARY, "extractor": "nlp"}, id="nlp"),
    ],
)
async def test_delete_equals_never_inserted(workspaces: Any, dsn: str, settings: dict[str, Any]) -> None:
    rag = await workspaces(**settings)
    control = await workspaces(**settings)
    await insert(rag, list(DOCS))
    gone = ["d1", "d3"]
    result = await rag.adelete_by_doc_id(gone)
    assert result.deleted_ids == gone and result.rounds == 1
    assert result.entities_rebuilt > 0 and result.relations_deleted > 0
    await insert(control, [i for i in reversed(DOCS) if i not in gone])
    after, expected = await snapshot(dsn, rag.workspace), await snapshot(dsn, control.workspace)
    assert after["entities"] and after["graph_edges"] and after["entity_fragments"]
    for table in SNAPSHOT:
        assert after[table] == expected[table], table


@pytest.mark.parametrize(
    "settings",
    [pytest.param(SUMMARIES, id="llm"), pytest.param({**NO_SUMMARY, "extractor": "nlp"}, id="nlp")],
)
async def test_insert_order_and_batching_do_not_change_the_workspace(
    workspaces: Any, dsn: str, settings: dict[str, Any]
) -> None:
    one = await workspaces(**settings)
    other = await workspaces(**settings, max_parallel_insert=1)
    await insert(one, list(DOCS))
    for i in reversed(DOCS):
        await insert(other, [i])
    assert await snapshot(dsn, one.workspace) == await snapshot(dsn, other.workspace)


async def test_deleting_everything_leaves_an_empty_workspace(workspaces: Any, dsn: str) -> None:
    rag = await workspaces(**NO_SUMMARY)
    await insert(rag, ["d0", "d1"])
    result = await rag.adelete_by_file_path(["d0.txt", "d1.txt"])
    assert result.deleted_ids == ["d0", "d1"] and result.entities_rebuilt == 0
    assert all(rows == [] for rows in (await snapshot(dsn, rag.workspace)).values())


@pytest.mark.slow
async def test_statements_per_delete_do_not_grow_with_the_documents(workspaces: Any) -> None:
    counts = []
    for gone in (["d1"], ["d1", "d3", "d4"], ["d0", "d1", "d2", "d3", "d4"]):
        rag = await workspaces(**NO_SUMMARY)
        await insert(rag, list(DOCS))
        with StatementCounter() as counter:
            result = await rag.adelete_by_doc_id(gone)
        assert result.deleted_ids == gone
        counts.append(counter.statements)
    # find; lock; 4 reads; BEGIN, delete docs, 2 upserts, 2 deletes, 2 vector upserts, COMMIT;
    # unlock. A write with nothing to do is skipped (deleting d1 alone deletes no entity).
    assert counts[0] <= 16 and counts[1:] == [16, 16]


async def test_unknown_ids_and_paths_change_nothing(workspaces: Any, dsn: str) -> None:
    rag = await workspaces(**NO_SUMMARY)
    await insert(rag, ["d0", "d1"])
    before = await snapshot(dsn, rag.workspace)
    with pytest.raises(DocumentNotFound, match="'nope'"):
        await rag.adelete_by_doc_id(["d0", "nope"])
    with pytest.raises(DocumentNotFound, match=r"'missing\.txt'"):
        await rag.adelete_by_file_path("missing.txt")
    with pytest.raises(InvalidInput):
        await rag.adelete_by_doc_id([])
    with pytest.raises(InvalidInput):
        await rag.adelete_by_doc_id(["d0", ""])
    assert await snapshot(dsn, rag.workspace) == before


async def test_cached_extractions_go_unless_kept(workspaces: Any, conn: asyncpg.Connection) -> None:
    rag = await workspaces(**NO_SUMMARY)
    await insert(rag, ["d0", "d1", "d2"])
    ws = rag.workspace
    per_doc = (
        f"SELECT count(*) FROM {ws}.llm_cache l JOIN {ws}.text_chunks c ON c.id = l.chunk_id "
        "WHERE c.doc_id = $1"
    )
    assert await conn.fetchval(per_doc, "d0") > 0 and await conn.fetchval(per_doc, "d1") > 0
    total = await conn.fetchval(f"SELECT count(*) FROM {ws}.llm_cache WHERE cache_type = 'extract'")
    d0 = await conn.fetchval(per_doc, "d0")
    await rag.adelete_by_doc_id("d0")
    assert (
        await conn.fetchval(f"SELECT count(*) FROM {ws}.llm_cache WHERE cache_type = 'extract'") == total - d0
    )
    await rag.adelete_by_doc_id("d1", keep_cache=True)
    assert (
        await conn.fetchval(f"SELECT count(*) FROM {ws}.llm_cache WHERE cache_type = 'extract'") == total - d0
    )


async def test_a_document_being_indexed_elsewhere_is_refused_or_waited_for(workspaces: Any, dsn: str) -> None:
    rag = await workspaces(**NO_SUMMARY)
    await insert(rag, ["d0", "d1"])
    before = await snapshot(dsn, rag.workspace)
    other = await asyncpg.connect(dsn)
    key = lock_key("doc", rag.workspace, "d1")
    try:
        assert await other.fetchval(TRY_LOCK, key)
        with pytest.raises(DocumentBusy, match="'d1'"):
            await rag.adelete_by_doc_id(["d0", "d1"])
        assert await snapshot(dsn, rag.workspace) == before
        assert await other.fetchval(TRY_LOCK, lock_key("doc", rag.workspace, "d0"))  # none left held
        await other.fetchval(UNLOCK, lock_key("doc", rag.workspace, "d0"))
        with pytest.raises(DocumentBusy):
            await rag.adelete_by_doc_id("d1", wait=0.2)
        await other.fetchval(UNLOCK, key)
        assert (await rag.adelete_by_doc_id("d1", wait=1.0)).deleted_ids == ["d1"]
    finally:
        await other.close()


async def test_rows_without_provenance_refuse_the_delete(
    workspaces: Any, dsn: str, conn: asyncpg.Connection
) -> None:
    rag = await workspaces(**NO_SUMMARY)
    await insert(rag, ["d0", "d5"])
    ws = rag.workspace
    # a document merged before fragments were recorded has links but no fragments
    await conn.execute(f"DELETE FROM {ws}.entity_fragments WHERE doc_id = 'd5'")
    await conn.execute(f"DELETE FROM {ws}.relation_fragments WHERE doc_id = 'd5'")
    before = await snapshot(dsn, ws)
    with pytest.raises(ProvenanceMissing, match="0006"):
        await rag.adelete_by_doc_id("d0")
    assert await snapshot(dsn, ws) == before


async def test_update_equals_fresh_and_reuses_unchanged_chunks(workspaces: Any, dsn: str) -> None:
    small = {
        **NO_SUMMARY,
        "split_by_character": "\n\n",
        "split_by_character_only": True,
        "entity_extract_max_gleaning": 0,
    }
    v1 = "Alice met Bob in Paris.\n\nAcme hired Carol.\n\nGlobex moved to Berlin."
    v2 = "Alice met Bob in Paris.\n\nAcme hired Carol.\n\nQuantum Lab moved to Berlin."
    llm = CountingLLM()
    rag = await workspaces(llm=llm, **small)
    fresh = await workspaces(**small)
    await insert(rag, ["d0", "d2"])
    first = await rag.ainsert(v1, ids="doc-x", file_paths="x.txt")
    assert first.new_ids == ["doc-x"]
    same = await rag.ainsert(v1, ids="doc-x", file_paths="x.txt", replace=True)
    assert same.skipped_ids == ["doc-x"] and same.replaced_ids == []
    untouched = await snapshot(dsn, rag.workspace)
    kept = await rag.ainsert(v2, ids="doc-x", file_paths="x.txt")
    assert kept.skipped_ids == ["doc-x"] and await snapshot(dsn, rag.workspace) == untouched
    llm.calls.clear()
    updated = await rag.ainsert(v2, ids="doc-x", file_paths="x.txt", replace=True)
    assert updated.replaced_ids == ["doc-x"] and updated.progress.docs_done == 1
    chunks = await fresh_chunks(dsn, rag.workspace, "doc-x")
    assert sorted(chunks) == sorted(v2.split("\n\n"))
    assert llm.calls["extraction"] == 1  # only the changed chunk is extracted again
    await rag.ainsert(v2, ids="doc-x", file_paths="x.txt")
    await fresh.ainsert(v2, ids="doc-x", file_paths="x.txt")
    await insert(fresh, ["d2", "d0"])
    assert await snapshot(dsn, rag.workspace) == await snapshot(dsn, fresh.workspace)


async def fresh_chunks(dsn: str, ws: str, doc_id: str) -> list[str]:
    conn = await asyncpg.connect(dsn)
    try:
        return [
            r[0] for r in await conn.fetch(f"SELECT content FROM {ws}.text_chunks WHERE doc_id = $1", doc_id)
        ]
    finally:
        await conn.close()
