"""Query modes as the retrieval benches name them: a mode, optionally ``+pagerank``.

``mix+pagerank`` is mix with ``QueryParam.pagerank`` (its graph chunks ranked by a
personalized PageRank); the plain names are upstream's modes.
"""

from __future__ import annotations

from lightrag_pg import QueryParam

MODES: tuple[str, ...] = ("naive", "local", "global", "hybrid", "mix")
VARIANTS: tuple[str, ...] = (*MODES, "local+pagerank", "hybrid+pagerank", "mix+pagerank")


def query_param(variant: str, *, lexical: bool = True) -> QueryParam:
    """The ``QueryParam`` of a bench mode name (one of ``VARIANTS``)."""
    mode, _, option = variant.partition("+")
    return QueryParam(mode=mode, lexical=lexical, pagerank=option == "pagerank")  # type: ignore[arg-type]
