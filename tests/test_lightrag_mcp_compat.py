"""The third-party ``lightrag-mcp`` bridge (PyPI, written for upstream's REST server; it needs
``mcp<2``, so it gets a virtualenv of its own, made here) against ``lightrag-pg serve``
unchanged, driven by the official client: which of its tools work, and why the others do not.

``LIGHTRAG_MCP_VENV`` names an existing virtualenv with it installed, to skip the install.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from .conftest import fresh_name
from .mcp_support import TEXT, held, text_of
from .served_process import Server

pytestmark = pytest.mark.slow

KEY = "compat-key"
PACKAGES = ("lightrag-mcp==0.1.1", "mcp>=1.6,<2")

WORKS: dict[str, str] = {
    "query_document": "POST /query",
    "insert_document": "POST /documents/text",
    "upload_document": "POST /documents/upload",
    "scan_for_new_documents": "POST /documents/scan",
    "get_pipeline_status": "GET /documents/pipeline_status",
    "get_graph_labels": "GET /graph/label/list",
    "check_lightrag_health": "GET /health",
}
"""Tools that work, and the call each makes."""
FAILS: dict[str, tuple[str, str, str]] = {
    "get_documents": ("GET", "/documents", "POST /documents/paginated"),
    "insert_file": ("POST", "/documents/file", "POST /documents/upload"),
    "insert_batch": ("POST", "/documents/file", "POST /documents/upload, per file"),
    "create_entities": ("POST", "/entities/Quantum Lab", "POST /graph/entity/create"),
    "edit_entities": ("PUT", "/entities/Quantum Lab", "POST /graph/entity/edit"),
    "delete_by_entities": ("DELETE", "/entities/Berlin", "DELETE /graph/entity/delete"),
    "create_relations": ("POST", "/relations/Alice/Bob", "POST /graph/relation/create"),
    "edit_relations": ("PUT", "/relations/Alice/Bob", "POST /graph/relation/edit"),
    "merge_entities": ("POST", "/merge", "POST /graph/entities/merge"),
    "delete_by_doc_ids": ("DELETE", "/documents/doc-0", "DELETE /documents/delete_document"),
}
"""Tools that do not work: the call each makes, which LightRAG Server 1.5 does not have
either (a 404, or 405 for ``GET /documents``), and upstream's route for the same thing. The
bridge's generated client turns the 404/405 into ``None``, so the tool reports ``success``
while nothing was done."""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("LIGHTRAG_MCP_VENV")
    if given:
        return Path(given)
    where = tmp_path_factory.mktemp("lightrag-mcp-venv")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, *PACKAGES], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"installing {PACKAGES} from PyPI failed: {done.stderr[-2000:]}"
    return where


@pytest.fixture(scope="module")
def server(
    serve_process: Callable[..., AbstractContextManager[Server]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with serve_process(fresh_name(), tmp_path_factory.mktemp("compat"), KEY) as served:
        served.insert(TEXT, "founders.md")
        yield served


def bridge(
    venv: Path, server: Server, folder: Path
) -> Callable[[], AbstractAsyncContextManager[ClientSession]]:
    port = server.url.rsplit(":", 1)[1]
    parameters = StdioServerParameters(
        command=str(venv / "bin" / "lightrag-mcp"),
        args=["--host", "127.0.0.1", "--port", port, "--api-key", KEY],
        cwd=folder,
    )

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        with (folder / "bridge-stderr.log").open("w") as errors:
            async with (
                stdio_client(parameters, errlog=errors) as (read, write),
                ClientSession(read, write) as client,
            ):
                yield client

    return session


def arguments(folder: Path) -> dict[str, dict[str, Any]]:
    """An argument set for each of the bridge's tools."""
    upload = folder / "upload.md"
    upload.write_text("Carol runs Globex in Berlin.")
    batch = folder / "batch"
    batch.mkdir(exist_ok=True)
    (batch / "one.md").write_text("Globex hired Bob.")
    entity = {
        "entity_name": "Quantum Lab",
        "entity_type": "Organization",
        "description": "A lab",
        "source_id": "x",
    }
    relation = {"source": "Alice", "target": "Bob", "description": "work together", "keywords": "colleagues"}
    return {
        "query_document": {"query": "Who founded Acme?"},
        "insert_document": {"text": "Bob met Carol in Paris."},
        "upload_document": {"file_path": str(upload)},
        "insert_file": {"file_path": str(upload)},
        "insert_batch": {"directory_path": str(batch)},
        "scan_for_new_documents": {},
        "get_documents": {},
        "get_pipeline_status": {},
        "get_graph_labels": {},
        "check_lightrag_health": {},
        "merge_entities": {"source_entities": ["Paris"], "target_entity": "Paris City", "merge_strategy": {}},
        "create_entities": {"entities": [entity]},
        "edit_entities": {"entities": [entity]},
        "delete_by_entities": {"entity_names": ["Berlin"]},
        "create_relations": {"relations": [relation]},
        "edit_relations": {"relations": [{**relation, "relation_type": "related"}]},
        "delete_by_doc_ids": {"doc_ids": ["doc-0"]},
    }


async def test_each_tool_of_lightrag_mcp(venv: Path, server: Server, tmp_path: Path) -> None:
    outcomes: dict[str, str] = {}
    async with held(bridge(venv, server, tmp_path)) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == set(WORKS) | set(FAILS)
        for tool, args in arguments(tmp_path).items():
            result = await session.call_tool(tool, args)
            assert not result.is_error, (tool, text_of(result)[:500])
            outcomes[tool] = text_of(result).replace(" ", "").replace("\n", "")
    for tool in WORKS:
        assert outcomes[tool].startswith('{"status":"success","response":'), (tool, outcomes[tool][:500])
        assert '"response":"None"' not in outcomes[tool], tool
    assert "Scriptedanswerto'WhofoundedAcme?'" in outcomes["query_document"]
    assert '"file_path":"founders.md"' in outcomes["query_document"]
    assert '"status":"healthy"' in outcomes["check_lightrag_health"]
    assert "Acme" in outcomes["get_graph_labels"]
    for tool, (method, path, _) in FAILS.items():
        said_nothing = '"response":"None"' in outcomes[tool] or '"result":null' in outcomes[tool]
        said_nothing |= tool == "insert_batch"  # it counts its files, not what the server said
        assert said_nothing, (tool, outcomes[tool][:500])
        assert server.client.request(method, path).status_code in (404, 405), (method, path)
    labels = server.client.get("/graph/label/list").json()
    assert {"Berlin", "Paris"} <= set(labels) and not {"Quantum Lab", "Paris City"} & set(labels)
    files = [d["file_path"] for d in server.client.post("/documents/paginated", json={}).json()["documents"]]
    assert "one.md" not in files and "upload.md" in files
