"""What the retrievers share: the query options, where the retrieved data comes from (a
:class:`~lightrag_pg.rag.LightRAG` in this process, or a running server's ``/query/data``),
and how the retrieved chunks become passages with their metadata.

Both sources give ``aquery_data``'s result, so a retriever returns the same passages
whichever it is built on.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_type_hints

import httpx
from pydantic import BaseModel, ConfigDict, create_model

from ..errors import InvalidInput, LightRAGError
from ..query.param import QueryParam
from ..rag import LightRAG
from ..types import GRAPH_FIELD_SEP

ANSWER_ONLY = frozenset(
    {"only_need_context", "only_need_prompt", "response_type", "stream", "user_prompt", "include_references"}
)
"""The :class:`QueryParam` fields that shape an answer, not what is retrieved."""

RETRIEVAL_FIELDS = tuple(f.name for f in dataclasses.fields(QueryParam) if f.name not in ANSWER_ONLY)
"""The :class:`QueryParam` fields a retriever takes (``None``: :class:`QueryParam`'s default)."""

DEFAULT_K = 4
"""How many passages a retriever returns unless told (LangChain's ``k``)."""
DEFAULT_TIMEOUT = 120.0
"""Seconds a request to a server may take."""
WORKSPACE_HEADER = "LIGHTRAG-WORKSPACE"

_DECLARED = get_type_hints(QueryParam, include_extras=True)

if TYPE_CHECKING:
    QueryOptions = BaseModel
else:
    QueryOptions = create_model(
        "QueryOptions",
        __config__=ConfigDict(extra="forbid"),
        __doc__="The QueryParam fields a retriever takes; unset ones keep QueryParam's defaults.",
        **{name: (_DECLARED[name] | None, None) for name in RETRIEVAL_FIELDS},
    )


def query_param(options: Mapping[str, Any], chunks: int) -> QueryParam:
    """The :class:`QueryParam` of ``options`` (``None`` values left out), asking for at least
    ``chunks`` chunks unless ``chunk_top_k`` is given; :class:`InvalidInput` if a value is wrong."""
    given = {name: options[name] for name in RETRIEVAL_FIELDS if options.get(name) is not None}
    given.setdefault("chunk_top_k", chunks)
    return QueryParam(**given)


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved chunk: its text, its metadata and its score."""

    content: str
    metadata: dict[str, Any]
    score: float


def passages(data: Mapping[str, Any], k: int) -> list[Passage]:
    """The first ``k`` chunks of an ``aquery_data`` result, in LightRAG's order, as passages.

    Metadata: ``chunk_id``, ``file_path``, ``reference_id``, ``rank`` (1 for the first),
    ``score`` (``1 / rank``: LightRAG orders chunks by fusing ranks, so it has no other
    comparable score), ``entities`` and ``relations`` (the retrieved entities, and
    relations as ``"source -> target"``, that this chunk supports: what led to it),
    and ``mode``.
    """
    found = data.get("data", {})
    led_by: dict[str, dict[str, list[str]]] = {}
    for entity in found.get("entities", []):
        for chunk_id in entity.get("source_id", "").split(GRAPH_FIELD_SEP):
            led_by.setdefault(chunk_id, {"entities": [], "relations": []})["entities"].append(
                entity["entity_name"]
            )
    for relation in found.get("relationships", []):
        pair = f"{relation['src_id']} -> {relation['tgt_id']}"
        for chunk_id in relation.get("source_id", "").split(GRAPH_FIELD_SEP):
            led_by.setdefault(chunk_id, {"entities": [], "relations": []})["relations"].append(pair)
    mode = data.get("metadata", {}).get("query_mode")
    result = []
    for rank, chunk in enumerate(found.get("chunks", [])[:k], start=1):
        links = led_by.get(chunk["chunk_id"], {"entities": [], "relations": []})
        metadata = {
            "chunk_id": chunk["chunk_id"],
            "file_path": chunk["file_path"],
            "reference_id": chunk.get("reference_id", ""),
            "rank": rank,
            "score": 1.0 / rank,
            "entities": links["entities"],
            "relations": links["relations"],
            "mode": mode,
        }
        result.append(Passage(chunk["content"], metadata, 1.0 / rank))
    return result


class Source(ABC):
    """Where ``aquery_data``'s result comes from."""

    @abstractmethod
    def data(self, query: str, param: QueryParam) -> dict[str, Any]:
        """The retrieved data, from synchronous code."""

    @abstractmethod
    async def adata(self, query: str, param: QueryParam) -> dict[str, Any]:
        """The retrieved data, from an event loop."""


class RagSource(Source):
    """A :class:`LightRAG` of this process.

    Initialized, it is used as it is from its event loop (the async path); the
    synchronous path needs it not initialized, as the facade's synchronous calls open
    and close it around each call. An uninitialized one is opened and closed around
    each asynchronous call too.
    """

    def __init__(self, rag: LightRAG) -> None:
        self.rag = rag

    def data(self, query: str, param: QueryParam) -> dict[str, Any]:
        if self.rag.initialized:
            raise LightRAGError(
                "this LightRAG is initialized in an event loop: retrieve asynchronously "
                "(ainvoke / aretrieve), or give the retriever a LightRAG that is not initialized"
            )
        return self.rag.query_data(query, param)

    async def adata(self, query: str, param: QueryParam) -> dict[str, Any]:
        if self.rag.initialized:
            return await self.rag.aquery_data(query, param)
        async with self.rag:
            return await self.rag.aquery_data(query, param)


class ServerSource(Source):
    """``POST /query/data`` of a running ``lightrag-pg serve`` (or upstream's LightRAG Server)."""

    def __init__(
        self, url: str, api_key: str | None, workspace: str | None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.url = url.rstrip("/") + "/query/data"
        self.headers = {
            **({"X-API-Key": api_key} if api_key else {}),
            **({WORKSPACE_HEADER: workspace} if workspace else {}),
        }
        self.timeout = timeout

    def data(self, query: str, param: QueryParam) -> dict[str, Any]:
        with httpx.Client(timeout=self.timeout) as client:
            return _answer(client.post(self.url, json=_body(query, param), headers=self.headers))

    async def adata(self, query: str, param: QueryParam) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return _answer(await client.post(self.url, json=_body(query, param), headers=self.headers))


def source_of(rag: LightRAG | None, url: str | None, api_key: str | None, workspace: str | None) -> Source:
    """The source a retriever is built on: ``rag``, or the server at ``url``; exactly one."""
    if (rag is None) == (url is None):
        raise InvalidInput("give either rag (a LightRAG) or url (a running server's address)")
    if rag is not None:
        if workspace is not None or api_key is not None:
            raise InvalidInput("workspace and api_key are for a server (url); a LightRAG has its workspace")
        return RagSource(rag)
    assert url is not None
    if not url.startswith(("http://", "https://")):
        raise InvalidInput(f"url must be an http:// or https:// address, got {url!r}")
    return ServerSource(url, api_key, workspace)


def _body(query: str, param: QueryParam) -> dict[str, Any]:
    """The request body: the query and the retrieval fields that differ from the defaults."""
    defaults = QueryParam()
    body: dict[str, Any] = {"query": query}
    for name in RETRIEVAL_FIELDS:
        value = getattr(param, name)
        if value != getattr(defaults, name):
            body[name] = value
    return body


def _answer(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        error = InvalidInput if response.status_code in (400, 413, 422) else LightRAGError
        raise error(f"the server answered {response.status_code}: {detail}")
    data: dict[str, Any] = response.json()
    return data
