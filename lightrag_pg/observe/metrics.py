"""Prometheus metrics through the optional ``prometheus-client`` package.

The metrics live in prometheus-client's default registry, so an application that
exports it gets them too; the server serves them at ``/metrics`` (:func:`exposition`).
They are kept once :func:`enable` was called (the server does) or the application
imported ``prometheus_client`` itself; before that, and without the package, every
function here does nothing (and a short-lived command does not pay for the import).

* ``lightrag_pg_llm_calls_total{workspace,kind,cache}``: LLM and embedding calls by
  kind (extract, glean, summary, keywords, answer, embed), ``cache`` hit or miss;
* ``lightrag_pg_llm_tokens_total{workspace,kind,direction}``: their input and output tokens;
* ``lightrag_pg_llm_errors_total{workspace,kind}``: calls that failed;
* ``lightrag_pg_llm_call_seconds{kind}``: how long the calls that reached a model took;
* ``lightrag_pg_http_request_duration_seconds{method,route,status}``: server requests;
* ``lightrag_pg_documents{workspace,status}``, ``lightrag_pg_pipeline_queue_depth{workspace}``,
  ``lightrag_pg_pipeline_busy{workspace}``, ``lightrag_pg_pool_connections{pool,state}``:
  gauges the server sets when scraped (:func:`set_gauges`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_metrics: dict[str, Any] = {}
_enabled = False


def available() -> bool:
    """Whether ``prometheus-client`` is installed."""
    try:
        return importlib.util.find_spec("prometheus_client") is not None
    except (ImportError, ValueError):
        return False


def enable() -> bool:
    """Keep the metrics from now on (importing ``prometheus-client``); whether it is installed."""
    global _enabled
    _enabled = available()
    return _enabled


def _module() -> Any:
    """``prometheus_client`` when the metrics are kept, else None."""
    found = sys.modules.get("prometheus_client")
    if found is None and _enabled:
        found = importlib.import_module("prometheus_client")
    return found


def _get(name: str) -> Any:
    """The metric ``name``, created in the default registry on first use (None when not kept)."""
    prom = _module()
    if prom is None:
        return None
    metric = _metrics.get(name)
    if metric is None:
        metric = _metrics[name] = _create(prom, name)
    return metric


def _create(_prom: Any, name: str) -> Any:
    if name == "calls":
        return _prom.Counter(
            "lightrag_pg_llm_calls", "LLM and embedding calls by kind", ["workspace", "kind", "cache"]
        )
    if name == "tokens":
        return _prom.Counter(
            "lightrag_pg_llm_tokens", "Tokens of LLM and embedding calls", ["workspace", "kind", "direction"]
        )
    if name == "errors":
        return _prom.Counter(
            "lightrag_pg_llm_errors", "LLM and embedding calls that failed", ["workspace", "kind"]
        )
    if name == "seconds":
        return _prom.Histogram(
            "lightrag_pg_llm_call_seconds",
            "Duration of LLM and embedding calls that reached a model",
            ["kind"],
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
        )
    if name == "requests":
        return _prom.Histogram(
            "lightrag_pg_http_request_duration_seconds",
            "Server request latency by route and status",
            ["method", "route", "status"],
        )
    if name == "documents":
        return _prom.Gauge("lightrag_pg_documents", "Documents by status", ["workspace", "status"])
    if name == "queue":
        return _prom.Gauge(
            "lightrag_pg_pipeline_queue_depth",
            "Jobs of the workspace's indexing waiting for a slot of the chunk scheduler",
            ["workspace"],
        )
    if name == "busy":
        return _prom.Gauge(
            "lightrag_pg_pipeline_busy", "1 while the workspace's indexing pipeline runs", ["workspace"]
        )
    if name == "pool":
        return _prom.Gauge(
            "lightrag_pg_pool_connections", "Database pool connections by state", ["pool", "state"]
        )
    raise KeyError(name)


def llm_call(workspace: str, kind: str, cache_hit: bool, seconds: float | None = None) -> None:
    """Count one call of ``kind`` (and its duration when it reached a model)."""
    calls = _get("calls")
    if calls is None:
        return
    calls.labels(workspace, kind, "hit" if cache_hit else "miss").inc()
    if seconds is not None and not cache_hit:
        _get("seconds").labels(kind).observe(seconds)


def llm_tokens(workspace: str, kind: str, input_tokens: int, output_tokens: int) -> None:
    """Add the tokens of one call of ``kind``."""
    tokens = _get("tokens")
    if tokens is None:
        return
    if input_tokens:
        tokens.labels(workspace, kind, "input").inc(input_tokens)
    if output_tokens:
        tokens.labels(workspace, kind, "output").inc(output_tokens)


def llm_error(workspace: str, kind: str) -> None:
    """Count one failed call of ``kind``."""
    errors = _get("errors")
    if errors is not None:
        errors.labels(workspace, kind).inc()


def http_request(method: str, route: str, status: int, seconds: float) -> None:
    """Observe one server request."""
    requests = _get("requests")
    if requests is not None:
        requests.labels(method, route, str(status)).observe(seconds)


def set_gauges(
    documents: Mapping[str, Mapping[str, int]],
    queue: Mapping[str, int],
    busy: Mapping[str, bool],
    pools: Mapping[str, Mapping[str, int]],
) -> None:
    """Replace the gauges with a fresh reading: documents by workspace and status, jobs
    waiting and whether the pipeline runs by workspace, connections by pool and state."""
    if _module() is None:
        return
    readings: Iterable[tuple[str, Mapping[Any, Any], bool]] = (
        ("documents", documents, True),
        ("queue", queue, False),
        ("busy", busy, False),
        ("pool", pools, True),
    )
    for name, values, nested in readings:
        gauge = _get(name)
        gauge.clear()
        for key, value in values.items():
            if nested:
                for inner, count in value.items():
                    gauge.labels(key, inner).set(count)
            else:
                gauge.labels(key).set(float(value))


def exposition() -> bytes:
    """The default registry in Prometheus's text format (empty when the metrics are not kept)."""
    prom = _module()
    if prom is None:
        return b""
    data: bytes = prom.generate_latest(prom.REGISTRY)
    return data
