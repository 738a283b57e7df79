"""The ``ollama`` client and Open WebUI's Ollama calls against ``lightrag-pg serve`` with an API key.

With the default ``WHITELIST_PATHS`` (``/health``) they send the key, the ``ollama`` client
as ``X-API-Key`` or as a bearer key, Open WebUI as its connection's bearer key; with
upstream's ``WHITELIST_PATHS=/health,/api/*``, given explicitly, they need none.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import ollama
import pytest

from .served_process import Server

pytestmark = pytest.mark.slow

KEY = "ollama-key"
SEED = "Alice founded Acme in Paris. Bob joined Acme in Berlin."
MODEL = "lightrag:latest"


@dataclass
class Served:
    server: Server
    key_required: bool

    @property
    def key_headers(self) -> dict[str, str]:
        """What the clients must send: nothing when /api/* is whitelisted."""
        return {"X-API-Key": KEY} if self.key_required else {}

    @property
    def open_webui_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {KEY}"} if self.key_required else {}


@pytest.fixture(scope="module", params=["default-whitelist", "api-whitelisted"])
def served(
    request: pytest.FixtureRequest,
    serve_process: Callable[..., Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """``lightrag-pg serve`` with an API key and one indexed document."""
    key_required = request.param == "default-whitelist"
    env = {} if key_required else {"WHITELIST_PATHS": "/health,/api/*"}
    workspace = f"ollama_{uuid.uuid4().hex[:8]}"
    with serve_process(workspace, tmp_path_factory.mktemp("ollama"), KEY, **env) as server:
        server.insert(SEED, "seed.md")
        yield Served(server, key_required)
    assert ("WHITELIST_PATHS (/health,/api/*)" in server.stderr) is not key_required, server.stderr


def test_the_ollama_client_lists_chats_and_generates(served: Served) -> None:
    client = ollama.Client(host=served.server.url, headers=served.key_headers, timeout=60)
    assert [m.model for m in client.list().models] == [MODEL]
    assert [m.model for m in client.ps().models] == [MODEL]
    answer = client.chat(model=MODEL, messages=[{"role": "user", "content": "/local Who founded Acme?"}])
    assert answer.message.content is not None and answer.message.content.startswith("Scripted answer")
    pieces = list(
        client.chat(
            model=MODEL,
            messages=[
                {"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi."},
                {"role": "user", "content": "/mix Where did Alice found Acme?"},
            ],
            stream=True,
        )
    )
    assert len(pieces) > 1 and pieces[-1].done
    assert "".join(p.message.content or "" for p in pieces).startswith("Scripted answer")
    generated = client.generate(model=MODEL, prompt="Say hi")
    assert generated.done and (generated.response or "").startswith("Scripted answer")


def test_the_ollama_client_is_refused_without_the_key_unless_api_is_whitelisted(served: Served) -> None:
    client = ollama.Client(host=served.server.url, timeout=60)
    if served.key_required:
        with pytest.raises(ollama.ResponseError) as refused:
            client.list()
        assert refused.value.status_code == 403
        with pytest.raises(ollama.ResponseError) as refused:
            client.chat(model=MODEL, messages=[{"role": "user", "content": "Who founded Acme?"}])
        assert refused.value.status_code == 403
        bearer = ollama.Client(host=served.server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
        assert [m.model for m in bearer.list().models] == [MODEL]
    else:
        assert [m.model for m in client.list().models] == [MODEL]


def test_open_webuis_calls(served: Served) -> None:
    headers = served.open_webui_headers
    with httpx.Client(base_url=served.server.url, headers=headers, timeout=60) as client:
        assert client.get("/api/version").json()["version"]
        tags = client.get("/api/tags")
        assert tags.status_code == 200 and tags.json()["models"][0]["name"] == MODEL
        again = client.get("/api/tags").json()
        assert again["models"][0]["modified_at"] == tags.json()["models"][0]["modified_at"]
        body = {
            "model": MODEL,
            "stream": True,
            "messages": [{"role": "user", "content": "Who founded Acme?"}],
        }
        with client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200
            lines = [json.loads(line) for line in response.iter_lines() if line]
        assert lines[-1]["done"] is True
        assert "".join(line["message"]["content"] for line in lines).startswith("Scripted answer")
        # the knowledge base stays behind the key whatever the whitelist
        assert client.get("/documents/status_counts").status_code == (200 if headers else 403)
