"""The personalized PageRank of ``QueryParam.pagerank``: a bridge passage a vector search
misses, within the statement budget, deterministic, bounded."""

from __future__ import annotations

import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.query import retrieve
from lightrag_pg.store.retrieval import Walk
from lightrag_pg.testing import StatementCounter

from .conftest import passages

BRIDGE = "carol.md"
CORPUS = {
    "film.md": "The Zephyr film was made by Acme in a studio. Its director was Carol.",
    BRIDGE: "Carol grew up in Berlin.",
    **{
        f"noise{i}.md": f"Where was the Zephyr film director born? Film {i} of the Zephyr director's studio."
        for i in range(4)
    },
}
QUESTION = "Where was the director of the Acme film Zephyr born?"


@pytest.fixture
async def bridge_rag(llm_rag: LightRAG) -> LightRAG:
    await llm_rag.ainsert(list(CORPUS.values()), file_paths=list(CORPUS))
    return llm_rag


async def test_pagerank_finds_the_bridge_passage_the_text_searches_miss(bridge_rag: LightRAG) -> None:
    """The question names the film, not its director: only the graph leads from the film's
    passage, through Carol, to hers."""
    naive = await passages(bridge_rag, QUESTION, QueryParam(mode="naive", chunk_top_k=4))
    mix = await passages(bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4))
    walked = await passages(bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, pagerank=True))
    assert "film.md" in naive and BRIDGE not in naive and BRIDGE not in mix, (naive, mix)
    assert walked[0] == "film.md" and BRIDGE in walked, (walked, naive, mix)


async def test_a_walk_led_by_the_entities_ranks_the_bridge_first(
    bridge_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retrieve, "WALK", Walk(chunk_weight=0.05))
    param = QueryParam(mode="mix", chunk_top_k=2, pagerank=True)
    assert await passages(bridge_rag, QUESTION, param) == ["film.md", BRIDGE]


async def test_pagerank_is_deterministic(bridge_rag: LightRAG) -> None:
    param = QueryParam(mode="mix", pagerank=True)
    first = await bridge_rag.aquery_data(QUESTION, param)
    again = await bridge_rag.aquery_data(QUESTION, param)
    ids = [[c["chunk_id"] for c in data["data"]["chunks"]] for data in (first, again)]
    assert ids[0] == ids[1]


@pytest.mark.parametrize("mode", ["local", "hybrid", "mix"])
async def test_pagerank_stays_within_the_statement_budget(bridge_rag: LightRAG, mode: str) -> None:
    param = QueryParam(mode=mode, pagerank=True)  # type: ignore[arg-type]
    with StatementCounter() as counter:
        await bridge_rag.aquery_data(QUESTION, param)
    assert counter.total == 3, f"{mode}: keyword look-up, keyword store, one retrieval statement"
    with StatementCounter() as counter:
        await bridge_rag.aquery_data(QUESTION, param)
    assert counter.total == 2, f"{mode}: keyword look-up and one retrieval statement"


async def test_a_hub_entity_is_left_out_of_the_walk(
    bridge_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Carol is in two chunks: with a fan-out cap of one she is a hub, and the walk cannot
    cross from the film to her passage; a cap of one entity keeps only the first seed."""
    param = QueryParam(mode="mix", chunk_top_k=4, pagerank=True)
    assert BRIDGE in await passages(bridge_rag, QUESTION, param)
    monkeypatch.setattr(retrieve, "WALK", Walk(fanout=1))
    assert BRIDGE not in await passages(bridge_rag, QUESTION, param)
    monkeypatch.setattr(retrieve, "WALK", Walk(entities=1))
    assert BRIDGE not in await passages(bridge_rag, QUESTION, param)
