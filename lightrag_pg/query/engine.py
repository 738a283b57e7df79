"""The query pipeline: keywords → searches → merge and truncate → chunks → context → answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import numpy as np

from ..config import Settings
from ..llm.cached import CachedLLM
from ..llm.embedding_func import EmbeddingFunc
from ..llm.memo import OpenMemo, QueryMemo
from ..llm.tokenizer import TokenEncoder
from ..store.rows import ChunkRow
from ..store.uow import session
from .answer_prompts import FAIL_RESPONSE, full_prompt, keywords_prompt
from .bounds import bounded_keywords, check_history, check_length, embeddable, leading_words
from .context import QueryContext, build_context, failure_data, render_data
from .keyword_plan import KeywordPlan, parse_keywords, predefined_keywords, resolve_keywords
from .knowledge import BYPASS_WITHOUT_LLM, format_knowledge
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
    """An async iterator of answer pieces; ``references`` are known before the first piece."""

    def __init__(self, answer: Answer, pieces: AsyncIterator[str]) -> None:
        self.answer = answer
        self.references = answer.references
        self._pieces = pieces

    def __aiter__(self) -> AsyncIterator[str]:
        return self._pieces


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
        pool: asyncpg.Pool,
        settings: Settings,
        tokenizer: TokenEncoder,
        embed: EmbeddingFunc,
        llm: CachedLLM | None,
        keyword_fallback: KeywordFunc,
        rerank: RerankFunc | None = None,
        memo: QueryMemo | None = None,
    ) -> None:
        self.pool = pool
        self.settings = settings
        self.tokenizer = tokenizer
        self.embed = embed
        self.llm = llm
        self.keyword_fallback = keyword_fallback
        self.rerank = rerank
        self.memo = memo

    async def keywords(self, query: str, param: QueryParam) -> tuple[list[str], list[str]]:
        """High- and low-level keywords: given by the caller, from the LLM, or from NLP
        (which reads the question's first words); at most ``MAX_KEYWORDS`` of each."""
        given = predefined_keywords(param)
        if given is not None:
            hl, ll = given
        elif self.llm is None:
            hl, ll = await self.keyword_fallback(leading_words(query))
        else:
            prompt = keywords_prompt(query, self.settings.summary_language)
            answer = await self.llm(prompt, cache_type="keywords", mode=param.mode, accept=_has_keywords)
            hl, ll = parse_keywords(answer)
        return bounded_keywords(hl), bounded_keywords(ll)

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
        async with session(self.pool) as s:
            found = await retrieve_all(
                s, plan, vectors, param, threshold, rerank=self._reranks(param), query=lexical
            )
        timings["search"] = time.perf_counter() - started
        chunks = await self._rerank(query, found.chunks, param)
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
        """Structured retrieval result (upstream's ``aquery_data`` shape); no answer generated."""
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
        """Retrieve, then stream the answer."""
        answer = await self.retrieve(query, param)
        query, p = answer.query, answer.param
        if p.mode == "bypass":
            if self.llm is None:
                return QueryStream(answer, _one(BYPASS_WITHOUT_LLM))
            pieces = self.llm.stream(query, history=p.conversation_history, cache_type="query", mode="bypass")
            return QueryStream(answer, pieces)
        if answer.failed or answer.context is None:
            return QueryStream(answer, _one(FAIL_RESPONSE))
        ctx = answer.context
        if p.only_need_context:
            return QueryStream(answer, _one(ctx.text))
        if p.only_need_prompt:
            return QueryStream(answer, _one(full_prompt(ctx.system_prompt, query)))
        if self.llm is None:
            return QueryStream(answer, _one(format_knowledge(ctx)))
        pieces = self.llm.stream(
            query,
            system_prompt=ctx.system_prompt,
            history=p.conversation_history,
            cache_type="query",
            mode=p.mode,
        )
        return QueryStream(answer, pieces)
