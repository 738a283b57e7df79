"""Token accounting: what each LLM and embedding call used, and where that is recorded.

A client that gets the provider's ``usage`` back reports it (:func:`report_usage`)
to the :func:`measuring` block its call runs in. :class:`~.cached.CachedLLM` and
:func:`metered_embedding` open one around every call and make a :class:`Usage`
of it: the provider's counts, or without them the texts, counted later with the
workspace's tokenizer (:meth:`UsageMeter.count`; long texts in a worker thread, so
the event loop does not wait for the tokenizer). A call answered from the LLM cache is recorded
too (``cache_hit``), with no tokens: nothing was sent to a model.

Each record goes to the :class:`UsageScope` its call runs in, if any: one document
being indexed (the pipeline writes its records with the document, in the
transaction that finishes it) or one query (whose totals the answer reports).
Every other record, a query's included, goes to the workspace's
:class:`UsageMeter`, which writes them in batches: at most :data:`FLUSH_SECONDS`
after the first waits, at once past :data:`FLUSH_ROWS`, and when the workspace
closes. Each record also counts in the Prometheus metrics
(:mod:`lightrag_pg.observe.metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import inspect
import itertools
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from ..observe import metrics
from ..observe.tracing import AttributeValue, SpanLike, span
from .embedding_func import EmbeddingFunc

log = logging.getLogger(__name__)

Kind = Literal["extract", "glean", "summary", "keywords", "answer", "embed"]
KINDS: tuple[Kind, ...] = ("extract", "glean", "summary", "keywords", "answer", "embed")
LLM_KINDS: tuple[Kind, ...] = KINDS[:-1]
KIND_OF_CACHE_TYPE: dict[str, Kind] = {
    "extract": "extract",
    "summary": "summary",
    "keywords": "keywords",
    "query": "answer",
}
"""The kind of a call made under an LLM cache type (the query answer's is ``query``)."""

FLUSH_SECONDS = 10.0
"""At most this long between a record reaching the meter and its write."""
FLUSH_ROWS = 500
"""Records written per statement; this many waiting are written at once."""
MAX_PENDING = 100_000
"""Records kept while the database cannot take them; the oldest go beyond."""
INLINE_CHARS = 4096
"""Texts up to this many characters (in all) are counted on the event loop: a worker
thread would cost more."""

Counter = Callable[[str], int]


@dataclass(slots=True)
class Measured:
    """What providers reported for the calls made inside one :func:`measuring` block."""

    reports: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    model: str | None = None

    def add(self, input_tokens: int, output_tokens: int, cached_input_tokens: int, model: str | None) -> None:
        """Add one provider report."""
        self.reports += 1
        self.input_tokens += max(int(input_tokens), 0)
        self.output_tokens += max(int(output_tokens), 0)
        self.cached_input_tokens += max(int(cached_input_tokens), 0)
        self.model = model or self.model


_MEASURED: contextvars.ContextVar[Measured | None] = contextvars.ContextVar("llm_usage_slot", default=None)


@contextmanager
def measuring() -> Iterator[Measured]:
    """A block whose calls report their provider usage to the :class:`Measured` it yields
    (tasks the block starts report to it too)."""
    measured = Measured()
    token = _MEASURED.set(measured)
    try:
        yield measured
    finally:
        _MEASURED.reset(token)


def current_measured() -> Measured | None:
    """The :class:`Measured` of the running :func:`measuring` block, if any."""
    return _MEASURED.get()


def report_usage(
    input_tokens: int | None,
    output_tokens: int | None = 0,
    cached_input_tokens: int | None = 0,
    model: str | None = None,
    *,
    to: Measured | None = None,
) -> None:
    """Report a provider's ``usage`` of one call to ``to`` or the running :func:`measuring`
    block (nothing happens outside one, or without an input count)."""
    measured = to if to is not None else _MEASURED.get()
    if measured is not None and input_tokens is not None:
        measured.add(input_tokens, output_tokens or 0, cached_input_tokens or 0, model)


@dataclass(slots=True, eq=False)
class Usage:
    """One LLM or embedding call: its kind, model, tokens, whether the LLM cache answered
    it, how long it took and when it ended. Tokens are ``None`` until counted: the
    texts to count are kept until then (``texts``, the input; ``answer``, the output)."""

    kind: str
    model: str
    cache_hit: bool
    seconds: float
    at: datetime
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int = 0
    counted_by: Literal["provider", "tokenizer", "none"] = "tokenizer"
    texts: tuple[str, ...] = ()
    answer: str = ""
    doc_id: str | None = None
    query_id: str | None = None
    observed: bool = field(default=False, repr=False)

    @property
    def chars(self) -> int:
        """Characters still to count."""
        return sum(len(t) for t in self.texts) + len(self.answer)

    @property
    def counted(self) -> bool:
        """Whether both token counts are known."""
        return self.input_tokens is not None and self.output_tokens is not None

    def count(self, counter: Counter) -> None:
        """Count the tokens still unknown with ``counter``."""
        if self.input_tokens is None:
            self.input_tokens = sum(counter(text) for text in self.texts if text)
        if self.output_tokens is None:
            self.output_tokens = counter(self.answer) if self.answer else 0

    def measured_by(self, measured: Measured | None) -> Usage:
        """This record with the provider's counts, when it reported any."""
        if measured is not None and measured.reports:
            self.input_tokens, self.output_tokens = measured.input_tokens, measured.output_tokens
            self.cached_input_tokens = measured.cached_input_tokens
            self.counted_by = "provider"
            self.model = measured.model or self.model
            self.texts, self.answer = (), ""
        return self


def llm_usage(
    kind: str,
    model: str,
    started: float,
    texts: Sequence[str],
    answer: str,
    *,
    cache_hit: bool,
    measured: Measured | None = None,
) -> Usage:
    """The record of one LLM call that began at ``started`` (``time.perf_counter()``); a
    cache hit sent nothing to a model: no tokens, nothing to count."""
    usage = Usage(
        kind=kind, model=model, cache_hit=cache_hit, seconds=time.perf_counter() - started, at=_now()
    )
    if cache_hit:
        usage.input_tokens, usage.output_tokens, usage.counted_by = 0, 0, "none"
        return usage
    usage.texts, usage.answer = tuple(texts), answer
    return usage.measured_by(measured)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def totals(records: Sequence[Usage]) -> dict[str, Any]:
    """What ``records`` (counted) add up to: the LLM calls that reached a model and their
    tokens, the calls the cache answered (no tokens: they cost nothing), the embedding
    calls and tokens, and the same by kind."""
    by_kind: dict[str, dict[str, int]] = {}
    for r in records:
        row = by_kind.setdefault(r.kind, {"calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0})
        if r.cache_hit:
            row["cache_hits"] += 1
            continue
        row["calls"] += 1
        row["input_tokens"] += r.input_tokens or 0
        row["output_tokens"] += r.output_tokens or 0
    llm = [row for kind, row in by_kind.items() if kind != "embed"]
    embed = by_kind.get("embed", {})
    return {
        "llm_calls": sum(row["calls"] for row in llm),
        "cache_hits": sum(row["cache_hits"] for row in llm),
        "input_tokens": sum(row["input_tokens"] for row in llm),
        "output_tokens": sum(row["output_tokens"] for row in llm),
        "cached_input_tokens": sum(r.cached_input_tokens for r in records if not r.cache_hit),
        "embed_calls": embed.get("calls", 0),
        "embed_tokens": embed.get("input_tokens", 0),
        "by_kind": {kind: by_kind[kind] for kind in KINDS if kind in by_kind},
    }


def conversation_tokens(records: Sequence[Usage]) -> tuple[int, int]:
    """Input and output tokens of the LLM calls in ``records`` (counted)."""
    llm = [r for r in records if r.kind != "embed"]
    return sum(r.input_tokens or 0 for r in llm), sum(r.output_tokens or 0 for r in llm)


class UsageSink(Protocol):
    """Where a workspace's records are written (the workspace's ``usage`` table)."""

    async def write(self, records: Sequence[Usage]) -> None:
        """Store ``records`` (counted), in one statement."""
        ...


@dataclass(eq=False)
class UsageScope:
    """The calls of one document being indexed (``doc_id``) or of one query (``query_id``).

    A document's scope ``holds`` its records: the pipeline writes them with the
    document; a query's records are kept for its totals and written by the meter.
    """

    meter: UsageMeter
    doc_id: str | None = None
    query_id: str | None = None
    holds: bool = False
    records: list[Usage] = field(default_factory=list)

    async def counted(self) -> list[Usage]:
        """The records, every one counted."""
        await self.meter.count(self.records)
        return list(self.records)

    async def totals(self) -> dict[str, Any]:
        """:func:`totals` of the records."""
        return totals(await self.counted())


_QUERY_PREFIX = os.urandom(6).hex()
_QUERY_NUMBERS = itertools.count(1)


def new_query_id() -> str:
    """A query id unique across processes (a random prefix per process, then a counter)."""
    return f"{_QUERY_PREFIX}-{next(_QUERY_NUMBERS):x}"


_SCOPE: contextvars.ContextVar[UsageScope | None] = contextvars.ContextVar("llm_usage_scope", default=None)


@contextmanager
def usage_scope(scope: UsageScope) -> Iterator[UsageScope]:
    """The calls made in the block (and the tasks it starts) are ``scope``'s."""
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current_scope() -> UsageScope | None:
    """The scope of the running block, if any."""
    return _SCOPE.get()


class UsageMeter:
    """Where the calls of one workspace are recorded; see the module docstring.

    ``count`` counts a text's tokens (the workspace tokenizer's); ``sink`` writes
    records (``None``: they are only counted in the metrics and scopes).
    """

    def __init__(
        self,
        workspace: str,
        count: Counter,
        sink: UsageSink | None,
        *,
        llm_model: str = "custom",
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        self.workspace = workspace
        self.counter = count
        self.sink = sink
        self.llm_model = llm_model
        self.flush_seconds = flush_seconds
        self._pending: list[Usage] = []
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Future[None] | None = None
        self._counting: asyncio.Lock | None = None

    def scope(self, *, doc_id: str | None = None, query_id: str | None = None) -> UsageScope:
        """A new scope of this workspace: a document's holds its records."""
        return UsageScope(self, doc_id=doc_id, query_id=query_id, holds=doc_id is not None)

    def record(
        self, usage: Usage, scope: UsageScope | None = None, call_span: SpanLike | None = None
    ) -> None:
        """Take one call's record: into ``scope`` (default: the running one, if it is this
        workspace's) and, unless that scope holds its records, to be written."""
        scope = scope if scope is not None else _SCOPE.get()
        if scope is not None and scope.meter is not self:
            scope = None
        metrics.llm_call(self.workspace, usage.kind, usage.cache_hit, usage.seconds)
        if usage.counted:
            self._observe(usage, call_span)
        if scope is not None:
            usage.doc_id, usage.query_id = scope.doc_id, scope.query_id
            scope.records.append(usage)
            if scope.holds:
                return
        self._pending.append(usage)
        self._schedule()

    def error(self, kind: str) -> None:
        """Count one failed call of ``kind``."""
        metrics.llm_error(self.workspace, kind)

    def _observe(self, usage: Usage, call_span: SpanLike | None = None) -> None:
        if usage.observed:
            return
        usage.observed = True
        metrics.llm_tokens(self.workspace, usage.kind, usage.input_tokens or 0, usage.output_tokens or 0)
        if call_span is not None:
            call_span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens or 0)
            call_span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens or 0)

    async def count(self, records: Sequence[Usage], call_span: SpanLike | None = None) -> None:
        """Count the tokens of the ``records`` not counted yet: in a worker thread, unless
        their texts are short (:data:`INLINE_CHARS`), which costs less than the thread."""
        waiting = [r for r in records if not r.counted]
        if waiting:
            if sum(r.chars for r in waiting) <= INLINE_CHARS:
                self._count_all(waiting)
            else:
                if self._counting is None:
                    self._counting = asyncio.Lock()
                async with self._counting:
                    waiting = [r for r in waiting if not r.counted]
                    await asyncio.to_thread(self._count_all, waiting)
            for r in waiting:
                r.texts, r.answer = (), ""
        for r in records:
            self._observe(r, call_span)

    def _count_all(self, records: Sequence[Usage]) -> None:
        for r in records:
            r.count(self.counter)

    async def count_pending(self) -> None:
        """Count the tokens of the records waiting to be written (so the metrics have them)."""
        await self.count(list(self._pending))

    def adopt(self, scope: UsageScope) -> None:
        """Take the records ``scope`` still holds (its document was not finished) to be written."""
        if scope.records:
            self._pending.extend(scope.records)
            scope.records.clear()
            self._schedule()

    def _schedule(self) -> None:
        if len(self._pending) > MAX_PENDING:
            dropped = len(self._pending) - MAX_PENDING
            del self._pending[:dropped]
            log.warning(
                "workspace %s: %d usage records dropped (not written in time)", self.workspace, dropped
            )
        if self.sink is None:
            self._pending.clear()
            return
        if self._flushing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        full = len(self._pending) >= FLUSH_ROWS
        if self._timer is not None:
            if not full:
                return
            self._timer.cancel()
        self._timer = loop.call_later(0 if full else self.flush_seconds, self._start_flush)

    def _start_flush(self) -> None:
        self._timer = None
        if self._pending:
            self._flushing = asyncio.ensure_future(self._flush_batch())
            self._flushing.add_done_callback(self._flushed)

    def _flushed(self, done: asyncio.Future[None]) -> None:
        self._flushing = None
        if not done.cancelled() and done.exception() is not None:
            log.warning(
                "workspace %s: usage records not written (retried in %g s): %s",
                self.workspace,
                self.flush_seconds,
                done.exception(),
            )
            self._retry()
        elif self._pending:
            self._schedule()

    def _retry(self) -> None:
        """Write the records put back after a failed write, in :attr:`flush_seconds`."""
        if self._timer is None and self._pending:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                self._timer = asyncio.get_running_loop().call_later(self.flush_seconds, self._start_flush)

    async def _flush_batch(self) -> None:
        batch = self._pending[:FLUSH_ROWS]
        del self._pending[: len(batch)]
        try:
            await self.count(batch)
            assert self.sink is not None
            await self.sink.write(batch)
        except BaseException:
            self._pending[:0] = batch  # written with the next batch
            raise

    async def flush(self) -> None:
        """Write every record waiting (a statement per :data:`FLUSH_ROWS`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        running = self._flushing
        if running is not None and running.get_loop() is asyncio.get_running_loop():
            await asyncio.gather(running, return_exceptions=True)
        self._flushing = None
        while self._pending and self.sink is not None:
            await self._flush_batch()

    def discard(self) -> None:
        """Forget the records waiting (their workspace is gone)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending.clear()

    async def close(self) -> None:
        """Write what is waiting; a failure is logged and the records dropped."""
        try:
            await self.flush()
        except Exception as exc:
            log.warning("workspace %s: %d usage records lost: %s", self.workspace, len(self._pending), exc)
        self._pending.clear()


def metered_embedding(embed: EmbeddingFunc, meter: UsageMeter) -> EmbeddingFunc:
    """``embed`` whose calls are recorded by ``meter`` (kind ``embed``), each in a span."""
    inner = embed.func

    async def func(texts: list[str]) -> Any:
        started = time.perf_counter()
        attributes: dict[str, AttributeValue] = {
            "lightrag.workspace": meter.workspace,
            "lightrag.kind": "embed",
            "gen_ai.operation.name": "embeddings",
            "gen_ai.request.model": embed.model_name,
            "lightrag.texts": len(texts),
        }
        with span("lightrag.embed", attributes) as call_span, measuring() as measured:
            try:
                vectors = inner(texts)
                if inspect.isawaitable(vectors):
                    vectors = await vectors
            except Exception:
                meter.error("embed")
                raise
            usage = Usage(
                kind="embed",
                model=embed.model_name,
                cache_hit=False,
                seconds=time.perf_counter() - started,
                at=datetime.now(timezone.utc),
                output_tokens=0,
                texts=tuple(texts),
            ).measured_by(measured)
            usage.output_tokens = 0
            if not usage.counted and call_span.is_recording():
                await meter.count([usage], call_span)
            meter.record(usage, call_span=call_span)
        return vectors

    return dataclasses.replace(embed, func=func)
