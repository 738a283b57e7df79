"""Upstream LightRAG 1.5.7's own WebUI, from its wheel, clicked through in Chromium against
``lightrag-pg serve``: documents, one-document delete, Clear, the graph and its node panel,
retrieval, the status card and the API docs. No page error, no console error and no API
answer of 400 or more may appear, and nothing may be fetched from another host (the API
docs must work offline)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, Request, Response, Route, expect

from .served_process import Server
from .test_webui import browser  # noqa: F401 (fixture; skips this module where test_webui is skipped)
from .upstream_webui import upstream_webui, webui_file

pytestmark = pytest.mark.slow

SEED = "Alice founded Acme in Paris. Bob joined Acme in Berlin. Carol met Alice in Paris. Globex hired Bob."
SECOND = "Quantum Lab is run by Carol in Berlin. Globex funds Quantum Lab."
THIRD = "Dave repairs bicycles in Lyon."


@pytest.fixture(scope="module")
def webui(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Upstream's built WebUI, from the ``lightrag-hku`` wheel (downloaded from PyPI)."""
    return upstream_webui(tmp_path_factory.mktemp("upstream"))


@pytest.fixture(scope="module")
def server(serve_process: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``lightrag-pg serve`` without credentials (as upstream's WebUI was tried), three documents."""
    workspace = f"upstream_ui_{uuid.uuid4().hex[:8]}"
    with serve_process(workspace, tmp_path_factory.mktemp("upstream-ui")) as served:
        served.insert(SEED, "seed.md")
        served.insert(SECOND, "quantum.md")
        served.insert(THIRD, "bicycles.md")
        yield served


@dataclass
class Watched:
    """A tab on upstream's WebUI and what went wrong in it."""

    page: Page
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.refused == [], self.refused


@pytest.fixture
def ui(browser: Browser, server: Server, webui: Path) -> Iterator[Watched]:  # noqa: F811
    """A tab with upstream's WebUI at ``/webui/`` of the server; other hosts are unreachable."""
    context = browser.new_context(viewport={"width": 1366, "height": 860})
    origin = re.escape(server.url)

    def offline(route: Route) -> None:
        route.abort()

    def serve_webui(route: Route) -> None:
        found = webui_file(webui, route.request.url.split("/webui/", 1)[1])
        if found is None:
            route.fulfill(status=404, body="")
        else:
            route.fulfill(status=200, body=found[0], content_type=found[1])

    context.route(re.compile(rf"^(?!{origin}/).*"), offline)
    context.route(f"{server.url}/webui/**", serve_webui)
    watched = Watched(context.new_page())
    watched.page.set_default_timeout(30_000)

    def failed(request: Request) -> None:
        if request.url.startswith(server.url):
            watched.errors.append(f"{request.method} {request.url}: {request.failure}")

    def answered(response: Response) -> None:
        if response.status >= 400:
            watched.refused.append(f"{response.status} {response.request.method} {response.url}")

    context.on("page", lambda tab: tab.on("pageerror", lambda e: watched.errors.append(f"page error: {e}")))
    watched.page.on("pageerror", lambda e: watched.errors.append(f"page error: {e}"))

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(f"console: {message.text}")

    watched.page.on("console", console)
    context.on("response", answered)
    context.on("requestfailed", failed)
    watched.page.goto(f"{server.url}/webui/")
    expect(watched.page.get_by_role("tab", name="Documents")).to_be_visible()
    yield watched
    context.close()


def rows(page: Page, text: str) -> Locator:
    return page.locator("tbody tr").filter(has_text=text)


def confirm(page: Page) -> None:
    """Type ``yes`` in the open confirmation dialog and confirm."""
    dialog = page.get_by_role("dialog")
    dialog.get_by_placeholder("Type yes to confirm").fill("yes")
    dialog.get_by_role("button", name="YES").click()
    expect(dialog).to_be_hidden(timeout=30_000)


def test_the_status_card_opens_with_the_servers_configuration(ui: Watched) -> None:
    # it crashed the whole app to a white page: configuration.force_llm_summary_on_merge was missing
    page = ui.page
    page.get_by_text("Connected").click()
    card = page.get_by_role("dialog")
    expect(card).to_contain_text("PostgreSQL pgvector (lightrag_pg)")
    expect(card).to_contain_text("fake-model")
    expect(card).to_contain_text("English / Sum_on_f 8")
    page.keyboard.press("Escape")
    expect(page.get_by_role("tab", name="Documents")).to_be_visible()
    ui.clean()


def test_the_api_docs_open_offline(ui: Watched, server: Server) -> None:
    # Swagger UI came from a CDN: blank offline; every other host is unreachable in this tab
    page = ui.page
    with page.context.expect_page() as opened:
        page.locator('header a[href^="/docs"]').click()
    docs = opened.value
    expect(docs.locator(".swagger-ui .opblock").first).to_be_visible()
    expect(docs.locator(".swagger-ui")).to_contain_text("/documents/scan/status/{track_id}")
    ui.clean()


def test_the_graph_draws_and_a_node_opens_its_panel(ui: Watched) -> None:
    page = ui.page
    page.get_by_role("tab", name="Knowledge Graph").click()
    expect(page.get_by_text(re.compile(r"node: [1-9]"))).to_be_visible()
    search = page.get_by_placeholder("Search nodes in page...")
    search.fill("Alice")
    page.get_by_role("option").filter(has_text="Alice").first.click()
    expect(page.get_by_text("Alice is mentioned", exact=False).first).to_be_visible()
    expect(page.get_by_text("Person", exact=True).first).to_be_visible()
    ui.clean()


def test_a_question_streams_an_answer(ui: Watched) -> None:
    page = ui.page
    page.get_by_role("tab", name="Retrieval").click()
    question = page.get_by_placeholder("Enter your query (Support prefix: /<Query Mode>)")
    question.fill("Who founded Acme?")
    question.press("Enter")
    expect(page.get_by_text("Scripted answer to 'Who founded Acme?'", exact=False)).to_be_visible()
    ui.clean()


def test_deleting_one_document_refreshes_the_table(ui: Watched, server: Server) -> None:
    # the table kept showing the document: the delete ran in the background while the WebUI
    # refreshed at once, and the pipeline never read busy, so no later refresh came
    page = ui.page
    expect(rows(page, "Dave repairs bicycles")).to_have_count(1)
    rows(page, "Dave repairs bicycles").get_by_role("checkbox").click()
    page.get_by_role("button", name="Delete").click()
    confirm(page)
    expect(rows(page, "Dave repairs bicycles")).to_have_count(0)
    expect(rows(page, "Alice founded Acme")).to_have_count(1)
    listed = server.client.post("/documents/paginated", json={}).json()["documents"]
    assert sorted(d["file_path"] for d in listed) == ["quantum.md", "seed.md"]
    ui.clean()


def test_clear_empties_the_workspace(ui: Watched, server: Server) -> None:
    # DELETE /documents was a 404: the Clear button did nothing
    page = ui.page
    expect(rows(page, "Alice founded Acme")).to_have_count(1)
    page.get_by_role("button", name="Clear").click()
    confirm(page)
    expect(page.locator("tbody tr").filter(has_text="doc-")).to_have_count(0)
    counts = server.client.get("/documents/status_counts").json()["status_counts"]
    assert counts["all"] == 0, counts
    assert server.client.get("/graph/label/list").json() == []
    ui.clean()
