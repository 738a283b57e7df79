"""Routes and fields upstream LightRAG Server 1.5.7's clients use that the server lacked:
the ``/health`` configuration, ``DELETE /documents``, scan status, the recovery and
source-conflict routes, ``/ui/customization``, offline API docs, a stable ``/api/tags``
and a pipeline that reads busy while a delete runs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg.db.advisory import TRY_LOCK, UNLOCK, lock_key
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.server import ServerSettings
from lightrag_pg.testing import respond

from .server_support import TEXT, Served, counted, scripted_factory, serving
from .test_server_manage import (  # noqa: F401 (fixtures)
    BROKEN_PDF,
    cache_rows,
    idle,
    indexed,
    runtime_of,
    status_counts,
    until,
)

UPSTREAM_CONFIGURATION = {
    "llm_binding",
    "llm_binding_host",
    "llm_model",
    "embedding_binding",
    "embedding_binding_host",
    "embedding_model",
    "summary_max_tokens",
    "summary_context_size",
    "kv_storage",
    "doc_status_storage",
    "graph_storage",
    "vector_storage",
    "enable_llm_cache_for_extract",
    "enable_llm_cache",
    "vlm_process_enable",
    "workspace",
    "storage_workspaces",
    "max_graph_nodes",
    "enable_rerank",
    "rerank_binding",
    "rerank_model",
    "rerank_binding_host",
    "rerank_max_async",
    "rerank_timeout",
    "summary_language",
    "force_llm_summary_on_merge",
    "max_parallel_insert",
    "cosine_threshold",
    "min_rerank_score",
    "related_chunk_number",
    "max_async",
    "llm_timeout",
    "embedding_func_max_async",
    "embedding_batch_num",
    "embedding_timeout",
    "role_llm_config",
    "parser_routing",
    "mineru",
    "docling",
}
"""The keys of upstream 1.5.7's ``/health`` ``configuration``."""

STORAGE_ROLES = ("kv_storage", "doc_status_storage", "graph_storage", "vector_storage")


async def test_health_fills_upstreams_configuration_with_real_values(served: Served) -> None:
    # upstream's WebUI status card calls force_llm_summary_on_merge.toString(): a white page without it
    await idle(served)
    body = (await served.client.get("/health")).json()
    config = body["configuration"]
    assert set(config) >= UPSTREAM_CONFIGURATION, UPSTREAM_CONFIGURATION - set(config)
    assert config["force_llm_summary_on_merge"] == 8 and config["summary_language"] == "English"
    assert config["max_async"] == 4 and config["max_graph_nodes"] > 0
    assert config["llm_binding"] == "custom" and config["llm_model"] == "scripted_llm"
    assert config["embedding_binding"] == "custom" and config["embedding_model"].startswith("hashed")
    assert config["enable_rerank"] is False and config["workspace"] == served.workspace
    for role in STORAGE_ROLES:
        assert "PostgreSQL" in config[role] and "lightrag_pg" in config[role]
        assert not re.match(r"PG\w+Storage", config[role])  # never one of upstream's classes
        assert config["storage_workspaces"][role] == served.workspace
    assert "Apache AGE" in config["graph_storage"]
    assert body["pipeline_busy"] is False and body["pipeline_active"] is False
    assert body["input_directory"] and body["server_mode"] == "uvicorn"


@pytest.mark.slow
async def test_clear_documents_empties_the_workspace_and_its_folder(
    served: Served,
    conn: asyncpg.Connection,
) -> None:
    upload = await served.client.post(
        "/documents/upload", files={"file": ("a.txt", TEXT.encode(), "text/plain")}
    )
    await served.track(upload.json()["track_id"])
    broken = await served.client.post("/documents/upload", files=BROKEN_PDF)
    await served.track(broken.json()["track_id"])
    texts = await served.client.post("/documents/text", json={"text": "Carol lives in Rome."})
    await served.track(texts.json()["track_id"])
    await idle(served)
    assert await cache_rows(conn, served.workspace) > 0
    folder = runtime_of(served).folder.path

    cleared = await served.client.delete("/documents")

    assert cleared.status_code == 200, cleared.text
    body = cleared.json()
    assert body["status"] == "success" and "3 document(s)" in body["message"], body
    assert "2 file(s)" in body["message"]
    assert await status_counts(served) == counted()
    assert (await served.client.get("/graph/label/list")).json() == []
    assert (await served.client.get("/graphs", params={"label": "*"})).json()["nodes"] == []
    assert await cache_rows(conn, served.workspace) == 0
    assert list(folder.iterdir()) == []
    again = await served.client.post("/documents/text", json={"text": TEXT})
    (doc,) = (await served.track(again.json()["track_id"]))["documents"]
    assert doc["status"] == "processed"


