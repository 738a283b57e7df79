"""The query pipeline: keywords → searches → merge and truncate → chunks → context → answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import Settings
from ..db.pool import WorkspacePool
from ..llm.cached import CachedLLM
from ..llm.embedding_func import EmbeddingFunc
from ..llm.memo import OpenMemo, QueryMemo
from ..llm.tokenizer import TokenEncoder
from ..llm.usage import UsageMeter, UsageScope, conversation_tokens, new_query_id, usage_scope
from ..observe.tracing import NO_SPAN, AttributeValue, SpanLike, activate, record_error, span, start_span
from ..store.rows import ChunkRow
from ..store.uow import session
from .answer_prompts import FAIL_RESPONSE, full_prompt, keywords_prompt
from .bounds import bounded_keywords, check_history, check_length, embeddable, leading_words
from .context import QueryContext, build_context, failure_data, render_data
from .keyword_plan import KeywordPlan, parse_keywords, predefined_keywords, resolve_keywords
from .knowledge import BYPASS_WITHOUT_LLM, EMPTY_WORKSPACE, offline_answer
from .param import QueryParam, clean_query
from .retrieve import retrieve_all

RerankFunc = Callable[[str, list[str], int], Awaitable[Sequence[Any]]]
KeywordFunc = Callable[[str], Awaitable[tuple[list[str], list[str]]]]


@dataclass
class Answer:
    """The outcome of retrieval for one query, before or after generation."""

    query: str
    param: QueryParam
    plan: KeywordPlan
    context: QueryContext | None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.plan.fail or self.context is None or self.context.is_empty

    @property
    def references(self) -> list[dict[str, str]]:
        return [] if self.context is None else list(self.context.references)


class QueryStream:
    """An async iterator of answer pieces; ``references`` are known before the first piece.

    Once the pieces are read, :meth:`usage` and :meth:`conversation_tokens` tell what the
    query's LLM and embedding calls used, and the query's span ends.
    """

    def __init__(
        self,
        answer: Answer,
        pieces: AsyncIterator[str],
        scope: UsageScope | None = None,
        query_span: SpanLike = NO_SPAN,
    ) -> None:
        self.answer = answer
        self.references = answer.references
        self.scope = scope
        self._pieces = _ending(pieces, scope, query_span)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._pieces

    @property
    def query_id(self) -> str | None:
        """The query's id in the workspace's ``usage`` table (None without accounting)."""
        return self.scope.query_id if self.scope is not None else None

    async def usage(self) -> dict[str, Any]:
        """The totals of the query's calls (:func:`~lightrag_pg.llm.usage.totals`), with its id."""
        if self.scope is None:
            return {}
        return {**(await self.scope.totals()), "query_id": self.scope.query_id}

    async def conversation_tokens(self) -> tuple[int, int]:
        """Input and output tokens of the query's LLM calls, a cached answer's included."""
        if self.scope is None:
            return 0, 0
        return conversation_tokens(await self.scope.counted())


async def _ending(
    pieces: AsyncIterator[str], scope: UsageScope | None, query_span: SpanLike
) -> AsyncIterator[str]:
    """``pieces``, then the end of the query's span (with the query's token counts)."""
    try:
        async for piece in pieces:
            yield piece
    except Exception as exc:  # not a reader that stopped early
        record_error(query_span, exc)
        raise
    finally:
        if scope is not None and query_span.is_recording():
            _usage_attributes(query_span, await scope.totals())
        query_span.end()


def _usage_attributes(target: SpanLike, usage: dict[str, Any]) -> None:
    for key in ("llm_calls", "cache_hits", "input_tokens", "output_tokens", "embed_tokens"):
        target.set_attribute(f"lightrag.usage.{key}", usage[key])


def _has_keywords(answer: str) -> bool:
    """Whether a keyword answer is worth caching: it parses to at least one keyword."""
    return parse_keywords(answer) != ([], [])


async def _one(text: str) -> AsyncIterator[str]:
    yield text


