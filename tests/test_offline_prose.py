"""Technical text: code, tables and markup are not mined as prose (lightrag_pg.offline.prose)."""

from __future__ import annotations

import pytest

from lightrag_pg.offline.prose import CodeSpan, prose


def code_of(text: str) -> list[tuple[str, str]]:
    found = prose(text)
    return [(found.text[c.start : c.end], c.name) for c in found.code]


def test_plain_prose_is_unchanged_but_for_the_title_and_headings() -> None:
    passage = "Pterocarya\n\nPterocarya is a genus of trees, 30 m tall (Juglandaceae). It grows in Asia."
    assert (
        prose(passage).text
        == "Pterocarya. Pterocarya is a genus of trees, 30 m tall (Juglandaceae). It grows in Asia."
    )
    assert prose(passage).code == () and prose(passage).sentence_starts == ()
    assert prose("## Install\nRun it twice.").text == "Install.\nRun it twice."


def test_a_paragraph_starts_a_sentence() -> None:
    found = prose(
        "A package.\nExecute the command\n\ndpkg --listfiles foo\n\nNote that scripts are not listed."
    )
    assert [found.text[s:].split("\n")[0] for s in found.sentence_starts] == [
        "dpkg --listfiles foo",
        "Note that scripts are not listed.",
    ]


def test_a_fenced_block_goes_and_the_sentences_around_it_stay_apart() -> None:
    text = "Grant the role:\n\n```sql\nGRANT CREATE ON DATABASE db TO app;\n```\nThen it works."
    found = prose(text)
    assert found.text == "Grant the role.\n\nThen it works."
    assert [found.text[s:] for s in found.sentence_starts] == ["Then it works."]


def test_windows_line_ends_are_read_as_line_ends() -> None:
    text = "Run this:\r\n\r\n```sh\r\nmake test\r\n```\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\nDone."
    assert prose(text).text == "Run this.\n\nDone."


def test_a_chunk_cut_inside_a_fence_drops_the_code_on_either_side() -> None:
    began_inside = "SELECT 1;\nDROP TABLE x;\n```\nAfter the block.\n```bash\nlightrag-pg doctor"
    assert prose(began_inside).text.strip() == "After the block."
    ends_inside = "Before.\n\n```python\nrag = LightRAG()"
    assert prose(ends_inside).text.strip() == "Before."
    two_blocks = "x = 1\n```\nMiddle.\n```sh\nmake test\n```\nEnd."
    assert prose(two_blocks).text.split() == ["Middle.", "End."]


def test_table_rows_of_figures_go_and_rows_of_prose_read_as_sentences() -> None:
    text = (
        "Results:\n\n| mode | R@2 | R@5 |\n|---|---|---|\n| naive | 0.683 | 0.817 |\n"
        "| mix | 0.633 | 0.850 |\n\n"
        "| package | used for |\n|---|---|\n| PyJWT | the tokens of `/login` accounts and guest tokens |\n"
        "| pypdf | PDFs |\n\nDone."
    )
    found = prose(text)
    assert [line for line in found.text.split("\n") if line] == [
        "Results.",
        "PyJWT: the tokens of `/login` accounts and guest tokens.",
        "Done.",
    ]
    assert [found.text[s:].split("\n")[0] for s in found.sentence_starts] == [
        "PyJWT: the tokens of `/login` accounts and guest tokens.",
        "Done.",
    ]


def test_a_row_the_chunk_cut_is_a_row() -> None:
    text = "figures | 0.13 / 0.26 s |\nProse here.\n| naive | 0.683 | 0.817 | 0.950 | 43"
    assert prose(text).text.split() == ["Prose", "here."]


