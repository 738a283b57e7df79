"""``/query``, ``/query/stream`` (NDJSON) and ``/query/data``."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, StringConstraints, create_model, field_validator

from ..query.engine import QueryStream
from ..query.param import BOUNDS, QueryParam
from ..rag import LightRAG
from .deps import Workspace
from .validate import MAX_LIST_ITEMS, Bounded, Data, Key, Query, Text

log = logging.getLogger(__name__)

router = APIRouter(tags=["query"])

NO_CONTEXT = "No relevant context found for the query."
NDJSON_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _QueryBody(BaseModel):
    """The fields of a query body that are not :class:`QueryParam`'s."""

    query: Query = Field(min_length=1)
    include_chunk_content: bool | None = False
    include_progress: bool | None = False
    stream: bool | None = None
    """``/query/stream`` only: ``false`` sends the whole answer in one line."""

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("query must not be empty or whitespace only")
        return query.strip()

    def param(self) -> QueryParam:
        """The library's :class:`QueryParam` from the fields given (it checks the values
        further: a 400 if wrong); unset fields take the library's defaults."""
        given = {name: getattr(self, name) for name in PARAM_FIELDS}
        return QueryParam(**{name: value for name, value in given.items() if value is not None})


_CARRIED: dict[str, Any] = {
    "response_type": Annotated[Text, StringConstraints(min_length=1, max_length=200)],
    "hl_keywords": Annotated[list[Key], Field(max_length=MAX_LIST_ITEMS)],
    "ll_keywords": Annotated[list[Key], Field(max_length=MAX_LIST_ITEMS)],
    "conversation_history": Annotated[list[Data], Field(max_length=MAX_LIST_ITEMS)],
    "user_prompt": Query,
    **{name: Annotated[int, Bounded(1, high)] for name, high in BOUNDS.items()},
}
"""How the body carries the fields whose text or size the server bounds first (NUL or
lone surrogate: 400, past a bound: 422); the others take :class:`QueryParam`'s types.
The messages of ``conversation_history`` are checked by :class:`QueryParam` (a 400)."""

PARAM_FIELDS = tuple(f.name for f in dataclasses.fields(QueryParam) if f.name not in _QueryBody.model_fields)
"""The :class:`QueryParam` fields a query body may set."""

_DECLARED = get_type_hints(QueryParam, include_extras=True)

_PARAM_BODY: dict[str, Any] = {
    name: (_CARRIED.get(name, _DECLARED[name]) | None, None) for name in PARAM_FIELDS
}

if TYPE_CHECKING:
    QueryRequest = _QueryBody
else:
    QueryRequest = create_model(
        "QueryRequest",
        __base__=_QueryBody,
        __doc__="Upstream's query body with every QueryParam field; unset ones take the library's defaults.",
        **_PARAM_BODY,
    )


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


async def answer(rag: LightRAG, query: str, param: QueryParam, *, with_content: bool) -> dict[str, Any]:
    """``/query``'s answer (the MCP ``query`` tool's too): ``response``, ``references``
    (with their chunks' text when ``with_content``), ``response_time``, ``llm_generated``."""
    started = time.perf_counter()
    stream = await rag.aquery_stream(query, param)
    text = "".join([piece async for piece in stream])
    return {
        "response": text or NO_CONTEXT,
        "references": references_of(stream, with_content) if param.include_references else None,
        "response_time": round(time.perf_counter() - started, 3),
        "llm_generated": llm_generated(rag, stream) and bool(text),
    }


@router.post("/query")
async def query(request: QueryRequest, runtime: Workspace) -> dict[str, Any]:
    """Answer a question from the workspace's knowledge."""
    return await answer(
        runtime.rag, request.query, request.param(), with_content=bool(request.include_chunk_content)
    )


def _line(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False) + "\n"


@router.post("/query/stream")
async def query_stream(request: QueryRequest, runtime: Workspace) -> StreamingResponse:
    """The answer as NDJSON lines: ``{"references": [...]}`` first, then ``{"response": piece}``."""
    started = time.perf_counter()
    param = request.param()
    stream = await runtime.rag.aquery_stream(request.query, param)
    references = references_of(stream, bool(request.include_chunk_content))
    whole = request.stream is False

    async def lines() -> AsyncIterator[str]:
        if whole:
            text = "".join([piece async for piece in stream])
            complete: dict[str, Any] = {
                "response": text or NO_CONTEXT,
                "llm_generated": llm_generated(runtime.rag, stream) and bool(text),
            }
            if param.include_references:
                complete["references"] = references
            yield _line(complete)
        else:
            if param.include_references:
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
