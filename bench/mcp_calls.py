"""Each MCP tool's own cost against the same call through REST, over ``/mcp`` (streamable
HTTP, in ``lightrag-pg serve``) and over stdio (``lightrag-pg mcp``).

One ``lightrag-pg serve`` process and one ``lightrag-pg mcp`` process share a workspace of
``--docs`` documents, indexed through REST with the scripted LLM of the tests (an
OpenAI-compatible server in this process). Each call is made ``--repeat`` times per path,
in turn (REST, MCP over HTTP, MCP over stdio), and the median wall time of each is printed
with the ratio to REST. The clients keep their connections (httpx keep-alive, one MCP
session each), so the figures are the calls' cost, not connecting.

    python bench/mcp_calls.py --docs 20 --repeat 20
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from mcp import ClientSession

from lightrag_pg.db.embedded import resolve_dsn
from lightrag_pg.testing import hashed_vectors, responder
from tests.conftest import drop_if_exists, fresh_name
from tests.fake_openai import FakeOpenAI
from tests.mcp_support import held, http_session, stdio_session
from tests.served_process import Server, serving_process

KEY = "bench-key"
NAMES = ("Alice", "Bob", "Carol", "Acme", "Globex", "Paris", "Berlin", "Quantum Lab")
QUESTION = "Who founded Acme and where?"


def corpus(n: int) -> list[str]:
    """``n`` short documents over the scripted LLM's known names."""
    return [
        f"Note {i}: {NAMES[i % 3]} met {NAMES[3 + i % 2]} in {NAMES[5 + i % 2]}. "
        f"{NAMES[(i + 1) % 3]} joined {NAMES[3 + (i + 1) % 2]} later, with {NAMES[7]}."
        for i in range(n)
    ]


