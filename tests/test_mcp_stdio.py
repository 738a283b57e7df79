"""``lightrag-pg mcp`` as a subprocess of the official MCP client, over stdio (one process per
module), with the scripted LLM: the tools, their errors, resources and ``--read-only``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from .conftest import drop_if_exists, fresh_name
from .fake_openai import FakeOpenAI
from .mcp_support import READERS, TEXT, WRITERS, call, held, insert_and_wait, refused, stdio_session

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def stdio_workspace(dsn: str) -> str:
    return fresh_name()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio(
    dsn: str, stdio_workspace: str, llm_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ClientSession]:
    folder = tmp_path_factory.mktemp("mcp-stdio")
    try:
        async with held(stdio_session(dsn, stdio_workspace, llm_server, folder)) as session:
            yield session
    finally:
        await drop_if_exists(dsn, stdio_workspace)


async def test_the_tools_have_schemas_and_descriptions(stdio: ClientSession) -> None:
    tools = {t.name: t for t in (await stdio.list_tools()).tools}
    assert set(tools) == READERS | {"insert_text", "delete_document"}  # no upload_file on stdio
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
    query = tools["query"].input_schema
    assert query["required"] == ["query"]
    assert set(query["properties"]) >= {"query", "mode", "bridge", "top_k", "response_type", "workspace"}
    assert query["properties"]["query"]["maxLength"] == 100_000
    assert "mix" in query["properties"]["mode"]["enum"]
    assert tools["query"].annotations and tools["query"].annotations.read_only_hint
    assert tools["delete_document"].annotations and tools["delete_document"].annotations.destructive_hint


async def test_insert_wait_query_retrieve_read_and_delete(stdio: ClientSession, stdio_workspace: str) -> None:
    doc_id = await insert_and_wait(stdio, TEXT, "founders.md")
    again = await call(stdio, "insert_text", text=TEXT)
    assert again["status"] == "duplicated"

    answer = await call(stdio, "query", query="Who founded Acme?", top_k=10)
    assert answer["response"].startswith("Scripted answer") and answer["llm_generated"]
    assert [r["file_path"] for r in answer["references"]] == ["founders.md"]

    data = await call(stdio, "retrieve", query="Who founded Acme?", mode="mix", chunk_top_k=5)
    assert data["status"] == "success"
    assert [c["file_path"] for c in data["data"]["chunks"]] == ["founders.md"]
    assert "Acme" in {e["entity_name"] for e in data["data"]["entities"]}

    assert (await call(stdio, "search_entities", query="acm"))["entities"][0] == "Acme"
    card = await call(stdio, "entity", name="Acme")
    assert card["entity_type"] == "Organization"
    assert {n["entity_name"] for n in card["neighbours"]} >= {"Alice", "Bob", "Paris", "Berlin"}
    assert card["sources"][0]["file_path"] == "founders.md" and card["sources"][0]["doc_id"] == doc_id
    graph = await call(stdio, "subgraph", label="Alice", max_depth=1)
    assert "Acme" in {n["id"] for n in graph["nodes"]}

    listed = await call(stdio, "list_documents", status="processed")
    assert [d["id"] for d in listed["documents"]] == [doc_id]
    assert stdio_workspace in (await call(stdio, "list_workspaces"))["workspaces"]

    text = await stdio.read_resource(f"lightrag://{stdio_workspace}/documents/{doc_id}")
    assert text.contents[0].text == TEXT  # type: ignore[union-attr]
    entity = await stdio.read_resource(f"lightrag://{stdio_workspace}/entities/Acme")
    assert '"entity_name":"Acme"' in entity.contents[0].text.replace(" ", "")  # type: ignore[union-attr]
    with pytest.raises(MCPError, match="no document"):
        await stdio.read_resource(f"lightrag://{stdio_workspace}/documents/doc-missing")

    deleted = await call(stdio, "delete_document", doc_ids=[doc_id, "doc-missing"])
    assert deleted["not_found"] == ["doc-missing"] and deleted["still_present"] == []
    gone = await call(stdio, "document_status", doc_ids=[doc_id])
    assert gone["not_found"] == [doc_id] and not gone["finished"]
    assert (await call(stdio, "search_entities", query="Acme"))["entities"] == []


async def test_hostile_arguments_are_errors_and_the_session_goes_on(stdio: ClientSession) -> None:
    assert "NUL" in await refused(stdio, "query", query="who\x00are you")
    assert "at most 100000 characters" in await refused(stdio, "query", query="x" * 1_000_000)
    assert "at most 1024 characters" in await refused(
        stdio, "insert_text", text="t", file_path="f" * 1_000_000
    )
    assert "top_k" in await refused(stdio, "query", query="who?", top_k="many")
    assert "top_k" in await refused(stdio, "query", query="who?", top_k=10**30)
    assert "mode" in await refused(stdio, "retrieve", query="who?", mode="psychic")
    assert "query" in await refused(stdio, "query", query="   ")
    assert "InvalidWorkspaceName" in await refused(stdio, "list_documents", workspace="pg_catalog")
    assert "WorkspaceNotFound" in await refused(stdio, "list_documents", workspace="never_created_here")
    assert "either track_id or doc_ids" in await refused(stdio, "document_status")
    assert "doc_ids" in await refused(stdio, "delete_document", doc_ids=[])
    assert "GraphItemNotFound" in await refused(stdio, "entity", name="Nobody")
    assert "Unknown tool" in await refused(stdio, "upload_file", file_name="a.txt", content_base64="")
    assert (await call(stdio, "list_documents"))["pagination"]["page"] == 1


@pytest.mark.slow  # a process of its own: about 5 s
async def test_read_only_offers_no_writer(dsn: str, llm_server: FakeOpenAI, tmp_path: Path) -> None:
    workspace = fresh_name()
    try:
        async with held(stdio_session(dsn, workspace, llm_server, tmp_path, "--read-only")) as session:
            names = {t.name for t in (await session.list_tools()).tools}
            assert names == READERS and not names & WRITERS
            assert "Unknown tool" in await refused(session, "insert_text", text=TEXT)
            assert (await call(session, "query", query="Who founded Acme?"))["llm_generated"] is False
    finally:
        await drop_if_exists(dsn, workspace)
