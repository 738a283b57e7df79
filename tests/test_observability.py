"""OpenTelemetry spans (read from the SDK's in-memory exporter) and the server's ``/metrics``
(parsed with prometheus-client's parser); both no-ops without their packages."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from prometheus_client.parser import text_string_to_metric_families

from lightrag_pg import QueryParam
from lightrag_pg.observe import metrics
from lightrag_pg.server import ServerSettings

from .conftest import RagFactory
from .server_support import scripted_factory, serving

DOCS = [
    "Alice met Bob in Paris. Bob works with Carol at Acme.",
    "Carol visited Berlin with Alice. Acme competes with Globex.",
]
QUESTION = "How is Alice related to Acme?"


class Switch(Sampler):
    """Records spans only while a test of this module runs (the provider stays for the process)."""

    enabled = False

    def should_sample(
        self,
        parent_context: Any,
        trace_id: int,
        name: str,
        kind: Any = None,
        attributes: Any = None,
        *rest: Any,
    ) -> SamplingResult:
        if not self.enabled:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "test switch"


SWITCH = Switch()
EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The exporter of the spans ended while the test runs."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider(sampler=SWITCH)
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
    EXPORTER.clear()
    SWITCH.enabled = True
    try:
        yield EXPORTER
    finally:
        SWITCH.enabled = False
        EXPORTER.clear()


def named(finished: Sequence[ReadableSpan], name: str, **attributes: Any) -> list[ReadableSpan]:
    return [
        s
        for s in finished
        if s.name == name and all((s.attributes or {}).get(k) == v for k, v in attributes.items())
    ]


def parent_of(span: ReadableSpan, finished: Sequence[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, span.name
    (parent,) = [s for s in finished if s.context.span_id == span.parent.span_id]
    return parent


def texts_in(finished: Sequence[ReadableSpan]) -> list[str]:
    values = [v for s in finished for v in (s.attributes or {}).values() if isinstance(v, str)]
    events = [
        v for s in finished for e in s.events for v in (e.attributes or {}).values() if isinstance(v, str)
    ]
    return values + events


async def test_a_query_is_a_tree_of_spans_with_counts_and_no_text(
    rag_factory: RagFactory, spans: InMemorySpanExporter
) -> None:
    rag = await rag_factory()
    await rag.ainsert(DOCS)
    spans.clear()
    answer = await rag.aquery(QUESTION, QueryParam(mode="hybrid"))
    finished = spans.get_finished_spans()
    (query,) = named(finished, "lightrag.query")
    assert query.attributes["lightrag.workspace"] == rag.workspace
    assert query.attributes["lightrag.mode"] == "hybrid"
    assert query.attributes["lightrag.usage.llm_calls"] == 2
    assert query.attributes["lightrag.usage.output_tokens"] > 0
    for stage in ("lightrag.keywords", "lightrag.retrieve", "lightrag.context", "lightrag.embed"):
        (child,) = named(finished, stage)
        assert parent_of(child, finished) is query, stage
    (keywords_call,) = named(finished, "lightrag.llm", **{"lightrag.kind": "keywords"})
    assert parent_of(keywords_call, finished).name == "lightrag.keywords"
    (answer_call,) = named(finished, "lightrag.llm", **{"lightrag.kind": "answer"})
    assert parent_of(answer_call, finished) is query
    assert answer_call.attributes["gen_ai.request.model"] == "scripted_llm"
    assert answer_call.attributes["gen_ai.usage.output_tokens"] == rag.tokenizer.count(answer)
    assert answer_call.attributes["lightrag.cache_hit"] is False
    (retrieve,) = named(finished, "lightrag.retrieve")
    assert retrieve.attributes["lightrag.entities"] > 0
    assert query.start_time <= answer_call.start_time and answer_call.end_time <= query.end_time
    leaked = [t for t in texts_in(finished) if "Alice" in t or "Acme" in t]
    assert leaked == []


async def test_indexing_a_document_is_a_tree_of_spans(
    rag_factory: RagFactory, spans: InMemorySpanExporter
) -> None:
    rag = await rag_factory(force_llm_summary_on_merge=2)
    await rag.ainsert(DOCS[:1])
    finished = spans.get_finished_spans()
    (document,) = named(finished, "lightrag.document")
    assert document.attributes["lightrag.workspace"] == rag.workspace
    assert document.attributes["lightrag.chunks"] == 1
    assert document.attributes["lightrag.usage.llm_calls"] >= 2
    for stage in ("lightrag.chunks", "lightrag.merge", "lightrag.finish"):
        (child,) = named(finished, stage)
        assert parent_of(child, finished) is document, stage
    (extract,) = named(finished, "lightrag.extract")
    assert extract.attributes["lightrag.gleaning_passes"] == 1
    assert extract.attributes["lightrag.entities"] == 5
    calls = [s for s in finished if s.name == "lightrag.llm" and parent_of(s, finished) is extract]
    assert sorted(s.attributes["lightrag.kind"] for s in calls) == ["extract", "glean"]
    assert all(s.attributes["gen_ai.usage.input_tokens"] > 0 for s in calls)
    (merge,) = named(finished, "lightrag.merge")
    assert merge.attributes["lightrag.merge.rounds"] >= 1
    assert [e.name for e in merge.events][-1] == "merge batch written"
    embeds = named(finished, "lightrag.embed")
    assert embeds and all(s.attributes["gen_ai.usage.input_tokens"] > 0 for s in embeds)
    assert {parent_of(s, finished).name for s in embeds} <= {
        "lightrag.extract",
        "lightrag.merge",
        "lightrag.document",
    }
    assert [t for t in texts_in(finished) if "Alice" in t] == []


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus exposition, by name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_count_requests_calls_tokens_documents_and_connections(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings) as server:
        before = samples((await server.client.get("/metrics")).text)
        inserted = (await server.client.post("/documents/text", json={"text": DOCS[0]})).json()
        await server.track(inserted["track_id"])
        assert (
            await server.client.post("/query", json={"query": QUESTION, "mode": "local"})
        ).status_code == 200
        assert (await server.client.get("/no/such/route")).status_code == 404
        response = await server.client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)

    def grew(name: str, **labels: str) -> float:
        return value(found, name, **labels) - value(before, name, **labels)

    request = "lightrag_pg_http_request_duration_seconds_count"
    assert grew(request, method="POST", route="/query", status="200") == 1
    assert grew(request, method="POST", route="/documents/text", status="200") == 1
    assert grew(request, method="GET", route="unmatched", status="404") == 1
    ws = workspace_name
    assert grew("lightrag_pg_llm_calls_total", workspace=ws, kind="extract", cache="miss") == 1
    assert grew("lightrag_pg_llm_calls_total", workspace=ws, kind="glean", cache="miss") == 1
    assert grew("lightrag_pg_llm_calls_total", workspace=ws, kind="answer", cache="miss") == 1
    assert grew("lightrag_pg_llm_calls_total", workspace=ws, kind="embed", cache="miss") >= 2
    assert grew("lightrag_pg_llm_tokens_total", workspace=ws, kind="extract", direction="input") > 0
    assert grew("lightrag_pg_llm_tokens_total", workspace=ws, kind="answer", direction="output") > 0
    assert value(found, "lightrag_pg_documents", workspace=ws, status="processed") == 1
    assert value(found, "lightrag_pg_documents", workspace=ws, status="failed") == 0
    assert value(found, "lightrag_pg_pipeline_busy", workspace=ws) == 0
    assert value(found, "lightrag_pg_pipeline_queue_depth", workspace=ws) == 0
    for state in ("open", "in_use", "idle", "waiting"):
        assert ("lightrag_pg_pool_connections", (("pool", "shared"), ("state", state))) in found
    assert value(found, "lightrag_pg_pool_connections", pool="shared", state="open") >= 1


async def test_metrics_count_failed_calls(dsn: str, workspace_name: str, tmp_path: Path) -> None:
    async def failing(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        raise RuntimeError("the model is down")

    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings, scripted_factory(failing)) as server:
        before = samples((await server.client.get("/metrics")).text)
        inserted = (await server.client.post("/documents/text", json={"text": DOCS[1]})).json()
        await server.track(inserted["track_id"])
        found = samples((await server.client.get("/metrics")).text)
    name, labels = "lightrag_pg_llm_errors_total", {"workspace": workspace_name, "kind": "extract"}
    # at least once: a second processing run (the insert's, then the resume's) may retry it
    assert value(found, name, **labels) - value(before, name, **labels) >= 1
    assert value(found, "lightrag_pg_documents", workspace=workspace_name, status="failed") == 1


async def test_metrics_without_prometheus_client_is_404(
    dsn: str, workspace_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics, "enable", lambda: False)
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings) as server:
        response = await server.client.get("/metrics")
    assert response.status_code == 404 and "prometheus-client" in response.text


def test_spans_and_metrics_are_no_ops_without_their_packages_or_until_used() -> None:
    script = """
