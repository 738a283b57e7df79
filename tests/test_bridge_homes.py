"""Where the bridge starts: an entity's home is the chunk its document introduces it in (a
title, a Markdown or HTML heading, a file name) or, failing those, the chunk that
mentions it most; the question's named entities' homes are the bridge's articles."""

from __future__ import annotations

import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.query import retrieve
from lightrag_pg.store.retrieval import HOME_RULES, Bridge
from lightrag_pg.testing import StatementCounter

from .conftest import passages

QUESTION = "Where did the founder of the Globex studio of the film Zephyr grow up?"
CORPUS = {
    "p-film.md": "Zephyr is a film of the studio Globex. The film Zephyr was shot in Oslo.",
    "p-alice.md": "Alice lived in Paris.",
    **{f"p-noise{i}.md": f"The film {i} of a studio opened in Oslo." for i in range(6)},
}
STARTS = {
    "title": ("p-globex.md", "Globex (studio)\n\nAlice started it."),
    "heading": ("p-globex.md", "Studios of Oslo\n\nMany work here.\n\n## Globex\n\nAlice started it."),
    "heading with more words": (
        "p-globex.md",
        "Studios of Oslo\n\nMany work here.\n\n## How Globex began\n\nAlice started it.",
    ),
    "HTML heading": (
        "p-globex.html",
        '<p>Studios of Oslo</p>\n<h2 class="name">Globex</h2>\n<p>Alice started it.</p>',
    ),
    "file name": ("docs/globex.md", "Alice started the studio Globex in a garage."),
}
CENTRAL = ("p-globex.md", "Alice started Globex in a garage. Globex grew. Globex moved.")
RULES = {"heading with more words": "heading", "HTML heading": "heading"}


async def globex_home(rag: LightRAG, bridge: Bridge | None = None) -> str | None:
    async with rag.unit_of_work() as uow:
        homes = {h.name: h for h in await uow.retrieval.homes(QUESTION, bridge or Bridge())}
    home = homes["Globex"]
    return None if home.rule is None else HOME_RULES[home.rule]


@pytest.mark.parametrize("kind", list(STARTS))
async def test_each_rule_gives_the_named_entity_a_start(llm_rag: LightRAG, kind: str) -> None:
    """Globex's passage, found by the rule, is the article the hop starts from: it leads to
    its founder Alice, whose passage no text search ranks near the top."""
    path, text = STARTS[kind]
    corpus = {**CORPUS, path: text}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    assert await globex_home(llm_rag) == RULES.get(kind, kind)
    naive = await passages(llm_rag, QUESTION, QueryParam(mode="naive", chunk_top_k=9))
    bridged = await passages(llm_rag, QUESTION, QueryParam(mode="mix", chunk_top_k=4, bridge=True))
    assert "p-alice.md" not in naive[:4] and "p-alice.md" in bridged, (naive, bridged)


@pytest.fixture(autouse=True)
def bridge_after_the_best_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests place a bridge chunk right after the best text match (``keep=1``), not
    after the default's first three."""
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1))


async def test_a_passage_that_only_mentions_the_entity_is_no_start(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named once in each of two passages, Globex has no home, and the hop does not reach
    Alice."""
    path, text = "p-globex.md", "Alice started the studio Globex in a garage."
    corpus = {**CORPUS, path: text}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    assert await globex_home(llm_rag) is None
    param = QueryParam(mode="mix", chunk_top_k=4, bridge=True)
    assert "p-alice.md" not in await passages(llm_rag, QUESTION, param)


async def test_a_central_chunk_starts_the_hop_only_when_asked(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Globex is named three times in its passage and once in the film's: its passage is its
    central chunk, a start with ``central_starts`` only."""
    corpus = {**CORPUS, CENTRAL[0]: CENTRAL[1]}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    assert await globex_home(llm_rag) == "central"
    param = QueryParam(mode="mix", chunk_top_k=4, bridge=True)
    assert "p-alice.md" not in await passages(llm_rag, QUESTION, param)
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, central_starts=True))
    assert "p-alice.md" in await passages(llm_rag, QUESTION, param)


async def test_a_bridge_entitys_central_chunk_gets_half_the_bonus(
    llm_rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two passages name Carol, the film's director: the one more like the question only
    mentions her, hers names her three times (her central chunk): a home, placed before
    the other bridge chunks, and without the central rule no home."""
    corpus = {
        "p-film.md": "Zephyr is an Acme film made in a studio. Its director was Carol.",
        "p-carol.md": "Carol grew up in Berlin. Carol went to school there. Carol left.",
        "p-mention.md": "Carol was asked about a film.",
        **{f"p-noise{i}.md": f"Movie {i} opened in Oslo." for i in range(4)},
    }
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    question = "Where was the director of the Acme film Zephyr born?"
    param = QueryParam(mode="mix", chunk_top_k=2, bridge=True)
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=0.0))
    assert await passages(llm_rag, question, param) == ["p-film.md", "p-carol.md"]
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=2.0, central=0))
    assert await passages(llm_rag, question, param) == ["p-film.md", "p-mention.md"]
    monkeypatch.setattr(retrieve, "BRIDGE", Bridge(keep=1, keep_home=1, heading=2.0))
    assert await passages(llm_rag, question, param) == ["p-film.md", "p-carol.md"]


async def test_the_central_rule_can_be_switched_off(llm_rag: LightRAG) -> None:
    path, text = CENTRAL
    corpus = {**CORPUS, path: text}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    assert await globex_home(llm_rag, Bridge(central=0)) is None
    assert await globex_home(llm_rag, Bridge(central=4)) is None
    assert await globex_home(llm_rag, Bridge(central=3)) == "central"


async def test_a_file_name_without_a_letter_names_nothing(llm_rag: LightRAG) -> None:
    corpus = {
        **CORPUS,
        "p-globex.md": "Alice started the studio Globex in a garage.",
        "2024.md": "Globex 2024.",
    }
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    async with llm_rag.unit_of_work() as uow:
        homes = {h.name: h for h in await uow.retrieval.homes(None)}
    assert homes["Globex"].rule is None, homes["Globex"]


async def test_homes_keep_the_bridge_within_the_statement_budget(llm_rag: LightRAG) -> None:
    corpus = {**CORPUS, **dict([STARTS["heading"]])}
    await llm_rag.ainsert(list(corpus.values()), file_paths=list(corpus))
    param = QueryParam(mode="mix", bridge=True, kg_chunk_pick_method="WEIGHT")
    with StatementCounter() as counter:
        await llm_rag.aquery_data(QUESTION, param)
    assert counter.total <= 3, "keyword look-up, keyword store, one retrieval statement"
    with StatementCounter() as counter:
        await llm_rag.aquery_data(QUESTION, param)
    assert counter.total == 2, "keyword look-up and one retrieval statement"
