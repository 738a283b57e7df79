"""The server's graph, listing and maintenance routes over the library's calls: labels,
subgraphs, paging by status, deleting documents, clearing the cache, retrying failures."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg.db.identifiers import quote_ident
from lightrag_pg.server.runtime import WorkspaceRuntime

from .server_support import TEXT, Served, counted

BROKEN_PDF = {"file": ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "application/pdf")}


@pytest_asyncio.fixture
async def indexed(served: Served) -> Served:
    """:data:`TEXT` (file ``t.txt``) indexed in the default workspace."""
    inserted = await served.client.post("/documents/text", json={"text": TEXT, "file_source": "t.txt"})
    await served.track(inserted.json()["track_id"])
    return served


def runtime_of(server: Served) -> WorkspaceRuntime:
    (runtime,) = server.app.state.server.registry.opened()
    return runtime


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(400):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def idle(server: Served) -> None:
    runtime = runtime_of(server)

    async def done() -> bool:
        return not runtime.processing and not runtime.pending_tasks

    await until(done, "the workspace's background work")


async def status_counts(server: Served) -> dict[str, int]:
    return dict((await server.client.get("/documents/status_counts")).json()["status_counts"])


async def cache_rows(conn: asyncpg.Connection, workspace: str) -> int:
    return int(await conn.fetchval(f"SELECT count(*) FROM {quote_ident(workspace)}.llm_cache"))


# ---------------------------------------------------------------- graph


async def test_label_routes_list_rank_and_search_the_entities(indexed: Served) -> None:
    labels = (await indexed.client.get("/graph/label/list")).json()
    assert {"Alice", "Acme", "Bob", "Paris", "Berlin"} <= set(labels) and labels == sorted(labels)

    popular = await indexed.client.get("/graph/label/popular", params={"limit": 2})
    assert popular.status_code == 200 and popular.json()[0] == "Acme" and len(popular.json()) == 2

    found = (await indexed.client.get("/graph/label/search", params={"q": "ali"})).json()
    assert found[0] == "Alice"
    assert (await indexed.client.get("/graph/label/search", params={"q": "  "})).json() == []


@pytest.mark.slow
async def test_graphs_returns_upstreams_nodes_and_edges(indexed: Served) -> None:
    response = await indexed.client.get("/graphs", params={"label": "Alice", "max_depth": 1})
    assert response.status_code == 200
    graph = response.json()
    assert set(graph) == {"nodes", "edges", "is_truncated"} and graph["is_truncated"] is False
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert "Acme" in nodes and nodes["Alice"]["labels"] == ["Alice"]
    assert {"entity_id", "entity_type", "description", "source_id", "file_path"} <= set(
        nodes["Alice"]["properties"]
    )
    edge = graph["edges"][0]
    assert {"id", "type", "source", "target", "properties"} <= set(edge)
    assert {edge["source"], edge["target"]} <= set(nodes)

    whole = (await indexed.client.get("/graphs", params={"label": "*", "max_nodes": 2})).json()
    assert len(whole["nodes"]) == 2 and whole["is_truncated"] is True
    unknown = (await indexed.client.get("/graphs", params={"label": "Nobody"})).json()
    assert unknown == {"nodes": [], "edges": [], "is_truncated": False}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/graphs", {}, 422),
        ("/graphs", {"label": ""}, 422),
        ("/graphs", {"label": "Alice", "max_nodes": 0}, 422),
        ("/graphs", {"label": "Alice", "max_nodes": 10**6}, 422),
        ("/graph/label/popular", {"limit": 1001}, 422),
        ("/graph/label/search", {}, 422),
        ("/graph/label/search", {"q": "a", "limit": 101}, 422),
    ],
)
async def test_bad_graph_queries_are_4xx_with_a_message(
    indexed: Served, path: str, params: dict[str, object], status: int
) -> None:
    response = await indexed.client.get(path, params=params)
    assert response.status_code == status, response.text
    assert response.json()["detail"]


# ---------------------------------------------------------------- listings


async def test_paginated_filters_by_one_or_several_statuses(served: Served) -> None:
    texts = {"texts": ["Alice met Bob.", "Carol met Dan."]}
    inserted = await served.client.post("/documents/texts", json=texts)
    await served.track(inserted.json()["track_id"], count=2)
    upload = await served.client.post("/documents/upload", files=BROKEN_PDF)
    await served.track(upload.json()["track_id"])

    async def page(body: dict[str, object]) -> dict[str, object]:
        response = await served.client.post("/documents/paginated", json=body)
        assert response.status_code == 200, response.text
        return dict(response.json())

    failed = await page({"status_filter": "failed"})
    assert [d["file_path"] for d in failed["documents"]] == ["broken.pdf"]
    assert failed["status_counts"] == counted(processed=2, failed=1)
    both = await page({"status_filters": ["processed", "failed"], "status_filter": "pending"})
    assert both["pagination"]["total_count"] == 3
    in_flight = await page({"status_filters": ["parsing", "analyzing"]})
    assert in_flight["documents"] == [] and in_flight["pagination"]["total_count"] == 0
    by_path = await page({"sort_field": "file_path", "sort_direction": "asc", "page_size": 10})
    assert by_path["documents"][0]["file_path"] == "broken.pdf"


# ---------------------------------------------------------------- maintenance


async def test_delete_document_removes_it_and_its_cache_on_request(
    indexed: Served, conn: asyncpg.Connection
) -> None:
    carol = {"text": "Carol lives in Rome.", "file_source": "c"}
    other = await indexed.client.post("/documents/text", json=carol)
    await indexed.track(other.json()["track_id"])
    docs = (await indexed.client.post("/documents/paginated", json={})).json()["documents"]
    ids = {d["file_path"]: d["id"] for d in docs}
    extract_cache = await cache_rows(conn, indexed.workspace)

    kept = await indexed.client.request("DELETE", "/documents/delete_document", json={"doc_ids": [ids["c"]]})
    assert kept.status_code == 200
    assert kept.json() == {
        "status": "deletion_started",
        "message": "Document deletion for 1 documents has been initiated. "
        "Processing will continue in background.",
        "doc_id": ids["c"],
    }
    await idle(indexed)
    assert await status_counts(indexed) == counted(processed=1)
    assert await cache_rows(conn, indexed.workspace) == extract_cache

    body = {"doc_ids": [ids["t.txt"]], "delete_llm_cache": True}
    dropped = await indexed.client.request("DELETE", "/documents/delete_document", json=body)
    assert dropped.status_code == 200
    await idle(indexed)
    assert await status_counts(indexed) == counted()
    assert await cache_rows(conn, indexed.workspace) < extract_cache
    assert (await indexed.client.get("/graph/label/list")).json() == []
    history = (await indexed.client.get("/documents/pipeline_status")).json()["history_messages"]
    assert any("deleted 1 document(s)" in line for line in history)


async def test_delete_document_with_an_unknown_id_starts_as_upstreams_and_names_it(indexed: Served) -> None:
    # upstream answers deletion_started whatever the ids; the unknown ones are reported later
    alone = {"doc_ids": ["doc-nope"]}
    response = await indexed.client.request("DELETE", "/documents/delete_document", json=alone)
    assert response.status_code == 200 and response.json()["status"] == "deletion_started"
    await idle(indexed)
    assert await status_counts(indexed) == counted(processed=1)
    (doc,) = (await indexed.client.post("/documents/paginated", json={})).json()["documents"]
    both = {"doc_ids": [doc["id"], "doc-other"]}
    response = await indexed.client.request("DELETE", "/documents/delete_document", json=both)
    assert response.status_code == 200 and response.json()["doc_id"] == f"{doc['id']}, doc-other"
    await idle(indexed)
    assert await status_counts(indexed) == counted()
    history = (await indexed.client.get("/documents/pipeline_status")).json()["history_messages"]
    assert any("doc-nope" in line and "not deleted" in line for line in history)
    assert any("doc-other" in line and "not deleted" in line for line in history)


async def test_delete_document_with_delete_file_removes_the_upload(served: Served) -> None:
    upload = await served.client.post(
        "/documents/upload", files={"file": ("alice.txt", TEXT.encode(), "text/plain")}
    )
    (doc,) = (await served.track(upload.json()["track_id"]))["documents"]
    broken = await served.client.post("/documents/upload", files=BROKEN_PDF)
    (failed,) = (await served.track(broken.json()["track_id"]))["documents"]
    folder = runtime_of(served).folder.path
    assert {p.name for p in folder.iterdir()} == {"alice.txt", "broken.pdf"}

    body = {"doc_ids": [doc["id"], failed["id"]], "delete_file": True}
    response = await served.client.request("DELETE", "/documents/delete_document", json=body)
    assert response.status_code == 200
    await idle(served)
    assert await status_counts(served) == counted()
    assert list(folder.iterdir()) == []


async def test_clear_cache_empties_the_llm_cache(indexed: Served, conn: asyncpg.Connection) -> None:
    assert await cache_rows(conn, indexed.workspace) > 0
    cleared = await indexed.client.post("/documents/clear_cache", json={})
    assert cleared.status_code == 200 and cleared.json()["status"] == "success"
    assert cleared.json()["message"].startswith("Successfully cleared all cache")
    assert await cache_rows(conn, indexed.workspace) == 0
    again = await indexed.client.request("DELETE", "/documents/clear_cache")
    assert again.status_code == 200 and "(0 answer(s))" in again.json()["message"]


async def test_a_file_that_could_not_be_converted_is_never_retried(served: Served) -> None:
    upload = await served.client.post("/documents/upload", files=BROKEN_PDF)
    (doc,) = (await served.track(upload.json()["track_id"]))["documents"]
    reason = doc["error_msg"]
    assert doc["status"] == "failed" and "pdf" in reason.lower()

    progress = await runtime_of(served).rag.aprocess_pending()
    assert progress.docs_total == 0 and not progress.failures

    retried = await served.client.post("/documents/reprocess_failed")
    assert retried.json() == {
        "status": "reprocessing_started",
        "message": "Reprocessing of failed documents has been initiated in background. "
        "Documents retain their original track_id.",
        "track_id": "",
    }
    await idle(served)
    (after,) = (await served.client.get(f"/documents/track_status/{doc['track_id']}")).json()["documents"]
    assert after["status"] == "failed" and after["error_msg"] == reason
    assert after["updated_at"] == doc["updated_at"]


@pytest.mark.slow
async def test_reprocess_failed_retries_documents_that_have_text(
    served: Served, conn: asyncpg.Connection
) -> None:
    inserted = await served.client.post("/documents/text", json={"text": TEXT})
    (doc,) = (await served.track(inserted.json()["track_id"]))["documents"]
    await conn.execute(
        f"UPDATE {quote_ident(served.workspace)}.doc_status SET status = 'failed', error_msg = 'boom'"
    )
    retried = await served.client.post("/documents/reprocess_failed")
    assert retried.status_code == 200
    await idle(served)
    (after,) = (await served.client.get(f"/documents/track_status/{doc['track_id']}")).json()["documents"]
    assert after["status"] == "processed" and after["error_msg"] is None
