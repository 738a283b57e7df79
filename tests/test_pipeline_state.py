"""Documents by status (paginated, sorted), by track id, status counts, reprocessing, cache clearing."""

from __future__ import annotations

import json

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import InvalidInput
from lightrag_pg.store.rows import DocumentRow
from lightrag_pg.testing import StatementCounter

from .fake_openai import FakeOpenAI

# id, file path, status, track id; updated_at goes up with the position.
DOCS = [
    ("doc-a", "b.txt", "processed", "track-1"),
    ("doc-b", "a.txt", "processed", "track-1"),
    ("doc-c", "c.txt", "failed", "track-1"),
    ("doc-d", "e.txt", "pending", "track-2"),
    ("doc-e", "d.txt", "processed", "track-2"),
    ("doc-f", "f.txt", "failed", "track-2"),
    ("doc-g", "g.txt", "pending", "track-2"),
]


async def seed(rag: LightRAG, conn: asyncpg.Connection) -> None:
    async with rag.unit_of_work() as uow:
        await uow.docs.insert([DocumentRow(i, f"text of {i}", path, track) for i, path, _, track in DOCS])
    ws = rag.workspace
    for position, (doc_id, _, status, _) in enumerate(DOCS):
        await conn.execute(
            f"UPDATE {ws}.doc_status SET status = $2, "
            "updated_at = timestamptz '2030-01-01' + make_interval(mins => $3), "
            "created_at = timestamptz '2030-01-01' - make_interval(mins => $3) WHERE id = $1",
            doc_id,
            status,
            position,
        )


def ids(page: dict) -> list[str]:
    return [d["id"] for d in page["documents"]]


async def test_pages_sorted_and_filtered_in_upstream_shape(rag: LightRAG, conn: asyncpg.Connection) -> None:
    await seed(rag, conn)
    first = await rag.aget_docs_paginated(page_size=3)
    json.dumps(first)
    assert ids(first) == ["doc-g", "doc-f", "doc-e"]
    assert first["pagination"] == {
        "page": 1,
        "page_size": 3,
        "total_count": 7,
        "total_pages": 3,
        "has_next": True,
        "has_prev": False,
    }
    assert first["status_counts"] == {"pending": 2, "processing": 0, "processed": 3, "failed": 2, "all": 7}
    doc = first["documents"][0]
    assert set(doc) == {
        "id",
        "content_summary",
        "content_length",
        "status",
        "created_at",
        "updated_at",
        "track_id",
        "chunks_count",
        "entities_count",
        "relations_count",
        "error_msg",
        "metadata",
        "file_path",
    }
    assert doc["status"] == "pending" and doc["track_id"] == "track-2" and doc["file_path"] == "g.txt"
    assert doc["content_summary"] == "text of doc-g" and doc["content_length"] == len("text of doc-g")
    assert doc["updated_at"].startswith("2030-01-01")
    assert doc["entities_count"] == 0 and doc["relations_count"] == 0

    last = await rag.aget_docs_paginated(page=3, page_size=3)
    assert ids(last) == ["doc-a"] and last["pagination"]["has_next"] is False
    beyond = await rag.aget_docs_paginated(page=9, page_size=3)
    assert beyond["documents"] == [] and beyond["pagination"]["total_count"] == 7
    assert beyond["status_counts"]["all"] == 7

    failed = await rag.aget_docs_paginated(status="failed", sort_field="id", sort_direction="asc")
    assert ids(failed) == ["doc-c", "doc-f"] and failed["pagination"]["total_count"] == 2
    by_path = await rag.aget_docs_paginated(sort_field="file_path", sort_direction="DESC")
    assert ids(by_path) == ["doc-g", "doc-f", "doc-d", "doc-e", "doc-c", "doc-a", "doc-b"]
    by_created = await rag.aget_docs_paginated(sort_field="created_at", sort_direction="asc")
    assert ids(by_created) == ["doc-g", "doc-f", "doc-e", "doc-d", "doc-c", "doc-b", "doc-a"]
    by_id_desc = await rag.aget_docs_paginated(sort_field="id", page_size=2)
    assert ids(by_id_desc) == ["doc-g", "doc-f"]