def test_front_matter_comments_prompts_and_references_go() -> None:
    text = (
        "---\ntitle: Notes\ntags: [a]\n---\nIntro line here.\n<!-- hidden\nnote -->\n$ lightrag-pg serve\n"
        "[docs]: https://example.org/docs\nEnd."
    )
    assert prose(text).text.split() == ["Intro", "line", "here.", "End."]
    assert prose("---\n\nA rule above, not front matter.").text.endswith("A rule above, not front matter.")


def test_links_images_and_emphasis_are_unwrapped() -> None:
    text = "See [the guide](docs/guide.md) and **MuSiQue** or *this*.\n![A screenshot](docs/a.png)\nEnd."
    assert prose(text).text == "See the guide and MuSiQue or this.\n\nEnd."
    assert prose("Use `a **b** [c](d)` here.").text == "Use `a **b** [c](d)` here."
    assert prose("A view[vague][who?] here.").text == "A view[vague][who?] here.", (
        "a citation tag, not a link"
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Set `chunk_token_size` to 600.", [("chunk_token_size", "chunk_token_size")]),
        ("Call `rag.aquery()` now.", [("rag.aquery()", "rag.aquery")]),
        ("Run `lightrag-pg serve --port 9621` first.", [("lightrag-pg serve --port 9621", "")]),
        ("Since `d52aee1` and d673b7b it is faster.", [("d52aee1", ""), ("d673b7b", "")]),
        ("It cannot (apache/age#54).", [("apache/age#54", "")]),
        ("See https://example.org/a_b. Then stop.", [("https://example.org/a_b", "")]),
        ("SET`, which Citus propagates.\nThe end `of", [("SET", ""), ("of", "")]),
        ("A deadbeef 1234567 word.", []),
        ("The `stable' release, not `unstable', nor `it's` code.", [("it's", "")]),
        ("He promotes an ``elevation of style ''and an essence of`` simplicity''.", []),
        ("Use ``a `b` c`` here.", [("a `b` c", "")]),
        ("States: " + "Idaho Iowa " * 8 + "Hawai `i Kansas " + "Ohio Utah " * 8, []),
    ],
)
def test_code_spans(text: str, code: list[tuple[str, str]]) -> None:
    assert code_of(text) == code


def test_code_spans_are_in_text_order() -> None:
    found = prose("`b_c` at https://x.org and `d_e`")
    assert [c.start for c in found.code] == sorted(c.start for c in found.code)
    assert found.code[0] == CodeSpan(1, 4, "b_c")


TECHNICAL = """# Deploying

Install it with `pip install lightrag-pg` and set `LIGHTRAG_PG_DSN` first. Since d52aee1 the
`QueryParam` class has a `bridge` switch, see [the notes](https://example.org/notes).

```sql
GRANT CREATE ON DATABASE books TO app;
CREATE EXTENSION IF NOT EXISTS vector;
```

| mode | CPU |
|---|---|
| mix | 40.8× |

Alice Smith maintains the Acme Robotics deployment guide for **lightrag-pg doctor** users.
"""


def test_the_extractor_mines_the_prose_of_technical_text() -> None:
    pytest.importorskip("spacy")
    from lightrag_pg.config import DEFAULT_ENTITY_TYPES
    from lightrag_pg.offline.nlp_extract import SpacyExtractor

    extractor = SpacyExtractor(DEFAULT_ENTITY_TYPES)
    result = extractor.extract(TECHNICAL, chunk_id="c")
    found = {e.name: e.entity_type for e in result.entities}
    assert found["LIGHTRAG_PG_DSN"] == found["QueryParam"] == "Artifact", found
    assert found["Alice Smith"] == "Person", found
    junk = ("GRANT", "CREATE", "EXISTS", "d52aee1", "pip", "mix", "CPU", "40.8", "example.org", "bridge")
    assert not [name for name in found if any(word in name for word in junk)], found
    assert not [e for e in result.entities if "GRANT" in e.description or "|" in e.description]
    assert all(r.src in found and r.tgt in found for r in result.relations)
    assert extractor.extract(TECHNICAL, chunk_id="c") == result
