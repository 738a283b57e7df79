"""The second hop of ``QueryParam.bridge``: from the question's best passage, through what
it names that the question does not, to a passage both text searches miss; within the
statement budget, deterministic, bounded."""

from __future__ import annotations

import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.query import retrieve
from lightrag_pg.store.retrieval import Bridge
from lightrag_pg.testing import StatementCounter

from .conftest import passages

BRIDGE = "p-carol.md"
NAMED = "p-acme.md"
CORPUS = {
    "p-film.md": "Zephyr is an Acme film made in a studio. Its director was Carol.",
    BRIDGE: "Carol grew up in Berlin.",
    NAMED: "Acme sold umbrellas in Paris.",
    **{f"p-noise{i}.md": f"Movie {i} opened in Oslo." for i in range(4)},
}
QUESTION = "Where was the director of the Acme film Zephyr born?"


@pytest.fixture(autouse=True)
def bridge_after_the_best_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests place a bridge chunk right after the best text match (``keep=1``), not
    after the default's first three."""
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1))


@pytest.fixture
async def bridge_rag(llm_rag: LightRAG) -> LightRAG:
    await llm_rag.ainsert(list(CORPUS.values()), file_paths=list(CORPUS))
    return llm_rag


async def test_bridge_follows_the_best_passage_to_the_one_the_text_searches_miss(
    bridge_rag: LightRAG,
) -> None:
    """The question names the film, not its director: the film's passage names Carol, and
    her passage comes right after it. Acme, which the question also names, is not followed:
    its passage, more like the question than Carol's, would otherwise come first."""
    naive = await passages(bridge_rag, QUESTION, QueryParam(mode="naive", chunk_top_k=2))
    mix = await passages(bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=2, bridge=False))
    bridged = await passages(bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, bridge=True))
    assert naive[0] == "p-film.md" and BRIDGE not in naive and BRIDGE not in mix, (naive, mix)
    assert bridged[:2] == ["p-film.md", BRIDGE], bridged


async def test_bridge_chunks_come_after_the_kept_ones_up_to_their_slots(
    bridge_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    param = QueryParam(mode="mix", chunk_top_k=4, bridge=True)
    naive = await passages(bridge_rag, QUESTION, QueryParam(mode="naive", chunk_top_k=4))
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=2, keep_home=2))
    assert (await passages(bridge_rag, QUESTION, param))[:3] == ["p-film.md", NAMED, BRIDGE]
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, slots=0))
    assert await passages(bridge_rag, QUESTION, param) == naive


async def test_a_passage_under_the_bridge_entitys_heading_comes_first(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two passages name Carol: the one more like the question only mentions her, hers
    has her name as its title line. Homes are placed before the other bridge chunks,
    whatever the heading bonus."""
    corpus = {
        **CORPUS,
        BRIDGE: "Carol\n\nCarol grew up in Berlin.",
        "p-mention.md": "Ask Carol about a film.",
    }
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    param = QueryParam(mode="mix", chunk_top_k=2, bridge=True)
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=0.0))
    assert await passages(llm_rag, QUESTION, param) == ["p-film.md", BRIDGE]
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=1.0))
    assert await passages(llm_rag, QUESTION, param) == ["p-film.md", BRIDGE]


async def test_a_home_goes_second_only_when_it_leads_the_second_text_match(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Carol's home (her name is its title line) follows the first ``keep_home`` text
    matches, or the first one when its score beats the second match's distance by more
    than ``lead``."""
    corpus = {**CORPUS, BRIDGE: "Carol\n\nCarol grew up in Berlin."}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    param = QueryParam(mode="mix", chunk_top_k=4, bridge=True)
    text = await passages(llm_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, bridge=False))
    assert BRIDGE not in text[:3], text
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(lead=10.0))
    assert (await passages(llm_rag, QUESTION, param))[2] == BRIDGE
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(lead=-10.0))
    assert (await passages(llm_rag, QUESTION, param))[1] == BRIDGE
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=3, keep_home=3, lead=10.0))
    assert (await passages(llm_rag, QUESTION, param))[3] == BRIDGE