async def test_track_ids_and_counts(rag: LightRAG, conn: asyncpg.Connection) -> None:
    await seed(rag, conn)
    track = await rag.aget_docs_by_track_id("track-1")
    assert track["track_id"] == "track-1" and track["total_count"] == 3
    assert sorted(ids(track)) == ["doc-a", "doc-b", "doc-c"]
    assert track["status_summary"] == {"processed": 2, "failed": 1}
    assert (await rag.aget_docs_by_track_id("nothing"))["documents"] == []
    counts = await rag.aget_status_counts()
    assert counts == {"pending": 2, "processing": 0, "processed": 3, "failed": 2, "all": 7}


async def test_each_listing_is_one_statement(rag: LightRAG, conn: asyncpg.Connection) -> None:
    await seed(rag, conn)
    for call in (
        lambda: rag.aget_docs_paginated(page_size=2),
        lambda: rag.aget_docs_paginated(page=50),
        lambda: rag.aget_docs_by_track_id("track-2"),
        rag.aget_status_counts,
        lambda: rag.aclear_cache(["query"]),
    ):
        with StatementCounter() as counter:
            await call()
        assert counter.statements == 1, counter.by_method


async def test_each_row_counts_what_its_document_contributed(
    llm_rag: LightRAG, conn: asyncpg.Connection
) -> None:
    paris = await llm_rag.ainsert("Alice met Bob in Paris.", ids=["doc-paris"])
    carol = await llm_rag.ainsert("Alice hired Carol.", ids=["doc-carol"])
    assert paris.progress.docs_done == carol.progress.docs_done == 1
    ws = llm_rag.workspace
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entities") == 4
    with StatementCounter() as counter:
        page = await llm_rag.aget_docs_paginated(sort_field="id", sort_direction="asc")
    assert counter.statements == 1, counter.by_method
    counts = {d["id"]: (d["entities_count"], d["relations_count"]) for d in page["documents"]}
    # Alice is shared: each document counts it once, the workspace holds it once.
    assert counts == {"doc-carol": (2, 1), "doc-paris": (3, 3)}
    one = await llm_rag.aget_docs_paginated(page=2, page_size=1, sort_field="id", sort_direction="asc")
    (only,) = one["documents"]
    assert (only["id"], only["entities_count"], only["relations_count"]) == ("doc-paris", 3, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sort_field": "content; DROP TABLE doc_status"}, "sort_field"),
        ({"sort_direction": "sideways"}, "sort_direction"),
        ({"page": 0}, "page"),
        ({"page_size": 0}, "page_size"),
        ({"page_size": 100_000}, "page_size"),
        ({"status": "lost"}, "status"),
    ],
)
async def test_bad_listing_parameters_are_refused(rag: LightRAG, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        await rag.aget_docs_paginated(**kwargs)


async def test_failed_documents_are_reprocessed(
    llm_rag: LightRAG, conn: asyncpg.Connection, llm_server: FakeOpenAI
) -> None:
    llm_server.fail_next(1000, status=500)
    inserted = await llm_rag.ainsert("Alice met Bob in Paris. Acme hired Carol.")
    assert inserted.progress.docs_failed == 1
    assert (await llm_rag.aget_status_counts())["failed"] == 1
    llm_server.reset_faults()
    state = await llm_rag.areprocess_failed()
    assert state.docs_done == 1 and state.docs_failed == 0
    assert await llm_rag.aget_status_counts() == {
        "pending": 0,
        "processing": 0,
        "processed": 1,
        "failed": 0,
        "all": 1,
    }
    ws = llm_rag.workspace
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entities WHERE name = 'Alice'") == 1


async def test_cache_is_cleared_by_type(llm_rag: LightRAG, conn: asyncpg.Connection) -> None:
    await llm_rag.ainsert("Alice met Bob in Paris. Acme hired Carol in Berlin.")
    await llm_rag.aquery("What did Alice do in Paris?")
    ws = llm_rag.workspace

    async def kinds() -> dict[str, int]:
        rows = await conn.fetch(f"SELECT cache_type, count(*) AS n FROM {ws}.llm_cache GROUP BY 1")
        return {r["cache_type"]: r["n"] for r in rows}

    before = await kinds()
    assert before.get("extract") and before.get("keywords") and before.get("query")
    with pytest.raises(InvalidInput, match="cache types"):
        await llm_rag.aclear_cache(["query", "everything"])
    assert await kinds() == before
    assert await llm_rag.aclear_cache(["query", "keywords"]) == before["query"] + before["keywords"]
    assert set(await kinds()) == set(before) - {"query", "keywords"}
    remaining = sum((await kinds()).values())
    assert await llm_rag.aclear_cache() == remaining
    assert await kinds() == {}
