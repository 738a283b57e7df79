"""A LangChain retriever over lightrag_pg (``pip install 'lightrag-pg[langchain]'``).

``LightRAGRetriever(rag=rag)`` retrieves from a :class:`~lightrag_pg.rag.LightRAG` of this
process, ``LightRAGRetriever(url=..., api_key=..., workspace=...)`` from a running
``lightrag-pg serve``. Either way it returns the ``k`` best chunks as ``Document``s whose
metadata says where each comes from (see :func:`~.source.passages`). Every
:class:`~lightrag_pg.query.param.QueryParam` field that shapes retrieval (``mode``,
``top_k``, ``bridge``, ...) is an argument.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr, SecretStr, model_validator

from ..query.param import MAX_TOP_K
from ..rag import LightRAG
from .source import DEFAULT_K, QueryOptions, Source, passages, query_param, source_of

__all__ = ["LightRAGRetriever"]


class LightRAGRetriever(BaseRetriever, QueryOptions):
    """Retrieves chunks of a lightrag_pg workspace as LangChain ``Document``s.

    ``invoke(query, k=n)`` overrides ``k`` for one call. Sync and async paths are
    both native: over a server, sync and async HTTP; over a ``LightRAG``, ``ainvoke``
    uses it in its event loop, while ``invoke`` needs it not initialized (the
    facade then opens and closes it around the call).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    rag: LightRAG | None = None
    """A LightRAG of this process (instead of ``url``)."""
    url: str | None = None
    """A running server's address, e.g. ``http://127.0.0.1:9621`` (instead of ``rag``)."""
    api_key: SecretStr | None = None
    """The server's API key (``X-API-Key``)."""
    workspace: str | None = None
    """The server's workspace (``LIGHTRAG-WORKSPACE``; default: the server's)."""
    k: int = Field(default=DEFAULT_K, ge=1, le=MAX_TOP_K)
    """How many chunks to return."""

    _source: Source = PrivateAttr()

    @model_validator(mode="after")
    def _ready(self) -> LightRAGRetriever:
        key = self.api_key.get_secret_value() if self.api_key else None
        self._source = source_of(self.rag, self.url, key, self.workspace)
        query_param(self._options(), self.k)  # a wrong value fails here, not at the first query
        return self

    def _options(self) -> dict[str, Any]:
        return self.model_dump(include=set(QueryOptions.model_fields))

    def _documents(self, data: dict[str, Any], k: int) -> list[Document]:
        return [Document(page_content=p.content, metadata=p.metadata) for p in passages(data, k)]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        k = k or self.k
        return self._documents(self._source.data(query, query_param(self._options(), k)), k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        k = k or self.k
        return self._documents(await self._source.adata(query, query_param(self._options(), k)), k)