import sys
sys.modules["opentelemetry"] = None
sys.modules["prometheus_client"] = None
from lightrag_pg.observe import metrics, tracing
assert not tracing.available() and not metrics.available() and not metrics.enable()
with tracing.span("x", {"a": 1}) as s:
    s.set_attribute("b", 2)
    assert not s.is_recording()
tracing.start_span("y").end()
metrics.llm_call("w", "extract", False, 0.1)
metrics.http_request("GET", "/", 200, 0.01)
assert metrics.exposition() == b""
print("ok")
"""
    unused = """
from lightrag_pg.observe import metrics, tracing
with tracing.span("x") as s:
    assert not s.is_recording()
metrics.llm_call("w", "extract", False, 0.1)
import sys
assert "opentelemetry.trace" not in sys.modules and "prometheus_client" not in sys.modules
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", unused], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


async def test_prompts_and_answers_are_in_spans_only_when_asked(
    rag_factory: RagFactory, spans: InMemorySpanExporter
) -> None:
    rag = await rag_factory(trace_content=True)
    await rag.aquery_data(QUESTION)
    (call,) = named(spans.get_finished_spans(), "lightrag.llm")
    assert QUESTION in call.attributes["gen_ai.prompt"]
    assert "low_level_keywords" in call.attributes["gen_ai.completion"]
