"""OpenTelemetry spans through the optional ``opentelemetry-api`` package.

Spans are made once the application has imported ``opentelemetry.trace`` (which
configuring a tracer provider, or running under ``opentelemetry-instrument``,
does); they go to the provider it configured (none: the API's own no-op spans).
Before that, and without the package, every :func:`span` is a no-op object and
nothing is imported. Spans carry counts, names of stages, the workspace and the
query mode, never document or question text.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

TRACER_NAME = "lightrag_pg"

AttributeValue = str | bool | int | float


class SpanLike(Protocol):
    """The part of an OpenTelemetry span that lightrag_pg uses."""

    def set_attribute(self, key: str, value: AttributeValue) -> None: ...

    def add_event(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None: ...

    def is_recording(self) -> bool: ...

    def end(self, end_time: int | None = None) -> None: ...


class _NoSpan:
    """The span when ``opentelemetry-api`` is not installed."""

    __slots__ = ()

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        pass

    def add_event(self, name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None:
        pass

    def is_recording(self) -> bool:
        return False

    def end(self, end_time: int | None = None) -> None:
        pass


NO_SPAN: SpanLike = _NoSpan()

_tracer: Any = None


def available() -> bool:
    """Whether ``opentelemetry-api`` is installed."""
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):
        return False


def _api() -> Any:
    """The ``opentelemetry.trace`` module once the application imported it, else None."""
    return sys.modules.get("opentelemetry.trace")


def _get_tracer(api: Any) -> Any:
    global _tracer
    if _tracer is None:
        _tracer = api.get_tracer(TRACER_NAME)  # a proxy until a provider is set
    return _tracer


@contextmanager
def span(name: str, attributes: Mapping[str, AttributeValue | None] | None = None) -> Iterator[SpanLike]:
    """A span named ``name`` around the block, child of the current one; ``attributes``
    with a ``None`` value are left out. Exceptions leaving the block are recorded on it."""
    api = _api()
    if api is None:
        yield NO_SPAN
        return
    attrs = {k: v for k, v in attributes.items() if v is not None} if attributes else None
    with _get_tracer(api).start_as_current_span(name, attributes=attrs) as current:
        yield current


def start_span(name: str, attributes: Mapping[str, AttributeValue | None] | None = None) -> SpanLike:
    """A span child of the current one that is not made current: the caller ends it
    (:meth:`SpanLike.end`), for work that outlives the block that starts it (a stream)."""
    api = _api()
    if api is None:
        return NO_SPAN
    attrs = {k: v for k, v in attributes.items() if v is not None} if attributes else None
    started: SpanLike = _get_tracer(api).start_span(name, attributes=attrs)
    return started


@contextmanager
def activate(started: SpanLike) -> Iterator[SpanLike]:
    """``started`` (of :func:`start_span`) is the current span in the block, which does
    not end it; an exception leaving the block is recorded on it."""
    api = _api()
    if api is None or started is NO_SPAN:
        yield started
        return
    with api.use_span(started, end_on_exit=False):
        yield started


def record_error(target: SpanLike, exc: BaseException) -> None:
    """Record ``exc`` on ``target`` and mark it failed."""
    api = _api()
    if api is None or target is NO_SPAN:
        return
    record = getattr(target, "record_exception", None)
    if record is not None:
        record(exc)
        target.set_status(api.Status(api.StatusCode.ERROR, str(exc)[:200]))  # type: ignore[attr-defined]


def current_span() -> SpanLike:
    """The span of the running block (a no-op one outside any)."""
    api = _api()
    if api is None:
        return NO_SPAN
    span_now: SpanLike = api.get_current_span()
    return span_now
