"""Driving the MCP server with the official ``mcp`` client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from .fake_openai import FakeOpenAI
from .served_process import server_env

TEXT = "Alice founded Acme in Paris. Bob joined Acme in Berlin."
OTHER = "Carol runs Globex in Berlin. Globex hired Bob."
WRITERS = {"insert_text", "delete_document", "upload_file"}
READERS = {
    "query",
    "retrieve",
    "document_status",
    "list_documents",
    "search_entities",
    "entity",
    "subgraph",
    "list_workspaces",
}


@asynccontextmanager
async def held(
    session_of: Callable[[], AbstractAsyncContextManager[ClientSession]],
) -> AsyncIterator[ClientSession]:
    """An initialized session, held open by a task of its own, so that fixtures (set up and
    torn down in different tasks) can share it: the SDK's cancel scopes stay in one task."""
    ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with session_of() as session:
                await session.initialize()
                ready.set_result(session)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        done.set()
        await asyncio.wait_for(task, 30)


def stdio_session(
    dsn: str, workspace: str, llm_server: FakeOpenAI, folder: Path, *args: str
) -> Callable[[], AbstractAsyncContextManager[ClientSession]]:
    """``lightrag-pg mcp`` as a subprocess of the official client, with the scripted LLM."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lightrag_pg", "mcp", "--dsn", dsn, "--workspace", workspace, *args],
        env=server_env(llm_server),
        cwd=folder,
    )

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        with (folder / "mcp-stderr.log").open("w") as errors:
            async with (
                stdio_client(parameters, errlog=errors) as (read, write),
                ClientSession(read, write) as client,
            ):
                yield client

    return session


def http_session(url: str, **headers: str) -> Callable[[], AbstractAsyncContextManager[ClientSession]]:
    """A session with ``url``'s ``/mcp`` over streamable HTTP, sending ``headers``."""

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        timeout = httpx2.Timeout(60, read=120)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as client,
        ):
            yield client

    return session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a tool call that must succeed."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    if result.structured_content is not None:
        return result.structured_content
    parsed: dict[str, Any] = json.loads(text_of(result))
    return parsed


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The message of a tool call that must fail."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} succeeded: {text_of(result)[:300]}"
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def insert_and_wait(session: ClientSession, text: str, source: str, **extra: Any) -> str:
    """Insert ``text`` with the tool, wait with ``document_status`` until it is processed;
    its document id."""
    inserted = await call(session, "insert_text", text=text, file_path=source, **extra)
    assert inserted["status"] == "success", inserted
    status = await call(session, "document_status", track_id=inserted["track_id"], wait_seconds=60, **extra)
    assert status["finished"], status
    [document] = status["documents"]
    assert document["status"] == "processed", document
    doc_id: str = document["id"]
    return doc_id
