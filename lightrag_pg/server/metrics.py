"""``/metrics`` (Prometheus text format) and the request-latency middleware.

The metrics come from :mod:`lightrag_pg.observe.metrics` (the optional
``prometheus-client``; without it ``/metrics`` answers 404 saying so). A scrape
reads the gauges first: documents by status of each open workspace (one
statement each, within :data:`SCRAPE_TIMEOUT` seconds in all; the tokens of its
calls not yet counted are counted then), its indexing
jobs waiting for the chunk scheduler, whether it is indexing, and the shared
pool's connections. ``/metrics`` needs the credentials other routes need unless
``WHITELIST_PATHS`` lists it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import LightRAGError
from ..observe import metrics
from .deps import ServerState, State
from .runtime import WorkspaceRuntime

log = logging.getLogger(__name__)

router = APIRouter(tags=["service"])

SCRAPE_TIMEOUT = 5.0
"""Seconds a scrape waits for the document counts of the open workspaces."""


class RequestMetrics:
    """Observe every HTTP request's latency by method, route (its path template; ``unmatched``
    for a path no route serves) and status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.kept = metrics.enable()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.kept:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            metrics.http_request(scope.get("method", "GET"), route, status, time.perf_counter() - started)


async def _document_counts(runtime: WorkspaceRuntime) -> dict[str, int]:
    """The workspace's documents by status; its calls waiting to be written are counted
    meanwhile, so the token metrics hold them."""
    await runtime.rag.usage_meter.count_pending()
    counts = await runtime.rag.aget_status_counts()
    return {k: v for k, v in counts.items() if k != "all"}


async def read_gauges(state: ServerState) -> None:
    """Set the gauges from the open workspaces and the shared pool."""
    runtimes = state.registry.opened()
    documents: dict[str, dict[str, int]] = {}
    if runtimes:
        found = await asyncio.wait_for(
            asyncio.gather(*(_document_counts(r) for r in runtimes), return_exceptions=True), SCRAPE_TIMEOUT
        )
        for runtime, counts in zip(runtimes, found, strict=True):
            if isinstance(counts, BaseException):
                log.warning("metrics: no document counts for workspace %s: %s", runtime.name, counts)
            else:
                documents[runtime.name] = counts
    waiting: dict[str, int] = {}
    pools: dict[str, dict[str, int]] = {}
    with contextlib.suppress(LightRAGError):  # not started yet
        pools["shared"] = state.registry.pool.connections()
        waiting = state.registry.pool.scheduler.waiting_by_owner()
    metrics.set_gauges(
        documents,
        {r.name: waiting.get(r.name, 0) for r in runtimes},
        {r.name: r.processing for r in runtimes},
        pools,
    )


@router.get("/metrics", include_in_schema=False)
async def metrics_route(state: State) -> Any:
    """The server's metrics in Prometheus's text format."""
    if not metrics.enable():
        return Response(
            "metrics need the prometheus-client package: pip install 'lightrag-pg[server]'\n",
            status_code=404,
            media_type="text/plain",
        )
    try:
        await read_gauges(state)
    except TimeoutError:
        log.warning("metrics: document counts took over %s s; gauges not refreshed", SCRAPE_TIMEOUT)
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
