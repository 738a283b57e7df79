"""Hostile route input: NUL and lone surrogates are a 400, numbers past their bound a 422 naming it,
chat capped like /query, and the same content under a new name answered as ``duplicated``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lightrag_pg.query.param import MAX_TOKENS, MAX_TOP_K
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.documents import MAX_PAGE
from lightrag_pg.server.validate import MAX_QUERY_CHARS
from lightrag_pg.store.subgraph import MAX_LIMIT

from .server_support import TEXT, Served, counted, serving

JSON = {"content-type": "application/json"}


@pytest_asyncio.fixture
async def indexed(dsn: str, workspace_name: str, tmp_path: Path) -> AsyncIterator[Served]:
    """A server whose default workspace holds :data:`TEXT` (file ``t.txt``), indexed."""
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path / "inputs")
    async with serving(settings) as server:
        inserted = await server.client.post("/documents/text", json={"text": TEXT, "file_source": "t.txt"})
        await server.track(inserted.json()["track_id"])
        yield server


async def unchanged(served: Served) -> None:
    """Nothing was written: still the one document and its graph."""
    counts = (await served.client.get("/documents/status_counts")).json()["status_counts"]
    assert counts == counted(processed=1)
    labels = (await served.client.get("/graph/label/list")).json()
    assert labels and all("\x00" not in label for label in labels)


def chat(content: str) -> dict[str, Any]:
    return {"model": "lightrag:latest", "stream": False, "messages": [{"role": "user", "content": content}]}


NUL = "Al\x00ice"


async def test_nul_in_keywords_is_a_400(indexed: Served) -> None:
    for path in ("/query", "/query/data"):
        for field in ("hl_keywords", "ll_keywords"):
            body = {"query": "Who is Alice?", "mode": "hybrid", field: ["Acme", NUL]}
            response = await indexed.client.post(path, json=body)
            assert response.status_code == 400, (path, field, response.text)
            assert f"{field}.1" in response.json()["detail"] and "NUL" in response.json()["detail"]
    await unchanged(indexed)


NUL_REQUESTS: list[tuple[str, str, dict[str, str] | None, dict[str, Any] | None]] = [
    ("GET", "/graphs", {"label": NUL}, None),
    ("GET", "/graph/label/search", {"q": NUL}, None),
    ("GET", "/graph/entity/exists", {"name": NUL}, None),
    ("GET", "/documents/track_status/insert%00x", None, None),
    ("POST", "/query", None, {"query": "Who?", "conversation_history": [{"role": "user", "content": NUL}]}),
    ("POST", "/documents/text", None, {"text": "Carol lives in Rome.", "file_source": NUL}),
    ("POST", "/documents/texts", None, {"texts": ["Carol lives in Rome."], "file_sources": [NUL]}),
    ("DELETE", "/documents/delete_document", None, {"doc_ids": [NUL]}),
    ("POST", "/graph/entity/create", None, {"entity_name": NUL, "entity_data": {"description": "x"}}),
    ("POST", "/graph/entity/edit", None, {"entity_name": "Alice", "updated_data": {"description": NUL}}),
    ("DELETE", "/graph/entity/delete", None, {"entity_name": NUL}),
    ("POST", "/api/chat", None, chat(NUL)),
    ("POST", "/api/generate", None, {"model": "m", "prompt": NUL}),
]


async def test_nul_in_any_text_field_or_parameter_is_a_400(indexed: Served) -> None:
    for method, path, params, body in NUL_REQUESTS:
        response = await indexed.client.request(method, path, params=params, json=body)
        assert response.status_code == 400, (path, params, body, response.text)
        assert "NUL" in response.json()["detail"]
    await unchanged(indexed)


SURROGATE_BODIES = [
    ("/query", b'{"query": "Who is \\ud800 Alice?"}'),
    ("/query/data", b'{"query": "Who is \\udfff Alice?"}'),
    ("/query/stream", b'{"query": "Who is \\ud800 Alice?"}'),
    ("/query", b'{"query": "Who?", "ll_keywords": ["\\ud800"]}'),
    ("/documents/text", b'{"text": "Carol \\ud800 lives in Rome."}'),
    ("/documents/texts", b'{"texts": ["Carol lives in Rome.", "\\udc00"]}'),
    ("/graph/entity/edit", b'{"entity_name": "Alice", "updated_data": {"description": "\\ud800"}}'),
    ("/api/chat", b'{"model": "m", "messages": [{"role": "user", "content": "Who \\ud800?"}]}'),
    ("/api/generate", b'{"model": "m", "prompt": "\\ud800"}'),
]


@pytest.mark.slow
async def test_lone_surrogates_are_a_400(indexed: Served) -> None:
    for path, raw in SURROGATE_BODIES:
        response = await indexed.client.post(path, content=raw, headers=JSON)
        assert response.status_code == 400, (path, raw, response.text)
        assert "surrogate" in response.json()["detail"]
    await unchanged(indexed)
    pair = await indexed.client.post("/query/data", content=b'{"query": "Who \\ud83d\\ude00?"}', headers=JSON)
    assert pair.status_code == 200, pair.text


BOUNDED_REQUESTS: list[tuple[str, str, dict[str, str] | None, bytes | None, int]] = [
    ("POST", "/query", None, b'{"query": "Who?", "top_k": 1e30}', MAX_TOP_K),
    ("POST", "/query/data", None, json.dumps({"query": "Who?", "top_k": 10**12}).encode(), MAX_TOP_K),
    ("POST", "/query/stream", None, b'{"query": "Who?", "chunk_top_k": 1e300}', MAX_TOP_K),
    ("POST", "/query", None, json.dumps({"query": "Who?", "max_total_tokens": 2**63}).encode(), MAX_TOKENS),
    ("POST", "/query", None, json.dumps({"query": "Who?", "max_entity_tokens": 10**9}).encode(), MAX_TOKENS),
    ("GET", "/graphs", {"label": "*", "max_depth": "1e30"}, None, MAX_LIMIT),
    ("GET", "/graphs", {"label": "*", "max_nodes": str(10**6)}, None, MAX_LIMIT),
    ("POST", "/documents/paginated", None, json.dumps({"page": 10**30}).encode(), MAX_PAGE),
]


@pytest.mark.slow
async def test_top_k_too_large_is_a_422_naming_the_bound(indexed: Served) -> None:
    for method, path, params, body, bound in BOUNDED_REQUESTS:
        response = await indexed.client.request(method, path, params=params, content=body, headers=JSON)
        assert response.status_code == 422, (path, params, body, response.text)
        (error,) = response.json()["detail"]
        assert error["type"] == "less_than_equal" and str(bound) in error["msg"], error
    await unchanged(indexed)


@pytest.mark.slow
async def test_api_chat_is_capped_like_query(indexed: Served) -> None:
    long = "Who is Alice? " * (MAX_QUERY_CHARS // 14 + 1)
    assert len(long) > MAX_QUERY_CHARS
    capped = await indexed.client.post("/query", json={"query": long})
    assert capped.status_code == 422 and str(MAX_QUERY_CHARS) in capped.text
    huge = long * 11  # over a million characters
    for path, body in (
        ("/api/chat", chat(long)),
        ("/api/chat", chat(huge)),
        ("/api/generate", {"model": "m", "prompt": long}),
    ):
        response = await indexed.client.post(path, json=body)
        assert response.status_code == capped.status_code, (path, response.text[:300])
        assert str(MAX_QUERY_CHARS) in response.text and len(response.content) < 10_000
    await unchanged(indexed)


async def test_duplicate_content_under_a_new_name_answers_duplicated(indexed: Served) -> None:
    client = indexed.client
    (first,) = (await client.post("/documents/paginated", json={})).json()["documents"]
    upload = await client.post("/documents/upload", files={"file": ("copy.txt", TEXT.encode())})
    assert upload.status_code == 200, upload.text
    body = upload.json()
    assert body["status"] == "duplicated" and first["id"] in body["message"], body
    assert body["track_id"] == first["track_id"]
    folder = Path(indexed.app.state.server.settings.input_dir) / indexed.workspace
    assert not (folder / "copy.txt").exists()  # nothing kept under the new name

    text = await client.post("/documents/text", json={"text": TEXT, "file_source": "other.txt"})
    assert text.status_code == 200 and text.json()["status"] == "duplicated"
    assert first["id"] in text.json()["message"] and text.json()["track_id"] == first["track_id"]
    texts = await client.post("/documents/texts", json={"texts": [TEXT], "file_sources": ["third.txt"]})
    assert texts.json()["status"] == "duplicated" and first["id"] in texts.json()["message"]

    partial = await client.post("/documents/texts", json={"texts": [TEXT, "Carol lives in Rome."]})
    assert partial.json()["status"] == "partial_success" and first["id"] in partial.json()["message"]
    await indexed.track(partial.json()["track_id"])
    new = await client.post("/documents/upload", files={"file": ("new.txt", b"Dave lives in Oslo.")})
    assert new.json()["status"] == "success"
    await indexed.track(new.json()["track_id"])
    counts = (await client.get("/documents/status_counts")).json()["status_counts"]
    assert counts == counted(processed=3)
