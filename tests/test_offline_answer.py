"""Without an LLM, an answer is the closest whole sentences of each source file, then graph facts."""

from __future__ import annotations

import re

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.query.knowledge import EMPTY_WORKSPACE, NO_LLM_LINE, first_sentence
from lightrag_pg.query.passages import whole_sentences

NOTES = (
    "# Travel notes\n\n"
    "Alice met Bob in Paris in the spring. They talked about the weather for an hour. "
    "Later Alice founded Acme in Berlin, with Bob as her partner. "
    "The firm grew quickly and hired Carol.\n\n"
    "Carol joined Globex after two years. Nobody at Acme saw it coming."
)
OTHER = "Quantum Lab opened in Berlin. Its first director was Carol, who had left Globex."


async def test_the_answer_quotes_whole_sentences_by_source_then_graph_facts(rag: LightRAG) -> None:
    await rag.ainsert([NOTES, OTHER], file_paths=["notes.md", "lab.txt"])
    answer = await rag.aquery("Where did Alice found Acme?", QueryParam(mode="mix"))
    assert answer.startswith(NO_LLM_LINE)
    assert "**notes.md** [" in answer
    quoted = [line[2:] for line in answer.splitlines() if line.startswith("> ")]
    assert quoted, answer
    marked = [m for q in quoted for m in re.findall(r"\*\*(.+?)\*\*", q)]
    assert any("Alice" in m for m in marked), answer
    for q in quoted:
        text = q.removeprefix("… ").removesuffix(" …").replace("**", "")
        assert re.search(r"[.!?]$", text), f"cut inside a sentence: {q!r}"
    assert "Graph facts:" in answer and "References:" not in answer


async def test_an_empty_workspace_says_so_in_a_sentence(rag: LightRAG) -> None:
    assert await rag.aquery("Where did Alice found Acme?") == EMPTY_WORKSPACE


def test_sentences_cut_at_a_chunk_edge_are_left_out() -> None:
    middle = "ted for an hour. Alice founded Acme. Bob joined her there. The firm gr"
    assert [s.text for s in whole_sentences(middle, starts_document=False)] == [
        "Alice founded Acme.",
        "Bob joined her there.",
    ]
    first = "Alice founded Acme. Bob joined"
    assert [s.text for s in whole_sentences(first, starts_document=True)] == ["Alice founded Acme."]


def test_a_fact_is_the_first_whole_sentence_of_a_description() -> None:
    assert (
        first_sentence("Acme is a firm in Berlin. It makes rockets.<SEP>Other.")
        == "Acme is a firm in Berlin."
    )
    assert first_sentence("A firm without a full stop") == "A firm without a full stop"
