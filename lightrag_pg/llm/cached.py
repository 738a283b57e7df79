"""LLM calls that go through an answer cache."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import LLMTimeout
from ..observe.tracing import AttributeValue, SpanLike, record_error, span, start_span
from ..textclean import scrub_text
from .usage import (
    KIND_OF_CACHE_TYPE,
    Measured,
    UsageMeter,
    UsageScope,
    current_scope,
    llm_usage,
    measuring,
)
from .wrap import LLMFunc, describe_llm


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """One answer to store: its key, the answer and the fields kept with it."""

    key: str
    response: str
    cache_type: str
    mode: str
    prompt: str
    chunk_id: str | None = None


class AnswerCache(Protocol):
    """Where answers are kept between calls (the workspace's ``llm_cache``)."""

    async def get(self, key: str) -> str | None:
        """The answer stored under ``key``, if any."""
        ...

    async def put(
        self, key: str, response: str, *, cache_type: str, mode: str, prompt: str, chunk_id: str | None
    ) -> None:
        """Store ``response`` under ``key`` (replacing an older one)."""
        ...

    async def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The answers stored under any of ``keys``, by key, in one round trip."""
        ...

    async def put_many(self, answers: Sequence[CachedAnswer]) -> None:
        """Store ``answers`` (distinct keys) in one round trip."""
        ...


class _Batch:
    """The cache traffic of one :meth:`CachedLLM.batched` block.

    Look-ups made in the same turn of the event loop wait for one ``get_many``;
    answers are kept and written by one ``put_many`` when the block ends.
    """

    def __init__(self, cache: AnswerCache) -> None:
        self.cache = cache
        self.writes: dict[str, CachedAnswer] = {}
        self._waiting: dict[str, list[asyncio.Future[str | None]]] = {}
        self._fetches: set[asyncio.Task[None]] = set()

    async def get(self, key: str) -> str | None:
        if key in self.writes:
            return self.writes[key].response
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        if not self._waiting:
            loop.call_soon(self._fetch_waiting)
        self._waiting.setdefault(key, []).append(future)
        return await future

    def _fetch_waiting(self) -> None:
        waiting, self._waiting = self._waiting, {}
        task = asyncio.ensure_future(self._fetch(waiting))
        self._fetches.add(task)
        task.add_done_callback(self._fetches.discard)

    async def _fetch(self, waiting: dict[str, list[asyncio.Future[str | None]]]) -> None:
        try:
            found = await self.cache.get_many(list(waiting))
        except BaseException as exc:  # handed to every waiter, who raises it
            for futures in waiting.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc)
            return
        for key, futures in waiting.items():
            for future in futures:
                if not future.done():
                    future.set_result(found.get(key))

    async def close(self) -> None:
        """Stop look-ups still running (the block failed) and write the kept answers."""
        for task in list(self._fetches):
            task.cancel()
        await asyncio.gather(*self._fetches, return_exceptions=True)
        if self.writes:
            await self.cache.put_many(list(self.writes.values()))


_BATCH: contextvars.ContextVar[_Batch | None] = contextvars.ContextVar("llm_cache_batch", default=None)


TRACED_CHARS = 20_000
"""Characters of a prompt or an answer a span carries with ``trace_content``."""


def cache_key(cache_type: str, mode: str, *parts: str) -> str:
    """A stable key for a prompt: ``type:mode:md5(parts)``."""
    digest = hashlib.md5("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{cache_type}:{mode}:{digest}"


@dataclass(frozen=True, slots=True)
class CachedLLM:
    """The one way LLM calls are made: cached, cleaned, bounded in time and accounted.

    ``cache=None`` turns caching off. The cache is expected to use its own
    short statements: a cached call never runs inside, or holds locks of, a
    merge transaction. Every answer passes :func:`~lightrag_pg.textclean.scrub_text` before it is
    cached or returned. ``deadline`` (seconds, ``None``: none) bounds one
    call of ``func`` including its retries; when it passes,
    :class:`~lightrag_pg.errors.LLMTimeout` names the model and endpoint.
    ``meter`` (optional) records every call, a cached answer included
    (:mod:`~lightrag_pg.llm.usage`), and each call is a span; with
    ``trace_content`` a recording span also carries the prompt and the answer
    (``gen_ai.prompt``, ``gen_ai.completion``, each cut to :data:`TRACED_CHARS`).
    """

    func: LLMFunc
    cache: AnswerCache | None
    deadline: float | None = None
    meter: UsageMeter | None = None
    trace_content: bool = False

    async def __call__(
        self,
        prompt: str,
        *,
        system_prompt: str | None = None,
        history: Sequence[Mapping[str, Any]] = (),
        cache_type: str,
        mode: str = "default",
        chunk_id: str | None = None,
        accept: Callable[[str], bool] | None = None,
        kind: str | None = None,
        **kwargs: Any,
    ) -> str:
        """Answer ``prompt``, from the cache when the same call was answered before.

        ``accept`` (optional) tells a usable answer: an answer it rejects is
        returned but not cached, and a cached answer it rejects is asked again.
        ``kind`` names the call in the accounting (default: after ``cache_type``,
        see :data:`~lightrag_pg.llm.usage.KIND_OF_CACHE_TYPE`); it is not part of the key.
        """
        kind = _kind(kind, cache_type)
        key = self.key(prompt, system_prompt, history, cache_type, mode)
        started = time.perf_counter()
        with span("lightrag.llm", self._attributes(kind, mode)) as call_span:
            hit = await self.lookup(key)
            if hit is not None and (accept is None or accept(hit)):
                await self._record(kind, started, (system_prompt, history, prompt), hit, call_span, None)
                return hit
            with measuring() as measured:
                try:
                    answer = await self._ask(prompt, system_prompt, history, **kwargs)
                except Exception:
                    if self.meter is not None:
                        self.meter.error(kind)
                    raise
            if not isinstance(answer, str):
                raise TypeError("the LLM function returned a stream where text was expected")
            answer = scrub_text(answer)
            if accept is None or accept(answer):
                await self.store(
                    key, answer, cache_type=cache_type, mode=mode, prompt=prompt, chunk_id=chunk_id
                )
            await self._record(kind, started, (system_prompt, history, prompt), answer, call_span, measured)
        return answer

    def stream(
        self,
        prompt: str,
        *,
        system_prompt: str | None = None,
        history: Sequence[Mapping[str, Any]] = (),
        cache_type: str,
        mode: str = "default",
        kind: str | None = None,
    ) -> AsyncIterator[str]:
        """Answer ``prompt`` piece by piece; the whole answer is cached once complete.

        The call is recorded in the usage scope and under the span current when this is
        called (the pieces may be read elsewhere), once the answer is complete.
        """
        kind = _kind(kind, cache_type)
        call_span = start_span("lightrag.llm", self._attributes(kind, mode))
        return self._stream(
            prompt, system_prompt, history, cache_type, mode, kind, current_scope(), call_span
        )

    async def _stream(
        self,
        prompt: str,
        system_prompt: str | None,
        history: Sequence[Mapping[str, Any]],
        cache_type: str,
        mode: str,
        kind: str,
        scope: UsageScope | None,
        call_span: SpanLike,
    ) -> AsyncIterator[str]:
        started = time.perf_counter()
        texts = (system_prompt, history, prompt)
        try:
            key = self.key(prompt, system_prompt, history, cache_type, mode)
            hit = await self.lookup(key)
            if hit is not None:
                yield hit
                await self._record(kind, started, texts, hit, call_span, None, scope)
                return
            with measuring() as measured:
                try:
                    result = await self._ask(prompt, system_prompt, history, stream=True)
                except Exception:
                    if self.meter is not None:
                        self.meter.error(kind)
                    raise
            pieces: list[str] = []
            if isinstance(result, str):
                pieces.append(scrub_text(result))
                yield pieces[-1]
            else:
                async for piece in result:
                    pieces.append(scrub_text(piece))
                    yield pieces[-1]
            answer = "".join(pieces)
            await self.store(key, answer, cache_type=cache_type, mode=mode, prompt=prompt)
            await self._record(kind, started, texts, answer, call_span, measured, scope)
        except Exception as exc:  # not a reader that stopped early
            record_error(call_span, exc)
            raise
        finally:
            call_span.end()

    def _attributes(self, kind: str, mode: str) -> dict[str, AttributeValue | None]:
        return {
            "lightrag.workspace": self.meter.workspace if self.meter is not None else None,
            "lightrag.kind": kind,
            "lightrag.mode": mode,
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": self.meter.llm_model if self.meter is not None else None,
        }

    async def _record(
        self,
        kind: str,
        started: float,
        asked: tuple[str | None, Sequence[Mapping[str, Any]], str],
        answer: str,
        call_span: SpanLike,
        measured: Measured | None,
        scope: UsageScope | None = None,
    ) -> None:
        """Record the call with ``self.meter`` (its tokens counted now only for a recording span)."""
        call_span.set_attribute("lightrag.cache_hit", measured is None)
        system_prompt, history, prompt = asked
        if self.trace_content and call_span.is_recording():
            call_span.set_attribute("gen_ai.prompt", prompt[:TRACED_CHARS])
            call_span.set_attribute("gen_ai.completion", answer[:TRACED_CHARS])
        if self.meter is None:
            return
        texts = [system_prompt or "", *(str(m.get("content", "")) for m in history), prompt]
        usage = llm_usage(
            kind, self.meter.llm_model, started, texts, answer, cache_hit=measured is None, measured=measured
        )
        if not usage.counted and call_span.is_recording():
            await self.meter.count([usage], call_span)
        self.meter.record(usage, scope, call_span)

    async def _ask(
        self, prompt: str, system_prompt: str | None, history: Sequence[Mapping[str, Any]], **kwargs: Any
    ) -> str | AsyncIterator[str]:
        """Call ``func`` within the deadline (for a stream: until it starts answering)."""
        scope = asyncio.timeout(self.deadline)
        try:
            async with scope:
                return await self.func(
                    prompt, system_prompt=system_prompt, history_messages=list(history), **kwargs
                )
        except TimeoutError as exc:
            if not scope.expired():
                raise
            raise LLMTimeout(
                f"LLM call to {describe_llm(self.func)} gave no answer within {self.deadline:g} s "
                "(llm_deadline, retries included)"
            ) from exc

    @staticmethod
    def key(
        prompt: str,
        system_prompt: str | None,
        history: Sequence[Mapping[str, Any]],
        cache_type: str,
        mode: str,
    ) -> str:
        """The cache key of a call: everything the model sees."""
        return cache_key(
            cache_type, mode, system_prompt or "", json.dumps(list(history), sort_keys=True), prompt
        )

    @asynccontextmanager
    async def batched(self) -> AsyncIterator[None]:
        """Batch the cache traffic of the block (and of the tasks it starts).

        Look-ups made together (in one turn of the event loop, as concurrent
        calls do) are sent as one statement; answers are kept and written in
        one statement when the block ends, also when it fails, so a retry does
        not pay for them again. A look-up of a key answered earlier in the block
        is served from what the block keeps. Without a cache this does nothing.
        """
        if self.cache is None or self._batch() is not None:
            yield
            return
        batch = _Batch(self.cache)
        token = _BATCH.set(batch)
        try:
            yield
        finally:
            _BATCH.reset(token)
            await batch.close()

    def _batch(self) -> _Batch | None:
        batch = _BATCH.get()
        return batch if batch is not None and batch.cache is self.cache else None

    async def lookup(self, key: str) -> str | None:
        """The cached answer for ``key`` (None when absent or caching is off)."""
        if self.cache is None:
            return None
        batch = self._batch()
        if batch is not None:
            return await batch.get(key)
        return await self.cache.get(key)

    async def store(
        self,
        key: str,
        answer: str,
        *,
        cache_type: str,
        mode: str,
        prompt: str,
        chunk_id: str | None = None,
    ) -> None:
        """Cache ``answer`` under ``key`` (no-op when caching is off); inside
        :meth:`batched`, when the block ends."""
        batch = self._batch()
        if batch is not None:
            batch.writes[key] = CachedAnswer(key, answer, cache_type, mode, prompt, chunk_id)
        elif self.cache is not None:
            await self.cache.put(
                key, answer, cache_type=cache_type, mode=mode, prompt=prompt, chunk_id=chunk_id
            )


def _kind(kind: str | None, cache_type: str) -> str:
    if kind:
        return kind
    return KIND_OF_CACHE_TYPE.get(cache_type, cache_type)


Keywords = tuple[list[str], list[str]]
"""High-level and low-level keywords of a query."""


@dataclass(frozen=True, slots=True)
class CachedKeywords:
    """Query keywords from a local function (the offline extractor), cached like LLM answers.

    ``func`` runs in a worker thread, and only on a cache miss, so a repeated
    question never loads the model behind it. ``version`` names the function's
    rule: it is part of the key, so a new rule does not read the old answers.
    ``cache=None`` turns caching off.
    """

    func: Callable[[str], Keywords]
    cache: AnswerCache | None
    version: str

    async def __call__(self, query: str) -> Keywords:
        """The high- and low-level keywords of ``query``."""
        key = cache_key("keywords", "default", "offline", self.version, query)
        hit = await self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            found = _keywords(hit)
            if found is not None:
                return found
        hl, ll = await asyncio.to_thread(self.func, query)
        if self.cache is not None:
            answer = json.dumps({"high_level_keywords": hl, "low_level_keywords": ll}, ensure_ascii=False)
            await self.cache.put(
                key, answer, cache_type="keywords", mode="default", prompt=query, chunk_id=None
            )
        return hl, ll


def _keywords(answer: str) -> Keywords | None:
    """Keywords stored by :class:`CachedKeywords`, or None if ``answer`` is not such an entry."""
    try:
        data = json.loads(answer)
        hl, ll = data["high_level_keywords"], data["low_level_keywords"]
    except (ValueError, TypeError, KeyError):
        return None
    if not all(isinstance(k, list) and all(isinstance(w, str) for w in k) for k in (hl, ll)):
        return None
    return list(hl), list(ll)