async def test_a_passage_only_beginning_with_the_name_is_no_heading(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Carol Ann" is not Carol's title line: a heading is the whole first line, less a
    parenthesis ("Carol (director)" is hers)."""
    corpus = {**CORPUS, BRIDGE: "Carol Ann grew up in Berlin.", "p-mention.md": "Ask Carol about a film."}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    param = QueryParam(mode="mix", chunk_top_k=2, bridge=True)
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=1.0))
    assert await passages(llm_rag, QUESTION, param) == ["p-film.md", "p-mention.md"]


async def test_bridge_starts_from_the_articles_of_what_the_question_names(llm_rag: LightRAG) -> None:
    """The question names the studio Globex; the best passage, the film's, leads nowhere
    the question does not name, but Globex's article (its title line is the name) leads
    to its founder Alice, whose passage no text search ranks near the top."""
    corpus = {
        "p-film.md": "Zephyr is a film of the studio Globex. The film Zephyr was shot in Oslo.",
        "p-globex.md": "Globex (studio)\n\nAlice started it.",
        "p-alice.md": "Alice lived in Paris.",
        **{f"p-noise{i}.md": f"The film {i} of a studio opened in Oslo." for i in range(6)},
    }
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    question = "Where did the founder of the Globex studio of the film Zephyr grow up?"
    naive = await passages(llm_rag, question, QueryParam(mode="naive", chunk_top_k=9))
    bridged = await passages(llm_rag, question, QueryParam(mode="mix", chunk_top_k=4, bridge=True))
    assert naive[0] == "p-film.md" and "p-alice.md" not in naive[:4], naive
    assert bridged[:2] == ["p-film.md", "p-globex.md"] and "p-alice.md" in bridged, (naive, bridged)


async def test_a_named_entity_gives_one_article_the_nearest(llm_rag: LightRAG) -> None:
    """Two passages are titled Globex (homonyms): only the one more like the question is
    its article, so the other does not take a bridge place from Alice's passage."""
    corpus = {
        "p-film.md": "Zephyr is a film of the studio Globex. The film Zephyr was shot in Oslo.",
        "p-globex.md": "Globex (studio)\n\nAlice started the studio.",
        "p-bank.md": "Globex (bank)\n\nA bank in Oslo.",
        "p-alice.md": "Alice lived in Paris.",
        **{f"p-noise{i}.md": f"The film {i} of a studio opened in Oslo." for i in range(6)},
    }
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    question = "Where did the founder of the Globex studio of the film Zephyr grow up?"
    naive = await passages(llm_rag, question, QueryParam(mode="naive", chunk_top_k=10))
    bridged = await passages(llm_rag, question, QueryParam(mode="mix", chunk_top_k=4, bridge=True))
    assert naive.index("p-globex.md") < naive.index("p-bank.md") and "p-alice.md" not in naive[:4], naive
    assert bridged[:3] == ["p-film.md", "p-globex.md", "p-alice.md"] and "p-bank.md" not in bridged, (
        naive,
        bridged,
    )


async def test_a_hub_entity_is_not_followed(bridge_rag: LightRAG, monkeypatch: pytest.MonkeyPatch) -> None:
    """Carol is in two chunks: with a fan-out cap of one she is a hub."""
    param = QueryParam(mode="mix", chunk_top_k=2, bridge=True)
    assert BRIDGE in await passages(bridge_rag, QUESTION, param)
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, fanout=1))
    assert BRIDGE not in await passages(bridge_rag, QUESTION, param)


async def test_bridge_is_deterministic(bridge_rag: LightRAG) -> None:
    param = QueryParam(mode="mix", bridge=True)
    first = await bridge_rag.aquery_data(QUESTION, param)
    again = await bridge_rag.aquery_data(QUESTION, param)
    ids = [[c["chunk_id"] for c in data["data"]["chunks"]] for data in (first, again)]
    assert ids[0] == ids[1]


async def test_bridge_stays_within_the_statement_budget(bridge_rag: LightRAG) -> None:
    param = QueryParam(mode="mix", bridge=True, kg_chunk_pick_method="WEIGHT")
    with StatementCounter() as counter:
        await bridge_rag.aquery_data(QUESTION, param)
    assert counter.total == 3, "keyword look-up, keyword store, one retrieval statement"
    with StatementCounter() as counter:
        await bridge_rag.aquery_data(QUESTION, param)
    assert counter.total == 2, "keyword look-up and one retrieval statement"


@pytest.mark.parametrize("mode", ["local", "hybrid"])
async def test_bridge_leaves_the_modes_without_text_matches_alone(bridge_rag: LightRAG, mode: str) -> None:
    plain = await passages(bridge_rag, QUESTION, QueryParam(mode=mode))  # type: ignore[arg-type]
    bridged = await passages(bridge_rag, QUESTION, QueryParam(mode=mode, bridge=True))  # type: ignore[arg-type]
    assert bridged == plain


async def test_bridge_after_the_walk_keeps_the_walk_first(bridge_rag: LightRAG) -> None:
    walked = await passages(bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, pagerank=True))
    both = await passages(
        bridge_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, pagerank=True, bridge=True)
    )
    assert both[0] == walked[0] and BRIDGE in both, (both, walked)


def test_the_bridge_is_on_by_default_and_off_with_upstreams_retrieval() -> None:
    assert QueryParam().uses_bridge() and QueryParam(mode="naive").uses_bridge()
    assert not QueryParam(lexical=False).uses_bridge()
    assert QueryParam(lexical=False, bridge=True).uses_bridge()
    assert not QueryParam(bridge=False).uses_bridge()
    assert retrieve.Bridge().keep == 3
