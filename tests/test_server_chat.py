"""The Ollama emulation (read by the ``ollama`` client too) and the graph routes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import ollama
import pytest
import pytest_asyncio

from lightrag_pg.server import ServerSettings
from lightrag_pg.server.ollama import parse_prefix

from .server_support import TEXT, Served, serving


@pytest_asyncio.fixture
async def indexed(dsn: str, workspace_name: str, tmp_path: Path) -> AsyncIterator[Served]:
    """A server whose default workspace holds :data:`TEXT`, indexed."""
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings) as server:
        inserted = await server.client.post("/documents/text", json={"text": TEXT, "file_source": "t.txt"})
        track = inserted.json()
        await server.track(track["track_id"])
        yield server


@pytest.mark.parametrize(
    ("text", "query", "mode", "context_only", "user_prompt"),
    [
        ("Who is Alice?", "Who is Alice?", "mix", False, None),
        ("/local Who is Alice?", "Who is Alice?", "local", False, None),
        ("/global  why?", "why?", "global", False, None),
        ("/bypass hello", "hello", "bypass", False, None),
        ("/context Who?", "Who?", "mix", True, None),
        ("/naivecontext Who?", "Who?", "naive", True, None),
        ("/mix[answer in French] Who?", "Who?", "mix", False, "answer in French"),
        ("/[be brief] Who?", "Who?", "mix", False, "be brief"),
        ("/localWho", "/localWho", "mix", False, None),
    ],
)
def test_mode_prefixes(text: str, query: str, mode: str, context_only: bool, user_prompt: str | None) -> None:
    parsed = parse_prefix(text)
    assert (parsed.query, parsed.mode, parsed.only_need_context, parsed.user_prompt) == (
        query,
        mode,
        context_only,
        user_prompt,
    )


async def test_model_listing_routes(indexed: Served) -> None:
    assert (await indexed.client.get("/api/version")).json() == {"version": "0.9.3"}
    (model,) = (await indexed.client.get("/api/tags")).json()["models"]
    assert model["name"] == "lightrag:latest" and model["details"]["format"] == "gguf"
    (running,) = (await indexed.client.get("/api/ps")).json()["models"]
    assert running["name"] == "lightrag:latest" and running["size_vram"] > 0


async def test_chat_and_generate_without_streaming(indexed: Served) -> None:
    messages = [{"role": "user", "content": "/local Alice?"}]
    body = {"model": "lightrag:latest", "stream": False, "messages": messages}
    answer = (await indexed.client.post("/api/chat", json=body)).json()
    assert answer["done"] is True and answer["message"]["role"] == "assistant"
    assert answer["message"]["content"].startswith("Scripted answer")
    assert answer["eval_count"] > 0 and answer["total_duration"] > 0

    context = {**body, "messages": [{"role": "user", "content": "/context Where is Acme?"}]}
    assert "Acme" in (await indexed.client.post("/api/chat", json=context)).json()["message"]["content"]

    generated = await indexed.client.post(
        "/api/generate", content=json.dumps({"model": "m", "prompt": "Say hi"}), headers={"content-type": "x"}
    )
    assert generated.status_code == 200
    assert generated.json()["done"] is True and generated.json()["response"].startswith("Scripted answer")


async def test_generate_streams_ndjson(indexed: Served) -> None:
    body = {"model": "m", "prompt": "Say hi", "stream": True}
    async with indexed.client.stream("POST", "/api/generate", json=body) as response:
        lines = [json.loads(line) async for line in response.aiter_lines() if line]
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
    assert "".join(line["response"] for line in lines).startswith("Scripted answer")


def chat_body(*messages: dict[str, str]) -> bytes:
    return json.dumps({"model": "m", "messages": list(messages)}).encode()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/chat", b"{not json"),
        ("/api/chat", json.dumps({"model": "m", "messages": []}).encode()),
        ("/api/chat", chat_body({"role": "assistant", "content": "x"})),
        ("/api/chat", chat_body({"role": "user", "content": "/local  "})),
        ("/api/generate", json.dumps({"model": "m"}).encode()),
        ("/api/generate", json.dumps({"model": "m", "prompt": " "}).encode()),
    ],
)
async def test_bad_chat_bodies_are_400(indexed: Served, path: str, body: bytes) -> None:
    response = await indexed.client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["detail"]


async def test_the_ollama_client_reads_a_streamed_chat(indexed: Served) -> None:
    client = ollama.AsyncClient(
        host="http://test",
        transport=httpx.ASGITransport(app=indexed.app),
        headers={"LIGHTRAG-WORKSPACE": indexed.workspace},
    )
    pieces = []
    async for part in await client.chat(
        model="lightrag:latest",
        messages=[
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi."},
            {"role": "user", "content": "/mix Where did Alice found Acme?"},
        ],
        stream=True,
    ):
        pieces.append(part)
    assert len(pieces) > 1 and pieces[-1].done is True
    text = "".join(p.message.content or "" for p in pieces)
    assert text.startswith("Scripted answer") and "Alice" in text
    listed = await client.list()
    assert [m.model for m in listed.models] == ["lightrag:latest"]


async def test_entity_exists(indexed: Served) -> None:
    for name, exists in (("Alice", True), ("Zed", False)):
        response = await indexed.client.get("/graph/entity/exists", params={"name": name})
        assert response.json() == {"exists": exists}
    assert (await indexed.client.get("/graph/entity/exists")).status_code == 422


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "path", "params", "body"),
    [
        ("GET", "/graph/label/popular", {"limit": 0}, None),
        ("GET", "/graph/label/search", {}, None),
        ("GET", "/graphs", {"label": "Alice", "max_depth": 0}, None),
        ("POST", "/graph/entity/edit", None, {"entity_name": " ", "updated_data": {}}),
        ("POST", "/graph/entities/merge", None, {"entities_to_change": [], "entity_to_change_into": "A"}),
        ("DELETE", "/graph/relation/delete", None, {"source_entity": "Alice"}),
    ],
)
async def test_bad_graph_requests_are_422(
    indexed: Served, method: str, path: str, params: dict[str, object] | None, body: dict[str, object] | None
) -> None:
    response = await indexed.client.request(method, path, params=params, json=body)
    assert response.status_code == 422 and response.json()["detail"]
