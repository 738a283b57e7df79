"""``/mcp`` of ``lightrag-pg serve`` (a real uvicorn process, one per module) driven by the
official MCP client over streamable HTTP: the API key, the workspace header, uploads,
the tools against REST, hostile arguments and ``--mcp-read-only``."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from .conftest import drop_if_exists, fresh_name
from .mcp_support import OTHER, READERS, TEXT, WRITERS, call, held, http_session, insert_and_wait, refused
from .served_process import Server

pytest.importorskip("mcp")

KEY = "mcp-test-key"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
STREAMS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's working directory and input folder."""
    return tmp_path_factory.mktemp("mcp-http")


@pytest.fixture(scope="module")
def served(serve_process: Callable[..., AbstractContextManager[Server]], folder: Path) -> Iterator[Server]:
    with serve_process(fresh_name(), folder, KEY, args=("--allow-create",)) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def mcp_client(served: Server) -> AsyncIterator[ClientSession]:
    async with held(http_session(served.url, **{"X-API-Key": KEY})) as session:
        yield session


def test_refused_without_the_key(served: Server) -> None:
    for headers, status in (
        ({}, 403),
        ({"X-API-Key": "wrong"}, 403),
        ({"Authorization": "Bearer wrong"}, 401),
    ):
        answer = httpx.post(f"{served.url}/mcp", json=INITIALIZE, headers={**STREAMS, **headers})
        assert answer.status_code == status, answer.text
    accepted = httpx.post(
        f"{served.url}/mcp", json=INITIALIZE, headers={**STREAMS, "Authorization": f"Bearer {KEY}"}
    )
    assert accepted.status_code == 200 and "mcp-session-id" in accepted.headers


async def test_the_official_client_without_the_key_cannot_connect(served: Server) -> None:
    with pytest.raises(BaseException) as caught:
        async with held(http_session(served.url)):
            pass
    assert any(isinstance(e, MCPError) for e in _leaves(caught.value)), caught.value


async def test_insert_upload_query_retrieve_delete(
    mcp_client: ClientSession, served: Server, folder: Path
) -> None:
    names = {t.name for t in (await mcp_client.list_tools()).tools}
    assert names == READERS | WRITERS
    doc_id = await insert_and_wait(mcp_client, TEXT, "founders.md")
    encoded = base64.b64encode(OTHER.encode()).decode()
    uploaded = await call(mcp_client, "upload_file", file_name="globex.txt", content_base64=encoded)
    assert uploaded["status"] == "success", uploaded
    status = await call(mcp_client, "document_status", track_id=uploaded["track_id"], wait_seconds=60)
    assert [d["status"] for d in status["documents"]] == ["processed"]
    assert (folder / served.workspace / "globex.txt").read_text() == OTHER

    answer = await call(mcp_client, "query", query="Who founded Acme?", include_chunk_content=True)
    rest = served.client.post(
        "/query", json={"query": "Who founded Acme?", "include_chunk_content": True}
    ).json()
    assert _same_answer(answer, rest)
    data = await call(mcp_client, "retrieve", query="Who works at Globex?")
    assert (
        data["data"]
        == served.client.post("/query/data", json={"query": "Who works at Globex?"}).json()["data"]
    )

    deleted = await call(mcp_client, "delete_document", doc_ids=[doc_id])
    assert deleted["status"] == "deletion_started" and deleted["still_present"] == []
    listed = served.client.post("/documents/paginated", json={}).json()
    assert [d["file_path"] for d in listed["documents"]] == ["globex.txt"]


async def test_the_workspace_comes_from_the_header_or_the_argument(served: Server, dsn: str) -> None:
    other = fresh_name()
    try:
        async with held(
            http_session(served.url, **{"X-API-Key": KEY, "LIGHTRAG-WORKSPACE": other})
        ) as session:
            await insert_and_wait(session, "Quantum Lab hired Carol.", "lab.md")
            mine = await call(session, "list_documents")
            assert [d["file_path"] for d in mine["documents"]] == ["lab.md"]
            theirs = await call(session, "list_documents", workspace=served.workspace)
            assert "lab.md" not in [d["file_path"] for d in theirs["documents"]]
        rest = served.client.post(
            "/documents/paginated", json={}, headers={"LIGHTRAG-WORKSPACE": other}
        ).json()
        assert [d["file_path"] for d in rest["documents"]] == ["lab.md"]
    finally:
        await drop_if_exists(dsn, other)


async def test_hostile_arguments_and_big_uploads(mcp_client: ClientSession) -> None:
    assert "NUL" in await refused(mcp_client, "search_entities", query="A\x00")
    assert "at most 100000 characters" in await refused(mcp_client, "retrieve", query="q" * 1_000_000)
    assert "wait_seconds" in await refused(mcp_client, "document_status", track_id="t", wait_seconds=3600)
    assert "base64" in await refused(
        mcp_client, "upload_file", file_name="a.txt", content_base64="not base64!"
    )
    assert "Unsupported file type" in await refused(
        mcp_client, "upload_file", file_name="a.exe", content_base64=""
    )
    assert "plain name" in await refused(mcp_client, "upload_file", file_name="../a.txt", content_base64="")
    assert (await call(mcp_client, "search_entities", query="Glob"))["entities"] == ["Globex"]


@pytest.mark.slow  # a process of its own: about 5 s
def test_read_only_hides_the_writers(
    serve_process: Callable[..., AbstractContextManager[Server]], tmp_path: Path
) -> None:
    with serve_process(fresh_name(), tmp_path, KEY, args=("--mcp-read-only",)) as server:
        session = _post(server, INITIALIZE)
        _post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        tools = _post(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        assert {t["name"] for t in tools["result"]["tools"]} == READERS
        refusal = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "insert_text", "arguments": {"text": "x"}},
        }
        assert "Unknown tool" in str(_post(server, refusal, session))


def _post(server: Server, message: dict[str, Any], session: Any = None) -> Any:
    """One JSON-RPC message to ``/mcp``; the session id for ``initialize``, else the answer."""
    headers = {**STREAMS, "X-API-Key": KEY, "MCP-Protocol-Version": "2025-06-18"}
    if session:
        headers["mcp-session-id"] = session
    answer = httpx.post(f"{server.url}/mcp", json=message, headers=headers)
    answer.raise_for_status()
    if message.get("method") == "initialize":
        return answer.headers["mcp-session-id"]
    if "id" not in message:
        return None
    data = [line.removeprefix("data: ") for line in answer.text.splitlines() if line.startswith("data: ")]
    return json.loads(data[-1])


def _leaves(exc: BaseException) -> list[BaseException]:
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())  # an exception group's
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [exc]


def _same_answer(tool: dict[str, Any], rest: dict[str, Any]) -> bool:
    """The tool's answer and REST's, but for the time each took."""
    return {k: v for k, v in tool.items() if k != "response_time"} == {
        k: v for k, v in rest.items() if k != "response_time"
    }