async def median_ms(call: Callable[[], Awaitable[Any]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def tool(session: ClientSession, tool_name: str, /, **arguments: Any) -> Any:
    result = await session.call_tool(tool_name, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool_name}: {result.content}")
    return result.structured_content


async def run(args: argparse.Namespace) -> None:
    dsn = resolve_dsn(args.dsn)
    workspace = fresh_name()
    folder = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    with (
        FakeOpenAI(responder, lambda texts: hashed_vectors(texts, 64).tolist()) as llm,
        serving_process(dsn, llm, workspace, folder, KEY) as server,
    ):
        try:
            await measure(args, dsn, workspace, folder, llm, server)
        finally:
            await drop_if_exists(dsn, workspace)


async def measure(
    args: argparse.Namespace, dsn: str, workspace: str, folder: Path, llm: FakeOpenAI, server: Server
) -> None:
    rest = httpx.AsyncClient(base_url=server.url, headers={"X-API-Key": KEY}, timeout=120)
    track = (await rest.post("/documents/texts", json={"texts": corpus(args.docs)})).json()["track_id"]
    server.wait_processed(track)
    counter = iter(range(10**9))

    def unique() -> str:
        return f"Bench text {next(counter)}: Carol visited Globex in Paris."

    async with (
        held(http_session(server.url, **{"X-API-Key": KEY})) as over_http,
        held(stdio_session(dsn, workspace, llm, folder)) as over_stdio,
    ):
        inserted: dict[str, list[str]] = {"rest": [], "http": [], "stdio": []}

        async def rest_insert() -> None:
            answer = (await rest.post("/documents/text", json={"text": unique()})).json()
            inserted["rest"].append(answer["track_id"])

        def mcp_insert(session: ClientSession, key: str) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                inserted[key].append((await tool(session, "insert_text", text=unique()))["track_id"])

            return call

        def upload_rest() -> Awaitable[Any]:
            name = f"rest-{next(counter)}.txt"
            return rest.post("/documents/upload", files={"file": (name, unique().encode())})

        def upload_mcp() -> Awaitable[Any]:
            content = base64.b64encode(unique().encode()).decode()
            return tool(
                over_http, "upload_file", file_name=f"mcp-{next(counter)}.txt", content_base64=content
            )

        cases: list[
            tuple[str, str, Callable[[], Awaitable[Any]], Callable[[ClientSession], Awaitable[Any]]]
        ] = [
            (
                "query",
                "POST /query",
                lambda: rest.post("/query", json={"query": QUESTION}),
                lambda s: tool(s, "query", query=QUESTION),
            ),
            (
                "retrieve",
                "POST /query/data",
                lambda: rest.post("/query/data", json={"query": QUESTION}),
                lambda s: tool(s, "retrieve", query=QUESTION),
            ),
            (
                "list_documents",
                "POST /documents/paginated",
                lambda: rest.post("/documents/paginated", json={}),
                lambda s: tool(s, "list_documents"),
            ),
            (
                "document_status",
                "GET /documents/track_status/{id}",
                lambda: rest.get(f"/documents/track_status/{track}"),
                lambda s: tool(s, "document_status", track_id=track),
            ),
            (
                "search_entities",
                "GET /graph/label/search",
                lambda: rest.get("/graph/label/search?q=acm"),
                lambda s: tool(s, "search_entities", query="acm"),
            ),
            (
                "entity",
                "GET /graphs (depth 1) [nearest]",
                lambda: rest.get("/graphs?label=Acme&max_depth=1&max_nodes=51"),
                lambda s: tool(s, "entity", name="Acme"),
            ),
            (
                "subgraph",
                "GET /graphs",
                lambda: rest.get("/graphs?label=Alice&max_depth=2&max_nodes=100"),
                lambda s: tool(s, "subgraph", label="Alice"),
            ),
            (
                "list_workspaces",
                "GET /health [nearest]",
                lambda: rest.get("/health"),
                lambda s: tool(s, "list_workspaces"),
            ),
        ]
        print(f"{args.docs} documents; median of {args.repeat} calls, ms (ratio to REST)")
        print(f"{'tool':<16} {'REST call':<34} {'REST':>8} {'MCP/HTTP':>16} {'MCP/stdio':>16}")
        for name, route, by_rest, by_tool in cases:
            await report(
                args,
                name,
                route,
                by_rest,
                functools.partial(by_tool, over_http),
                functools.partial(by_tool, over_stdio),
            )
        await report(
            args,
            "insert_text",
            "POST /documents/text",
            rest_insert,
            mcp_insert(over_http, "http"),
            mcp_insert(over_stdio, "stdio"),
        )
        await report(args, "upload_file", "POST /documents/upload", upload_rest, upload_mcp, None)
        for tracks in inserted.values():
            for t in tracks:
                server.wait_processed(t)
        ids = {key: [] for key in inserted}
        for key, tracks in inserted.items():
            for t in tracks:
                ids[key] += [
                    d["id"] for d in (await rest.get(f"/documents/track_status/{t}")).json()["documents"]
                ]

        def deleter(key: str, session: ClientSession | None) -> Callable[[], Awaitable[Any]]:
            async def call() -> Any:
                doc_id = ids[key].pop()
                if session is None:
                    return await rest.request(
                        "DELETE", "/documents/delete_document", json={"doc_ids": [doc_id]}
                    )
                return await tool(session, "delete_document", doc_ids=[doc_id])

            return call

        await report(
            args,
            "delete_document",
            "DELETE /documents/delete_document",
            deleter("rest", None),
            deleter("http", over_http),
            deleter("stdio", over_stdio),
        )
    await rest.aclose()


async def report(
    args: argparse.Namespace,
    name: str,
    route: str,
    by_rest: Callable[[], Awaitable[Any]],
    over_http: Callable[[], Awaitable[Any]],
    over_stdio: Callable[[], Awaitable[Any]] | None,
) -> None:
    await by_rest()  # warm: the first call of a kind loads what it needs
    await over_http()
    if over_stdio:
        await over_stdio()
    base = await median_ms(by_rest, args.repeat)
    http = await median_ms(over_http, args.repeat)
    stdio = await median_ms(over_stdio, args.repeat) if over_stdio else None
    cells = [f"{http:8.1f} ({http / base:4.2f})"]
    cells.append(f"{stdio:8.1f} ({stdio / base:4.2f})" if stdio is not None else f"{'-':>16}")
    print(f"{name:<16} {route:<34} {base:8.1f} {cells[0]:>16} {cells[1]:>16}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dsn", help="PostgreSQL DSN (default: $LIGHTRAG_PG_DSN, else the embedded server)")
    parser.add_argument("--docs", type=int, default=20, help="documents in the workspace")
    parser.add_argument("--repeat", type=int, default=20, help="calls per tool and path")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
