"""A LlamaIndex retriever over lightrag_pg (``pip install 'lightrag-pg[llamaindex]'``).

``LightRAGRetriever(rag=rag)`` retrieves from a :class:`~lightrag_pg.rag.LightRAG` of this
process, ``LightRAGRetriever(url=..., api_key=..., workspace=...)`` from a running
``lightrag-pg serve``; it returns the ``k`` best chunks as ``NodeWithScore``s (a
``TextNode`` per chunk, its id the chunk id, its metadata as :func:`~.source.passages`
gives it). Keyword arguments are :class:`~lightrag_pg.query.param.QueryParam` fields
that shape retrieval (``mode``, ``top_k``, ``bridge``, ...). A ``RetrieverQueryEngine``
built on it answers with the LLM LlamaIndex is configured with.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ..errors import InvalidInput
from ..query.param import MAX_TOP_K
from ..rag import LightRAG
from .source import DEFAULT_K, QueryOptions, passages, query_param, source_of

__all__ = ["LightRAGRetriever"]

# shown to the LLM beside each chunk's text: where it comes from, not the bookkeeping
HIDDEN_FROM_LLM = ["chunk_id", "reference_id", "rank", "score", "entities", "relations", "mode"]


class LightRAGRetriever(BaseRetriever):
    """Retrieves chunks of a lightrag_pg workspace as LlamaIndex nodes.

    Over a ``LightRAG``, ``aretrieve`` uses it in its event loop, while ``retrieve``
    needs it not initialized (the facade then opens and closes it around the call).
    """

    def __init__(
        self,
        rag: LightRAG | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        workspace: str | None = None,
        k: int = DEFAULT_K,
        **options: Any,
    ) -> None:
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP_K:
            raise InvalidInput(f"k must be an integer in 1..{MAX_TOP_K}, got {k!r}")
        self.k = k
        self.options = QueryOptions(**options).model_dump()
        self.param = query_param(self.options, k)
        self.source = source_of(rag, url, api_key, workspace)

    def _nodes(self, data: dict[str, Any]) -> list[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(
                    id_=p.metadata["chunk_id"],
                    text=p.content,
                    metadata=p.metadata,
                    excluded_llm_metadata_keys=HIDDEN_FROM_LLM,
                    excluded_embed_metadata_keys=HIDDEN_FROM_LLM,
                ),
                score=p.score,
            )
            for p in passages(data, self.k)
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(self.source.data(query_bundle.query_str, self.param))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(await self.source.adata(query_bundle.query_str, self.param))