class QueryEngine:
    """Answers questions over one workspace; every dependency is passed in.

    With ``memo``, a question's vectors and context token counts are read from its
    memo when it holds them (and written back when any was computed), so
    ``embed`` and ``tokenizer`` are called only for what the memo lacks.
    """

    def __init__(
        self,
        pool: WorkspacePool,
        settings: Settings,
        tokenizer: TokenEncoder,
        embed: EmbeddingFunc,
        llm: CachedLLM | None,
        keyword_fallback: KeywordFunc,
        rerank: RerankFunc | None = None,
        memo: QueryMemo | None = None,
        meter: UsageMeter | None = None,
    ) -> None:
        self.pool = pool
        self.settings = settings
        self.tokenizer = tokenizer
        self.embed = embed
        self.llm = llm
        self.keyword_fallback = keyword_fallback
        self.rerank = rerank
        self.memo = memo
        self.meter = meter

    def _scope(self) -> UsageScope | None:
        """A new query's usage scope (None without a meter)."""
        return self.meter.scope(query_id=new_query_id()) if self.meter is not None else None

    def _attributes(self, param: QueryParam) -> dict[str, AttributeValue | None]:
        return {
            "lightrag.workspace": self.meter.workspace if self.meter is not None else None,
            "lightrag.mode": param.mode,
        }

    async def keywords(self, query: str, param: QueryParam) -> tuple[list[str], list[str]]:
        """High- and low-level keywords: given by the caller, from the LLM, or from NLP
        (which reads the question's first words); at most ``MAX_KEYWORDS`` of each."""
        given = predefined_keywords(param)
        with span("lightrag.keywords") as keywords_span:
            if given is not None:
                hl, ll = given
                keywords_span.set_attribute("lightrag.keywords.source", "given")
            elif self.llm is None:
                hl, ll = await self.keyword_fallback(leading_words(query))
                keywords_span.set_attribute("lightrag.keywords.source", "offline")
            else:
                prompt = keywords_prompt(query, self.settings.summary_language)
                answer = await self.llm(prompt, cache_type="keywords", mode=param.mode, accept=_has_keywords)
                hl, ll = parse_keywords(answer)
                keywords_span.set_attribute("lightrag.keywords.source", "llm")
            hl, ll = bounded_keywords(hl), bounded_keywords(ll)
            keywords_span.set_attribute("lightrag.keywords.high_level", len(hl))
            keywords_span.set_attribute("lightrag.keywords.low_level", len(ll))
        return hl, ll

    async def retrieve(self, query: str, param: QueryParam) -> Answer:
        """Run every stage up to the finished context (no answer generation)."""
        query = check_length(clean_query(query), self.settings.max_query_chars)
        check_history(param.conversation_history, self.settings.max_query_chars)
        param = param.resolved(self.settings)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        if param.mode == "bypass":
            plan = resolve_keywords([], [], mode="bypass", query=query)
            return Answer(query, param, plan, None, timings)
        searched = self._searched(query, param)
        lexical = leading_words(searched)
        vector_query = embeddable(searched, self.tokenizer, self.embed.max_token_size)
        memo = await self.memo.open(param.mode, vector_query) if self.memo is not None else None
        early = None
        if memo is not None and memo.vector(vector_query) is None:  # a new question: its
            early = asyncio.ensure_future(self.embed([vector_query]))  # model loads meanwhile
        try:
            hl, ll = await self.keywords(query, param) if param.mode != "naive" else ([], [])
            plan = resolve_keywords(hl, ll, mode=param.mode, query=query)
            timings["keywords"] = time.perf_counter() - started
            if plan.fail:
                return Answer(query, param, plan, None, timings)
            texts = [plan.ll_query, plan.hl_query, vector_query]
            vectors = await self._vectors(texts, memo, early)
        finally:
            if early is not None:
                await asyncio.gather(early, return_exceptions=True)
        timings["embed"] = time.perf_counter() - started
        threshold = float(param.cosine_threshold)  # type: ignore[arg-type]
        with span("lightrag.retrieve", {"lightrag.mode": param.mode}) as retrieve_span:
            async with session(self.pool) as s:
                found = await retrieve_all(
                    s, plan, vectors, param, threshold, rerank=self._reranks(param), query=lexical
                )
            retrieve_span.set_attribute("lightrag.entities", len(found.entities))
            retrieve_span.set_attribute("lightrag.relations", len(found.relations))
            retrieve_span.set_attribute("lightrag.chunks", len(found.chunks))
        timings["search"] = time.perf_counter() - started
        chunks = await self._rerank(query, found.chunks, param)
        with span("lightrag.context") as context_span:
            context = build_context(
                found.entities,
                found.relations,
                chunks,
                tokenizer=memo.counter(self.tokenizer) if memo is not None else self.tokenizer,
                param=param,
                query=query,
                found_entities=found.found_entities,
                found_relations=found.found_relations,
                merged_chunks=found.merged_chunks,
            )
            context_span.set_attribute("lightrag.entities", len(context.entities))
            context_span.set_attribute("lightrag.relations", len(context.relations))
            context_span.set_attribute("lightrag.chunks", len(context.chunks))
        if memo is not None:
            await memo.save()
        timings["context"] = time.perf_counter() - started
        return Answer(query, param, plan, context, timings)

    async def _vectors(
        self, texts: list[str], memo: OpenMemo | None, early: asyncio.Future[np.ndarray] | None
    ) -> np.ndarray:
        """The vectors of ``texts``: those the memo holds, the others embedded (the last
        text's may be under way already, as ``early``) and kept in the memo."""
        if memo is None:
            return await self.embed(texts)
        rows = [memo.vector(text) for text in texts]
        missing = [i for i, row in enumerate(rows) if row is None and not (early and i == len(texts) - 1)]
        if missing:
            embedded = await self.embed([texts[i] for i in missing])
            for i, row in zip(missing, embedded, strict=True):
                rows[i] = row
        if early is not None:
            rows[-1] = (await early)[0]
            missing.append(len(texts) - 1)
        vectors = np.vstack(rows)  # type: ignore[arg-type]
        memo.keep_vectors([texts[i] for i in missing], vectors[missing])
        return vectors

    def _searched(self, query: str, param: QueryParam) -> str:
        """The text the chunks are searched for: the last two user turns and the question."""
        history = [m["content"] for m in param.conversation_history if m.get("role") == "user"]
        return "\n".join([*history[-2:], query])

    def _reranks(self, param: QueryParam) -> bool:
        return bool(self.rerank and param.enable_rerank)

    async def _rerank(self, query: str, chunks: list[ChunkRow], param: QueryParam) -> list[ChunkRow]:
        if not (self._reranks(param) and chunks):
            return chunks
        assert self.rerank is not None
        results = await self.rerank(query, [c.content for c in chunks], param.chunk_top_k)
        order: list[tuple[float, int]] = []
        for item in results:
            index, score = (item["index"], item["relevance_score"]) if isinstance(item, dict) else item
            order.append((float(score), int(index)))
        order.sort(key=lambda p: -p[0])
        return [chunks[i] for _, i in order if 0 <= i < len(chunks)]

    async def data(self, query: str, param: QueryParam) -> dict[str, Any]:
        """Structured retrieval result (upstream's ``aquery_data`` shape); no answer generated.
        Its metadata holds the totals of the query's calls under ``usage``."""
        scope = self._scope()
        with (
            usage_scope(scope) if scope is not None else nullcontext(),
            span("lightrag.query", self._attributes(param)) as query_span,
        ):
            result = await self._data(query, param)
            if scope is not None:
                usage = await scope.totals()
                result.setdefault("metadata", {})["usage"] = {**usage, "query_id": scope.query_id}
                _usage_attributes(query_span, usage)
        return result

    async def _data(self, query: str, param: QueryParam) -> dict[str, Any]:
        answer = await self.retrieve(query, param)
        if answer.param.mode == "bypass":
            return failure_data("bypass", "Bypass mode retrieves nothing.")
        hl, ll = list(answer.plan.hl_keywords), list(answer.plan.ll_keywords)
        if answer.context is None:
            return failure_data(answer.param.mode, "Query returned empty dataset.", hl, ll)
        result = render_data(answer.context, hl_keywords=hl, ll_keywords=ll)
        result["metadata"]["timings_ms"] = {k: round(v * 1000, 2) for k, v in answer.timings.items()}
        return result

    async def text(self, query: str, param: QueryParam) -> str:
        """The answer text (or the context / prompt when the param asks for them)."""
        pieces = [p async for p in await self.stream(query, param)]
        return "".join(pieces)

    async def stream(self, query: str, param: QueryParam) -> QueryStream:
        """Retrieve, then stream the answer. The query's span and usage scope cover the
        answer too: they end when its last piece is read."""
        scope = self._scope()
        query_span = start_span("lightrag.query", self._attributes(param))
        try:
            with activate(query_span), usage_scope(scope) if scope is not None else nullcontext():
                answer, pieces = await self._stream(query, param)
        except BaseException as exc:
            record_error(query_span, exc)
            query_span.end()
            raise
        return QueryStream(answer, pieces, scope, query_span)

    async def _stream(self, query: str, param: QueryParam) -> tuple[Answer, AsyncIterator[str]]:
        answer = await self.retrieve(query, param)
        query, p = answer.query, answer.param
        if p.mode == "bypass":
            if self.llm is None:
                return answer, _one(BYPASS_WITHOUT_LLM)
            pieces = self.llm.stream(query, history=p.conversation_history, cache_type="query", mode="bypass")
            return answer, pieces
        if answer.failed or answer.context is None:
            async with session(self.pool) as s:
                empty = not await s.chunks.any()
            return answer, _one(EMPTY_WORKSPACE if empty else FAIL_RESPONSE)
        ctx = answer.context
        if p.only_need_context:
            return answer, _one(ctx.text)
        if p.only_need_prompt:
            return answer, _one(full_prompt(ctx.system_prompt, query))
        if self.llm is None:
            return answer, _one(await offline_answer(query, ctx, self.embed))
        pieces = self.llm.stream(
            query,
            system_prompt=ctx.system_prompt,
            history=p.conversation_history,
            cache_type="query",
            mode=p.mode,
        )
        return answer, pieces
