"""Query modes as the retrieval benches name them: a mode, optionally ``+pagerank`` or ``+bridge``.

``mix+pagerank`` is mix with ``QueryParam.pagerank`` (its graph chunks ranked by a
personalized PageRank), ``mix+bridge`` mix with ``QueryParam.bridge`` (a second hop from
its best passage); the plain names are upstream's modes.
"""

from __future__ import annotations

from lightrag_pg import QueryParam

MODES: tuple[str, ...] = ("naive", "local", "global", "hybrid", "mix")
VARIANTS: tuple[str, ...] = (*MODES, "local+pagerank", "hybrid+pagerank", "mix+pagerank", "mix+bridge")


def query_param(variant: str, *, lexical: bool = True) -> QueryParam:
    """The ``QueryParam`` of a bench mode name (one of ``VARIANTS``)."""
    mode, _, option = variant.partition("+")
    return QueryParam(  # type: ignore[arg-type]
        mode=mode, lexical=lexical, pagerank=option == "pagerank", bridge=option == "bridge"
    )
