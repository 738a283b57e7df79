"""The HTTP server in-process (httpx against the ASGI app, lifespan included): documents, query, service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg import QueryParam
from lightrag_pg.db.workspace import create_workspace, drop_workspace, workspace_exists
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.query import QueryRequest

from .server_files import SAMPLES
from .server_support import TEXT, Served, counted, serving


async def query_json(server: Served, body: dict[str, object]) -> dict[str, object]:
    response = await server.client.post("/query", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def counts(server: Served) -> dict[str, int]:
    response = await server.client.get("/documents/status_counts")
    assert response.status_code == 200
    return response.json()["status_counts"]


async def test_text_is_indexed_in_the_background_and_tracked(served: Served) -> None:
    response = await served.client.post("/documents/text", json={"text": TEXT, "file_source": "notes.txt"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success" and body["track_id"].startswith("insert-")

    tracked = await served.track(body["track_id"])
    (doc,) = tracked["documents"]
    assert tracked["status_summary"] == {"processed": 1} and tracked["total_count"] == 1
    assert doc["file_path"] == "notes.txt" and doc["chunks_count"] == 1 and doc["error_msg"] is None
    assert (await counts(served)) == counted(processed=1)

    status = (await served.client.get("/documents/pipeline_status")).json()
    assert status["workspace"] == served.workspace
    expected = {"busy", "job_name", "docs", "batchs", "cur_batch", "latest_message", "history_messages"}
    assert expected <= set(status)

    page = (await served.client.post("/documents/paginated", json={"page_size": 10})).json()
    assert [d["id"] for d in page["documents"]] == [doc["id"]]
    assert page["pagination"] == {
        "page": 1,
        "page_size": 10,
        "total_count": 1,
        "total_pages": 1,
        "has_next": False,
        "has_prev": False,
    }
    assert page["status_counts"]["processed"] == 1


async def test_the_document_page_counts_entities_and_relations_per_document(served: Served) -> None:
    texts = ["Alice met Bob in Paris.", "Alice hired Carol."]
    body = {"texts": texts, "file_sources": ["paris.txt", "carol.txt"]}
    inserted = await served.client.post("/documents/texts", json=body)
    await served.track(inserted.json()["track_id"], count=2)
    page = (await served.client.post("/documents/paginated", json={"sort_field": "file_path"})).json()
    rows = [(d["file_path"], d["entities_count"], d["relations_count"]) for d in page["documents"]]
    assert rows == [("paris.txt", 3, 3), ("carol.txt", 2, 1)]


async def test_texts_insert_reports_partial_success_and_duplicates(served: Served) -> None:
    first = await served.client.post("/documents/texts", json={"texts": ["Alice met Bob.", "Carol met Bob."]})
    assert first.json()["status"] == "success"
    await served.track(first.json()["track_id"], count=2)

    texts = {"texts": ["Alice met Bob.", "Bob left Paris."]}
    again = await served.client.post("/documents/texts", json=texts)
    assert again.status_code == 200 and again.json()["status"] == "partial_success"
    await served.track(again.json()["track_id"])

    same = await served.client.post("/documents/text", json={"text": "Alice met Bob."})
    assert same.status_code == 200 and same.json()["status"] == "duplicated"
    assert same.json()["track_id"] == first.json()["track_id"]
    assert (await counts(served))["all"] == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/documents/text", {"text": ""}, 422),
        ("/documents/text", {"text": "   \n"}, 422),
        ("/documents/text", {}, 422),
        ("/documents/texts", {"texts": []}, 422),
        ("/documents/texts", {"texts": ["a"], "file_sources": ["a.txt", "b.txt"]}, 400),
        ("/documents/paginated", {"page": 0}, 422),
        ("/documents/paginated", {"page_size": 5000}, 422),
        ("/documents/paginated", {"sort_field": "content; DROP TABLE doc_status"}, 422),
        ("/query", {"query": ""}, 422),
        ("/query", {"query": "Who?", "mode": "everything"}, 422),
        ("/query", {"query": "Who?", "top_k": 0}, 422),
        ("/query", {"query": "Who?", "bridge": "sometimes"}, 422),
        ("/query", {"query": "Who?", "conversation_history": [{"role": "robot", "content": "x"}]}, 400),
        ("/query/data", {"query": "Who?", "hl_keywords": "not a list"}, 422),
    ],
)
async def test_bad_bodies_are_4xx_with_a_message_and_write_nothing(
    served: Served, path: str, body: dict[str, object], status: int
) -> None:
    response = await served.client.post(path, json=body)
    assert response.status_code == status, response.text
    assert response.json()["detail"]
    assert (await counts(served)) == counted()


@pytest.mark.slow
async def test_bad_track_and_delete_requests(served: Served) -> None:
    assert (await served.client.get("/documents/track_status/%20")).status_code == 400
    unknown = (await served.client.get("/documents/track_status/nope")).json()
    assert unknown == {"track_id": "nope", "documents": [], "total_count": 0, "status_summary": {}}
    for body in ({"doc_ids": []}, {"doc_ids": ["a", "a"]}, {"doc_ids": [" "]}):
        response = await served.client.request("DELETE", "/documents/delete_document", json=body)
        assert response.status_code == 422, body


async def test_query_routes_answer_stream_and_data(served: Served) -> None:
    track = (await served.client.post("/documents/text", json={"text": TEXT, "file_source": "f.txt"})).json()
    await served.track(track["track_id"])
    question = {"query": "Where did Alice found Acme?", "mode": "mix"}

    answer = (await served.client.post("/query", json=question)).json()
    assert answer["response"].startswith("Scripted answer") and answer["llm_generated"] is True
    assert answer["references"] == [{"reference_id": "1", "file_path": "f.txt"}]
    assert isinstance(answer["response_time"], float)
    with_content = await query_json(served, {**question, "include_chunk_content": True})
    assert with_content["references"][0]["content"] == [TEXT]
    without = (await served.client.post("/query", json={**question, "include_references": False})).json()
    assert without["references"] is None

    async with served.client.stream("POST", "/query/stream", json=question) as response:
        assert response.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) async for line in response.aiter_lines() if line]
    assert lines[0] == {"references": [{"reference_id": "1", "file_path": "f.txt"}]}
    assert "".join(line["response"] for line in lines[1:]) == answer["response"]

    whole = await served.client.post("/query/stream", json={**question, "stream": False})
    (line,) = [json.loads(x) for x in whole.text.splitlines()]
    assert line["response"] == answer["response"] and line["references"]

    data = (await served.client.post("/query/data", json=question)).json()
    assert data["status"] == "success"
    assert {"Alice", "Acme"} <= {e["entity_name"] for e in data["data"]["entities"]}
    context = (await served.client.post("/query", json={**question, "only_need_context": True})).json()
    assert context["llm_generated"] is False and "Alice" in context["response"]


def test_the_lexical_switch_reaches_the_query_param() -> None:
    assert QueryRequest(query="Who is Alice?").param().lexical is True
    assert QueryRequest(query="Who is Alice?", lexical=False).param().lexical is False


def test_the_bridge_switch_reaches_the_query_param() -> None:
    assert QueryRequest(query="Who is Alice?").param().bridge is QueryParam().bridge
    assert QueryRequest(query="Who is Alice?", bridge=True).param().bridge is True
    assert QueryRequest(query="Who is Alice?", bridge=False).param().bridge is False


async def test_query_on_an_empty_workspace_says_so(served: Served) -> None:
    answer = (await served.client.post("/query", json={"query": "Who is Alice?"})).json()
    assert answer["llm_generated"] is False and answer["references"] == []
    data = (await served.client.post("/query/data", json={"query": "Who is Alice?"})).json()
    assert data["status"] == "failure"


@pytest.mark.slow
async def test_upload_one_file_of_each_supported_type(served: Served) -> None:
    tracks = {}
    samples = {ext: make(f"Alice wrote this {ext[1:]} file at Acme.") for ext, make in SAMPLES.items()}
    for ext, data in samples.items():
        files = {"file": (f"sample{ext}", data, "application/octet-stream")}
        response = await served.client.post("/documents/upload", files=files)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "success" and body["track_id"].startswith("insert-")
        tracks[ext] = body["track_id"]
    for ext, track_id in tracks.items():
        (doc,) = (await served.track(track_id))["documents"]
        assert doc["status"] == "processed", (ext, doc["error_msg"])
        assert doc["file_path"] == f"sample{ext}"
        assert f"{ext[1:]} file at Acme" in doc["content_summary"]
    folder = Path(served.app.state.server.settings.input_dir) / served.workspace
    saved = sorted(p.name for p in folder.iterdir())
    assert saved == sorted(f"sample{ext}" for ext in SAMPLES)


async def test_an_unreadable_file_is_a_failed_document_with_its_reason(served: Served) -> None:
    files = {"file": ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "application/pdf")}
    response = await served.client.post("/documents/upload", files=files)
    assert response.status_code == 200
    (doc,) = (await served.track(response.json()["track_id"]))["documents"]
    assert doc["status"] == "failed" and doc["file_path"] == "broken.pdf"
    assert "pdf" in doc["error_msg"].lower() and doc["content_length"] == 0

    server_alive = await served.client.post("/documents/text", json={"text": "Bob is in Berlin."})
    assert server_alive.status_code == 200


@pytest.mark.parametrize(
    "name",
    ["../escape.txt", "..\\escape.txt", "/etc/escape.txt", "sub/dir.txt", ".hidden.txt", ".."],
)
async def test_file_names_cannot_leave_the_input_folder(served: Served, name: str, tmp_path: Path) -> None:
    response = await served.client.post("/documents/upload", files={"file": (name, b"Alice.", "text/plain")})
    assert response.status_code in (400, 422), response.text
    assert response.json()["detail"]
    assert not any(p.name.endswith("escape.txt") for p in tmp_path.rglob("*")), list(tmp_path.rglob("*"))
    assert (await counts(served)) == counted()


async def test_upload_refuses_unsupported_types_and_same_names(served: Served) -> None:
    refused = await served.client.post("/documents/upload", files={"file": ("x.exe", b"MZ", "application/x")})
    assert refused.status_code == 400 and ".pdf" in refused.json()["detail"]
    ok = await served.client.post("/documents/upload", files={"file": ("a.txt", b"Alice in Paris.")})
    await served.track(ok.json()["track_id"])
    again = await served.client.post("/documents/upload", files={"file": ("a.txt", b"Other text.")})
    assert again.status_code == 409 and "a.txt" in again.json()["detail"]


async def test_oversize_upload_is_413_and_saves_nothing(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    settings = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "in", max_upload_bytes=1000
    )

    async def body_without_length() -> AsyncIterator[bytes]:
        for _ in range(80):  # past the limit and its allowance for multipart framing
            yield b" " * 1000
        yield json.dumps({"text": "Alice."}).encode()

    async with serving(settings) as server:
        big = {"file": ("big.txt", b"Alice. " * 1000, "text/plain")}
        response = await server.client.post("/documents/upload", files=big)
        assert response.status_code == 413 and "limit" in response.json()["detail"]
        streamed = await server.client.post(
            "/documents/text", content=body_without_length(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413
        small = await server.client.post("/documents/upload", files={"file": ("s.txt", b"Bob.")})
        assert small.status_code == 200
        await server.track(small.json()["track_id"])
        assert [p.name for p in (tmp_path / "in" / workspace_name).iterdir()] == ["s.txt"]
        assert (await counts(server)) == counted(processed=1)


async def test_ten_concurrent_uploads_lose_nothing(served: Served) -> None:
    async def upload(i: int) -> str:
        text = f"Document {i}: Alice met Bob number {i} in Paris."
        files = {"file": (f"doc{i}.txt", text.encode())}
        response = await served.client.post("/documents/upload", files=files)
        assert response.status_code == 200, response.text
        return str(response.json()["track_id"])

    tracks = await asyncio.gather(*(upload(i) for i in range(10)))
    for track_id in tracks:
        (doc,) = (await served.track(track_id))["documents"]
        assert doc["status"] == "processed"
    assert (await counts(served)) == counted(processed=10)


@pytest.mark.slow
async def test_scan_indexes_new_files_of_the_input_folder(served: Served) -> None:
    folder = Path(served.app.state.server.settings.input_dir) / served.workspace
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "one.md").write_text("Carol lives in Berlin.")
    (folder / "two.txt").write_text("Alice lives in Paris.")
    (folder / "skip.bin").write_bytes(b"\x00\x01")
    response = await served.client.post("/documents/scan")
    assert response.status_code == 200 and response.json()["status"] == "scanning_started"
    tracked = await served.track(response.json()["track_id"], count=2)
    assert sorted(d["file_path"] for d in tracked["documents"]) == ["one.md", "two.txt"]
    again = (await served.client.post("/documents/scan")).json()
    assert "0 new file" in again["message"]


async def test_cancel_pipeline_when_idle_says_so(served: Served) -> None:
    track = (await served.client.post("/documents/text", json={"text": TEXT})).json()
    await served.track(track["track_id"])
    for _ in range(200):
        if not (await served.client.get("/documents/pipeline_status")).json()["busy"]:
            break
        await asyncio.sleep(0.05)
    cancel = (await served.client.post("/documents/cancel_pipeline")).json()
    assert cancel["status"] == "not_busy"


async def test_health_and_openapi(served: Served) -> None:
    health = await served.client.get("/health")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "healthy" and body["database"]["reachable"] is True
    assert body["configuration"]["workspace"] == served.workspace
    assert body["pipeline"]["job_name"]
    assert body["auth_mode"] == "disabled"
    assert served.workspace in body["configuration"]["workspaces"]
    assert body["configuration"]["query_defaults"]["mode"] == "mix"
    assert body["configuration"]["query_defaults"]["bridge"] is QueryParam().uses_bridge() is True
    spec = (await served.client.get("/openapi.json")).json()
    assert {"/documents/upload", "/query/stream", "/api/chat", "/graphs", "/health"} <= set(spec["paths"])
    assert (await served.client.get("/docs")).status_code == 200


async def test_a_workspace_name_is_checked_where_a_request_names_it(served: Served) -> None:
    bad = {"LIGHTRAG-WORKSPACE": "Robert'); DROP"}
    refused = await served.client.post("/query", json={"query": "Who?"}, headers=bad)
    assert refused.status_code == 400 and "workspace name" in refused.json()["detail"]
    assert (await served.client.get("/health", headers=bad)).status_code == 200  # liveness only reports


async def test_health_lists_every_workspace_for_the_ui_selector(
    served: Served, dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    other = f"{workspace_name}_closed"
    await create_workspace(conn, dsn, other, 64, "fake-embedding")
    try:
        config = (await served.client.get("/health")).json()["configuration"]
        assert other not in config["open_workspaces"]
        assert other in config["workspaces"] and served.workspace in config["workspaces"]
        assert config["workspaces"] == sorted(config["workspaces"])
    finally:
        await drop_workspace(conn, other)


async def test_a_dsn_with_connect_timeout_serves(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    joiner = "&" if "?" in dsn else "?"
    settings = ServerSettings(
        dsn=f"{dsn}{joiner}connect_timeout=5", default_workspace=workspace_name, input_dir=tmp_path / "inputs"
    )
    try:
        async with serving(settings) as server:
            health = (await server.client.get("/health")).json()
            assert health["status"] == "healthy"
            assert workspace_name in health["configuration"]["workspaces"]
    finally:
        if await workspace_exists(conn, workspace_name):
            await drop_workspace(conn, workspace_name)