@pytest.mark.slow
async def test_clear_documents_keeps_the_cache_when_asked(indexed: Served, conn: asyncpg.Connection) -> None:  # noqa: F811
    await idle(indexed)  # the pipeline stays busy a moment after its last document is processed
    cached = await cache_rows(conn, indexed.workspace)
    cleared = (await indexed.client.delete("/documents", params={"keep_llm_cache": "true"})).json()
    assert cleared["status"] == "success" and "LLM cache" not in cleared["message"]
    assert await status_counts(indexed) == counted()
    assert await cache_rows(conn, indexed.workspace) == cached


@pytest.mark.slow
async def test_clear_documents_is_refused_while_the_pipeline_is_busy(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    release = asyncio.Event()

    async def held_llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        await release.wait()
        return respond(prompt, system_prompt)

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    try:
        async with serving(settings, scripted_factory(held_llm)) as server:
            track = (await server.client.post("/documents/text", json={"text": TEXT})).json()["track_id"]
            await until(lambda: _busy(server), "indexing to start")
            refused = await server.client.delete("/documents")
            assert refused.status_code == 200 and refused.json()["status"] == "busy"
            assert (await status_counts(server))["all"] == 1
            release.set()
            await server.track(track)
            await idle(server)
            assert (await server.client.delete("/documents")).json()["status"] == "success"
    finally:
        release.set()


async def _busy(server: Served) -> bool:
    return bool((await server.client.get("/documents/pipeline_status")).json()["busy"])


@pytest.mark.slow
async def test_a_running_delete_reads_busy_so_clients_refresh_after_it(indexed: Served, dsn: str) -> None:  # noqa: F811
    # upstream's WebUI refreshes its table when the pipeline goes from busy to idle; a delete
    # that never read busy left the deleted document listed
    (doc,) = (await indexed.client.post("/documents/paginated", json={})).json()["documents"]
    other = await asyncpg.connect(dsn)  # another process "indexing" the document: the delete waits
    key = lock_key("doc", indexed.workspace, doc["id"])
    try:
        assert await other.fetchval(TRY_LOCK, key)
        body = {"doc_ids": [doc["id"]]}
        started = await indexed.client.request("DELETE", "/documents/delete_document", json=body)
        assert started.json()["status"] == "deletion_started"
        health = (await indexed.client.get("/health")).json()
        assert health["pipeline_busy"] is True and health["pipeline_active"] is True
        assert await _busy(indexed)
        await other.fetchval(UNLOCK, key)
        await idle(indexed)
        health = (await indexed.client.get("/health")).json()
        assert health["pipeline_busy"] is False and not await _busy(indexed)
        assert await status_counts(indexed) == counted()
    finally:
        await other.close()


async def test_scan_status_reports_what_the_scan_found(indexed: Served) -> None:  # noqa: F811
    folder = runtime_of(indexed).folder.path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.txt").write_text(TEXT)  # the indexed document's file name: already processed
    (folder / "new.md").write_text("Carol lives in Berlin.")
    (folder / "skip.bin").write_bytes(b"\x00\x01")
    started = (await indexed.client.post("/documents/scan")).json()
    track = started["track_id"]

    async def finished() -> bool:
        status = (await indexed.client.get(f"/documents/scan/status/{track}")).json()
        return status["status"] != "running"

    await until(finished, "the scan to complete")
    status = (await indexed.client.get(f"/documents/scan/status/{track}")).json()
    assert status["status"] == "completed" and status["track_id"] == track
    assert status["counts"] == {"discovered": 3, "unsupported": 1, "processed": 1, "claimed_new": 1}
    assert status["samples"]["processed"]["items"] == ["t.txt"]
    assert status["samples"]["warning"]["items"] == ["skip.bin: unsupported file type"]
    assert status["samples"]["error"] == {"items": [], "truncated": False, "dropped": 0}
    assert status["version"] > 1 and status["updated_at"] >= status["created_at"]
    (doc,) = (await indexed.track(track))["documents"]
    assert doc["file_path"] == "new.md" and doc["status"] == "processed"
    missing = await indexed.client.get("/documents/scan/status/scan-nope")
    assert missing.status_code == 404 and missing.json()["detail"]


async def test_pipeline_status_says_nothing_needs_recovery(served: Served) -> None:
    # upstream's model requires recovery_required: clients generated from its OpenAPI need it
    status = (await served.client.get("/documents/pipeline_status")).json()
    assert status["recovery_required"] is False
    assert status["recovery_kind"] is None and status["recovery_message"] is None


async def test_recovery_and_source_conflict_routes_answer_for_this_design(served: Served) -> None:
    client = served.client
    listed = await client.get("/documents/source_conflicts", params={"limit": 10})
    assert listed.status_code == 200 and listed.json() == {"conflicts": [], "next_cursor": None}
    assert (await client.get("/documents/source_conflicts", params={"limit": 201})).status_code == 422
    repair = {"canonical_source_key": "a.txt", "primary_doc_id": "doc-1"}
    dry = await client.post("/documents/source_conflicts/repair", json=repair)
    assert dry.status_code == 409 and "doc-1" in dry.json()["detail"]
    commit = await client.post("/documents/source_conflicts/repair", json={**repair, "dry_run": False})
    assert commit.status_code == 422
    unconfirmed = await client.post("/documents/recovery/force_reset", json={})
    assert unconfirmed.status_code == 400
    reset = await client.post("/documents/recovery/force_reset", json={"confirm": True})
    assert reset.status_code == 200
    assert reset.json()["status"] == "no_recovery_required" and reset.json()["cancelled_manual_retries"] == 0


async def test_ui_customization_has_upstreams_shape_and_the_branding(
    dsn: str, workspace_name: str, tmp_path: Path, conn: asyncpg.Connection
) -> None:
    env = {"WEBUI_TITLE": "Acme Knowledge", "WEBUI_DESCRIPTION": "Ask about Acme", "LIGHTRAG_PG_DSN": dsn}
    settings = ServerSettings.from_env(env, default_workspace=workspace_name, input_dir=tmp_path)
    try:
        async with serving(settings) as server:
            answer = await server.client.get("/ui/customization", params={"locale": "en"})
            assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
            assert answer.json() == {
                "customized": False,
                "brand": {"title": "Acme Knowledge", "description": "Ask about Acme"},
            }
            assert (await server.client.get("/ui/customization/assets/x/brand-logo")).status_code == 404
            status = (await server.client.get("/auth-status")).json()
            assert status["webui_title"] == "Acme Knowledge"
    finally:
        if await workspace_exists(conn, workspace_name):
            await drop_workspace(conn, workspace_name)


@pytest.mark.slow
@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_api_docs_load_no_asset_from_another_host(served: Served, page: str) -> None:
    html = (await served.client.get(page)).text
    sources = re.findall(r'(?:src|href)="([^"]+)"', html) + re.findall(r"url: '([^']+)'", html)
    assert sources and all(s.startswith("/") for s in sources), sources
    assert "cdn" not in html.lower() and "fonts.googleapis" not in html
    for source in sources:
        assert (await served.client.get(source)).status_code == 200, source


async def test_ollama_tags_modified_at_is_stable(served: Served) -> None:
    first = (await served.client.get("/api/tags")).json()["models"][0]["modified_at"]
    await asyncio.sleep(0.01)
    assert (await served.client.get("/api/tags")).json()["models"][0]["modified_at"] == first
