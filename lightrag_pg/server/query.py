"""``/query``, ``/query/stream`` (NDJSON) and ``/query/data``."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, field_validator

from ..query.engine import QueryStream
from ..query.param import BOUNDS, QueryParam
from ..rag import LightRAG
from .deps import Workspace
from .validate import MAX_LIST_ITEMS, Bounded, Data, Key, Query, Text

log = logging.getLogger(__name__)

router = APIRouter(tags=["query"])

NO_CONTEXT = "No relevant context found for the query."
NDJSON_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

_PARAM_FIELDS = (
    "mode",
    "only_need_context",
    "only_need_prompt",
    "response_type",
    "top_k",
    "chunk_top_k",
    "max_entity_tokens",
    "max_relation_tokens",
    "max_total_tokens",
    "hl_keywords",
    "ll_keywords",
    "conversation_history",
    "user_prompt",
    "enable_rerank",
    "include_references",
    "lexical",
)


class QueryRequest(BaseModel):
    """Upstream's query body; unset fields take the library's defaults."""

    query: Query = Field(min_length=1)
    mode: Literal["local", "global", "hybrid", "naive", "mix", "bypass"] = "mix"
    only_need_context: bool | None = None
    only_need_prompt: bool | None = None
    response_type: Text | None = Field(default=None, min_length=1, max_length=200)
    top_k: Annotated[int, Bounded(1, BOUNDS["top_k"])] | None = None
    chunk_top_k: Annotated[int, Bounded(1, BOUNDS["chunk_top_k"])] | None = None
    max_entity_tokens: Annotated[int, Bounded(1, BOUNDS["max_entity_tokens"])] | None = None
    max_relation_tokens: Annotated[int, Bounded(1, BOUNDS["max_relation_tokens"])] | None = None
    max_total_tokens: Annotated[int, Bounded(1, BOUNDS["max_total_tokens"])] | None = None
    hl_keywords: list[Key] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    ll_keywords: list[Key] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    conversation_history: list[Data] | None = Field(default=None, max_length=MAX_LIST_ITEMS)
    user_prompt: Query | None = None
    enable_rerank: bool | None = None
    include_references: bool | None = True
    include_chunk_content: bool | None = False
    include_progress: bool | None = False
    stream: bool | None = None
    lexical: bool | None = None
    """lightrag_pg's own field: fuse lexical search with the vector searches (QueryParam.lexical)."""

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("query must not be empty or whitespace only")
        return query.strip()

    def param(self) -> QueryParam:
        """The library's :class:`QueryParam` (which validates the values further: a 400 if wrong)."""
        given = {name: getattr(self, name) for name in _PARAM_FIELDS if getattr(self, name) is not None}
        return QueryParam(**given)


def llm_generated(rag: LightRAG, stream: QueryStream) -> bool:
    """Whether the answer's text comes from the LLM (not a canned reply or the context itself)."""
    answer = stream.answer
    if rag.llm_model_func is None or answer.param.only_need_context or answer.param.only_need_prompt:
        return False
    return answer.param.mode == "bypass" or not answer.failed


def references_of(stream: QueryStream, with_content: bool) -> list[dict[str, Any]]:
    """The answer's references, with the text of their chunks when asked."""
    references: list[dict[str, Any]] = [dict(r) for r in stream.references]
    context = stream.answer.context
    if with_content and context is not None:
        texts: dict[str, list[str]] = {}
        for chunk, ref_id in zip(context.chunks, context.chunk_reference_ids, strict=False):
            texts.setdefault(ref_id, []).append(chunk.content)
        for reference in references:
            if reference["reference_id"] in texts:
                reference["content"] = texts[reference["reference_id"]]
    return references


@router.post("/query")
async def query(request: QueryRequest, runtime: Workspace) -> dict[str, Any]:
    """Answer a question from the workspace's knowledge."""
    started = time.perf_counter()
    stream = await runtime.rag.aquery_stream(request.query, request.param())
    text = "".join([piece async for piece in stream])
    generated = llm_generated(runtime.rag, stream) and bool(text)
    return {
        "response": text or NO_CONTEXT,
        "references": references_of(stream, bool(request.include_chunk_content))
        if request.include_references
        else None,
        "response_time": round(time.perf_counter() - started, 3),
        "llm_generated": generated,
    }


def _line(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False) + "\n"


@router.post("/query/stream")
async def query_stream(request: QueryRequest, runtime: Workspace) -> StreamingResponse:
    """The answer as NDJSON lines: ``{"references": [...]}`` first, then ``{"response": piece}``."""
    started = time.perf_counter()
    stream = await runtime.rag.aquery_stream(request.query, request.param())
    references = references_of(stream, bool(request.include_chunk_content))
    whole = request.stream is False

    async def lines() -> AsyncIterator[str]:
        if whole:
            text = "".join([piece async for piece in stream])
            complete: dict[str, Any] = {
                "response": text or NO_CONTEXT,
                "llm_generated": llm_generated(runtime.rag, stream) and bool(text),
            }
            if request.include_references:
                complete["references"] = references
            yield _line(complete)
        else:
            if request.include_references:
                yield _line({"references": references})
            try:
                async for piece in stream:
                    if piece:
                        yield _line({"response": piece})
            except Exception as exc:  # the status line is sent: report in the stream, as upstream
                log.exception("streaming an answer failed")
                yield _line({"error": f"{type(exc).__name__}: {exc}"})
        if request.include_progress:
            yield _line({"response_time": round(time.perf_counter() - started, 3)})

    return StreamingResponse(lines(), media_type="application/x-ndjson", headers=NDJSON_HEADERS)


@router.post("/query/data")
async def query_data(request: QueryRequest, runtime: Workspace) -> dict[str, Any]:
    """The entities, relationships, chunks and references retrieved for a question; no answer."""
    return await runtime.rag.aquery_data(request.query, request.param())
