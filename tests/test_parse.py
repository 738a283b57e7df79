"""Unit tests for the extraction prompts, parser and gleaning merge (offline)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.errors import ConfigurationError, InvalidInput
from lightrag_pg.index import extraction_prompts as prompts
from lightrag_pg.index.extraction_prompts import (
    COMPLETION_DELIMITER,
    TUPLE_DELIMITER,
    extraction_messages,
    gleaning_messages,
    summary_prompt,
)
from lightrag_pg.index.parse import (
    MAX_RELATION_WEIGHT,
    UNKNOWN_TYPE,
    is_complete,
    merge_gleaning,
    parse_extraction,
)
from lightrag_pg.testing import classify_prompt, prompt_descriptions, prompt_input_text
from lightrag_pg.types import ExtractedEntity, ExtractedRelation, Extraction

D = TUPLE_DELIMITER


def parse(output: str, **kwargs: Any) -> Extraction:
    return parse_extraction(output, chunk_id="chunk-1", file_path="doc.txt", **kwargs)


def ent(name: str, etype: str = "Person", desc: str = "d") -> str:
    return D.join(["entity", name, etype, desc])


def rel(src: str, tgt: str, kw: str = "k", desc: str = "d", *extra: str) -> str:
    return D.join(["relation", src, tgt, kw, desc, *extra])


GOOD = "\n".join(
    [
        ent("Halvorsen Lab", "Organization", "A coral research group."),
        ent("Amara Osei", "Person", "A postdoctoral researcher."),
        rel("Amara Osei", "Halvorsen Lab", "employment, research", "Amara Osei works at the lab."),
        COMPLETION_DELIMITER,
    ]
)


# --------------------------------------------------------------------- parser


def test_good_output() -> None:
    result = parse(GOOD)
    assert result.dropped_lines == 0
    assert result.entities == (
        ExtractedEntity("Halvorsen Lab", "Organization", "A coral research group.", "chunk-1", "doc.txt"),
        ExtractedEntity("Amara Osei", "Person", "A postdoctoral researcher.", "chunk-1", "doc.txt"),
    )
    assert result.relations == (
        ExtractedRelation(
            "Amara Osei",
            "Halvorsen Lab",
            "employment, research",
            "Amara Osei works at the lab.",
            1.0,
            "chunk-1",
            "doc.txt",
        ),
    )


def test_prompt_examples_parse_cleanly() -> None:
    for _, output in prompts._EXAMPLES:
        result = parse(output + "\n" + COMPLETION_DELIMITER)
        lines = output.splitlines()
        assert result.dropped_lines == 0
        assert len(result.entities) == sum(line.startswith("entity") for line in lines)
        assert len(result.relations) == sum(line.startswith("relation") for line in lines)


def test_truncated_last_line_is_dropped_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    output = "\n".join([ent("Alpha"), ent("Beta"), rel("Alpha", "Beta"), "relation<|#|>Alpha<|#|>Be"])
    with caplog.at_level(logging.WARNING, logger="lightrag_pg.index.parse"):
        result = parse(output)
    assert [e.name for e in result.entities] == ["Alpha", "Beta"]
    assert len(result.relations) == 1
    assert result.dropped_lines == 1
    assert "chunk-1" in caplog.text and "Be" in caplog.text


def test_truncated_but_well_formed_last_line_is_kept() -> None:
    result = parse(ent("Alpha") + "\n" + ent("Beta", "Person", "Beta is a res"))
    assert [e.description for e in result.entities] == ["d", "Beta is a res"]
    assert result.dropped_lines == 0


def test_garbage_and_chatter() -> None:
    assert parse("") == Extraction((), (), 0)
    assert parse("I'm sorry, I cannot help with that.") == Extraction((), (), 0)
    result = parse("foo<|#|>bar\nentity without delimiters\n<|#|><|#|><|#|>\n" + ent("Kept"))
    assert [e.name for e in result.entities] == ["Kept"]
    assert result.dropped_lines == 3


def test_markdown_fences_list_markers_and_bold_kinds() -> None:
    output = "\n".join(
        [
            "Here are the records:",
            "```text",
            "- " + ent("Alpha"),
            "2. " + D.join(["**ENTITY**", "Beta", "person", "b"]),
            D.join(["Relation", "Alpha", "Beta", "k", "d"]),
            "```",
            "Done!",
        ]
    )
    result = parse(output)
    assert [(e.name, e.entity_type) for e in result.entities] == [
        ("Alpha", "Person"),
        ("Beta", "Person"),
    ]
    assert [(r.src, r.tgt) for r in result.relations] == [("Alpha", "Beta")]
    assert result.dropped_lines == 0


def test_text_after_completion_is_ignored() -> None:
    result = parse(ent("Alpha") + "\n<|COMPLETE|>\n" + ent("Ghost") + "\nchatter<|#|>x")
    assert [e.name for e in result.entities] == ["Alpha"]
    assert result.dropped_lines == 0
    inline = parse(ent("Alpha") + COMPLETION_DELIMITER)
    assert inline.entities[0].description == "d"


def test_quotes_and_dollar_signs_are_kept_verbatim() -> None:
    output = "\n".join(
        [
            ent('Dwayne "The Rock" Johnson', "Person", 'He said "hi" and paid $$5$$ for $$ tokens.'),
            ent("O'Brien's $$Cafe", "Organization", "It's \"quoted\" and 'single'."),
            rel('Dwayne "The Rock" Johnson', "O'Brien's $$Cafe", "visits", '$$ $1 "x"'),
        ]
    )
    result = parse(output)
    assert [e.name for e in result.entities] == ['Dwayne "The Rock" Johnson', "O'Brien's $$Cafe"]
    assert result.entities[0].description == 'He said "hi" and paid $$5$$ for $$ tokens.'
    assert result.entities[1].description == "It's \"quoted\" and 'single'."
    assert result.relations[0].description == '$$ $1 "x"'


def test_wrapping_quotes_and_brackets_are_removed() -> None:
    result = parse(
        "\n".join(
            [
                D.join(['"entity"', '"Alex"', '"person"', '"Alex is a character."']),
                D.join(["entity", "“Tokyo”", "<Location>", "(Capital of Japan)"]),
                D.join(["entity", "Foo (band)", "Organization", '"Foo" is a band named "Bar"']),
            ]
        )
    )
    assert [e.name for e in result.entities] == ["Alex", "Tokyo", "Foo (band)"]
    assert [e.entity_type for e in result.entities] == ["Person", "Location", "Organization"]
    assert [e.description for e in result.entities] == [
        "Alex is a character.",
        "Capital of Japan",
        '"Foo" is a band named "Bar"',
    ]


def test_legacy_tuple_format_with_record_delimiter() -> None:
    output = (
        '("entity"<|>"Alex"<|>"person"<|>"Alex is a character...")##\n'
        '("relationship"<|>"Alex"<|>"Taylor"<|>"Power dynamic..."<|>"conflict"<|>"7")##\n'
        '("content_keywords"<|>"discovery, control, rebellion")<|COMPLETE|>'
    )
    result = parse(output)
    assert result.entities == (
        ExtractedEntity("Alex", "Person", "Alex is a character...", "chunk-1", "doc.txt"),
    )
    assert result.relations == (
        ExtractedRelation("Alex", "Taylor", "conflict", "Power dynamic...", 7.0, "chunk-1", "doc.txt"),
    )
    assert result.dropped_lines == 0


def test_legacy_records_on_one_line() -> None:
    output = '("entity"<|>"A"<|>"person"<|>"a")##("entity"<|>"B"<|>"person"<|>"b")##'
    result = parse(output)
    assert [e.name for e in result.entities] == ["A", "B"]
    assert result.dropped_lines == 0


def test_relation_with_trailing_strength() -> None:
    result = parse(
        "\n".join([rel("A", "B", "kw", "desc", "8.5"), rel("A", "C", "kw", "desc", '"2"'), rel("A", "D")])
    )
    assert [r.weight for r in result.relations] == [8.5, 2.0, 1.0]
    assert result.relations[0].keywords == "kw" and result.relations[0].description == "desc"


def test_relation_with_bad_extra_field_is_dropped() -> None:
    result = parse("\n".join([rel("A", "B", "kw", "desc", "not a number"), rel("A", "B", "k", "d", "-3")]))
    assert result.dropped_lines == 1
    assert [r.weight for r in result.relations] == [1.0]


@pytest.mark.parametrize(
    ("strength", "weight"),
    [
        ("9.3e18", MAX_RELATION_WEIGHT),
        ("1e308", MAX_RELATION_WEIGHT),
        ("1000001", MAX_RELATION_WEIGHT),
        ("1e6", 1e6),
        ("inf", 1.0),
        ("-inf", 1.0),
        ("nan", 1.0),
        ("1e999", 1.0),
        ("-5", 1.0),
        ("0", 1.0),
        ("0.25", 0.25),
    ],
)
def test_relation_strength_is_bounded(strength: str, weight: float, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        result = parse(rel("A", "B", "kw", "desc", strength))
    assert [r.weight for r in result.relations] == [weight]
    assert result.dropped_lines == 0
    assert bool(caplog.records) == (weight != float(strength))


def test_trailing_delimiter_is_tolerated() -> None:
    result = parse(ent("A") + D + "\n" + rel("A", "B") + D)
    assert len(result.entities) == 1 and len(result.relations) == 1
    assert result.dropped_lines == 0


@pytest.mark.parametrize(
    "delimiter", ["<|>", "<||>", "<|##|>", "<#>", "<|#>", "<#|>", "<｜#｜>", "＜｜#｜＞"]
)
def test_corrupted_and_full_width_delimiters(delimiter: str) -> None:
    output = delimiter.join(["entity", "Alpha", "Person", "d"]) + "\n<｜COMPLETE｜>\n" + ent("After")
    result = parse(output)
    assert [e.name for e in result.entities] == ["Alpha"]


def test_self_relation_is_dropped_and_counted() -> None:
    result = parse("\n".join([rel("Alpha", "Alpha"), rel("Alpha", " alpha "), rel("Alpha", "Beta")]))
    assert [(r.src, r.tgt) for r in result.relations] == [("Alpha", "Beta")]
    assert result.dropped_lines == 2


def test_empty_names_and_descriptions_are_dropped() -> None:
    output = "\n".join(
        [ent('""'), ent("Alpha", "Person", "  "), rel("Alpha", ""), rel("Alpha", "Beta", "", "")]
    )
    result = parse(output)
    assert result.entities == ()
    assert [(r.keywords, r.description) for r in result.relations] == [("", "")]
    assert result.dropped_lines == 3


def test_unknown_record_kind_is_counted() -> None:
    result = parse(D.join(["node", "Alpha", "Person", "d"]))
    assert result == Extraction((), (), 1)


def test_names_are_cleaned_but_keep_case() -> None:
    output = ent("  new\x00 york\tcity\u200b ") + "\n" + ent("iPhone 15") + "\n" + ent("NASA")
    result = parse(output)
    assert [e.name for e in result.entities] == ["new york city", "iPhone 15", "NASA"]


def test_name_and_description_length_bounds() -> None:
    long_name = "N" * 300
    result = parse(ent(long_name, "Person", "x" * 50), max_name_length=256, max_description_length=20)
    assert result.entities[0].name == "N" * 256
    assert result.entities[0].description == "x" * 20
    default = parse(ent("M" * 1000))
    assert len(default.entities[0].name) == 256
    relation = parse(rel("S" * 300, "T" * 300), max_name_length=10)
    assert (relation.relations[0].src, relation.relations[0].tgt) == ("S" * 10, "T" * 10)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("person", "Person"),
        ("PERSON", "Person"),
        ("natural object", "NaturalObject"),
        ("natural_object", "NaturalObject"),
        ("geo", "Geo"),
        ("GEO", "Geo"),
        ("Other", "Other"),
        ("", UNKNOWN_TYPE),
        ("person/organization", UNKNOWN_TYPE),
        ("人物", "人物"),
    ],
)
def test_entity_type_normalisation(raw: str, expected: str) -> None:
    # deliberate difference: upstream 1.5.7 lowercases every type ("person"); lightrag_pg
    # keeps the configured spelling, which the extraction prompt lists
    assert parse(ent("Alpha", raw)).entities[0].entity_type == expected


def test_custom_entity_types_give_canonical_spelling() -> None:
    result = parse(ent("Alpha", "GENE"), entity_types=("gene", "protein"))
    assert result.entities[0].entity_type == "gene"


def test_keywords_are_normalised() -> None:
    result = parse(rel("A", "B", " cooperation，Funding、cooperation ; research,, Research "))
    assert result.relations[0].keywords == "cooperation, Funding, research"


def test_duplicates_within_one_output_are_kept() -> None:
    result = parse(
        "\n".join(
            [
                ent("Alpha", "Person", "one"),
                ent("Alpha", "Person", "two"),
                rel("A", "B"),
                rel("B", "A"),
            ]
        )
    )
    assert [e.description for e in result.entities] == ["one", "two"]
    assert len(result.relations) == 2


def test_chinese_output() -> None:
    output = (
        "entity<|#|>北京大学<|#|>组织<|#|>北京大学是一所大学。\n"
        "relation<|#|>北京大学<|#|>北京<|#|>位于，城市<|#|>北京大学位于北京。"
    )
    result = parse(output)
    assert result.entities[0].name == "北京大学"
    assert result.relations[0].keywords == "位于, 城市"


# ------------------------------------------------------------ gleaning merge


def _e(name: str, desc: str) -> ExtractedEntity:
    return ExtractedEntity(name, "Person", desc, "c", "f")


def _r(src: str, tgt: str, desc: str) -> ExtractedRelation:
    return ExtractedRelation(src, tgt, "k", desc, 1.0, "c", "f")


def test_merge_gleaning() -> None:
    first = Extraction(
        (_e("A", "short"), _e("B", "a long description"), _e("C", "c")),
        (_r("A", "B", "ab"), _r("B", "C", "bc long enough")),
        dropped_lines=1,
    )
    second = Extraction(
        (_e("A", "a much longer description"), _e("B", "shorter"), _e("D", "new")),
        (_r("B", "A", "a longer ab description"), _r("C", "B", "bc"), _r("C", "D", "cd")),
        dropped_lines=2,
    )
    merged = merge_gleaning(first, second)
    assert [(e.name, e.description) for e in merged.entities] == [
        ("A", "a much longer description"),
        ("B", "a long description"),
        ("C", "c"),
        ("D", "new"),
    ]
    assert [(r.src, r.tgt, r.description) for r in merged.relations] == [
        ("B", "A", "a longer ab description"),
        ("B", "C", "bc long enough"),
        ("C", "D", "cd"),
    ]
    assert merged.dropped_lines == 3


def test_merge_gleaning_equal_length_keeps_first_and_empty_passes() -> None:
    first = Extraction((_e("A", "abc"),), ())
    assert merge_gleaning(first, Extraction((_e("A", "xyz"),), ())).entities == (_e("A", "abc"),)
    assert merge_gleaning(first, Extraction((), ())) == first
    assert merge_gleaning(Extraction((), ()), first) == first


# ------------------------------------------------------------------- prompts


def test_extraction_messages_carry_text_between_markers() -> None:
    text = "The Brasca Metro opened Line 4.\nIt quotes ---End of Input Text--- and MISSED inside."
    system, user = extraction_messages(text, entity_types=DEFAULT_ENTITY_TYPES, language="French")
    assert prompt_input_text(user) == text
    assert classify_prompt(user) == "extraction"
    assert user.startswith(prompts.EXTRACTION_HEADER)
    assert "---Input Text---\n" + text + "\n---End of Input Text---" in user
    assert "---Output---" in user
    assert "French" in system and "French" in user
    assert "NaturalObject" in system and "NaturalObject" in user
    assert TUPLE_DELIMITER in system and COMPLETION_DELIMITER in system
    for marker in (prompts.EXTRACTION_MARKER, prompts.GLEANING_MARKER, prompts.SUMMARY_MARKER):
        assert marker not in system
    assert classify_prompt(system) is None


def test_gleaning_prompt_repeats_the_extraction_up_to_the_chunk_and_lists_the_records() -> None:
    text = "BRCA1 binds p53.\n---End of Input Text---\n---Task: Add MISSED Entities and Relations---"
    types = ["Gene", "Protein"]
    system, prompt = gleaning_messages(
        text,
        [("BRCA1", "Gene"), ("p53", "Protein")],
        [("BRCA1", "p53")],
        ["entity<|#|>TP53<|#|>Gene"],
        entity_types=types,
        language="English",
    )
    first_system, first = extraction_messages(text, entity_types=types, language="English")
    assert system == first_system
    head = first[: first.rindex("\n---Output---")]
    assert prompt.startswith(head) and prompt_input_text(prompt) == text
    assert classify_prompt(prompt) == "gleaning" and classify_prompt(first) == "extraction"
    tail = prompt[len(head) :]
    assert "MISSED" in tail and "Gene, Protein" in tail
    assert "- BRCA1 (Gene)\n- p53 (Protein)" in tail and "- BRCA1 — p53" in tail
    assert "- entity<|#|>TP53<|#|>Gene" in tail
    assert tail.endswith("---Output---\n") and prompts.SUMMARY_MARKER not in prompt
    assert COMPLETION_DELIMITER in tail and TUPLE_DELIMITER in tail
    _, empty = gleaning_messages("x", [], [], entity_types=types, language="English")
    assert empty.count("(none)") == 3


def test_malformed_lines_are_kept_for_the_gleaning_pass() -> None:
    answer = (
        "entity<|#|>Alice<|#|>Person<|#|>A person.\n"
        "entity<|#|>Bob<|#|>Person\n"
        "relation<|#|>Alice<|#|>alice<|#|>self<|#|>Talks to herself.\n"
        "relation<|#|>Alice<|#|>Bob<|#|>friends"
    )
    result = parse_extraction(answer, chunk_id="c", file_path="f")
    assert result.dropped_lines == 3
    assert result.malformed == ("entity<|#|>Bob<|#|>Person", "relation<|#|>Alice<|#|>Bob<|#|>friends")
    assert not is_complete(answer) and is_complete(answer + "\n<|COMPLETE|>")
    again = parse_extraction("entity<|#|>Bob<|#|>Person<|#|>B.\n<|COMPLETE|>", chunk_id="c", file_path="f")
    assert merge_gleaning(result, again).malformed == ()


def test_summary_prompt() -> None:
    descriptions = ["First fact.", 'Second "quoted"\nfact with $$.']
    prompt = summary_prompt("entity", "Amara Osei", descriptions, language="German", summary_length=600)
    assert classify_prompt(prompt) == "summary"
    assert prompt_descriptions(prompt) == descriptions
    assert "Kind: entity" in prompt and "Name: Amara Osei" in prompt
    assert "German" in prompt and "600" in prompt
    assert "MISSED" not in prompt and prompts.EXTRACTION_MARKER not in prompt
    relation = summary_prompt("relation", "A <-> B", ["x"], language="English", summary_length=100)
    assert "Kind: relation" in relation and prompt_descriptions(relation) == ["x"]


def test_markers_are_exclusive_to_their_prompt_kind() -> None:
    _, user = extraction_messages("plain text", entity_types=["Person"], language="English")
    assert "MISSED" not in user and prompts.SUMMARY_MARKER not in user
    glean = gleaning_messages("", [], [], entity_types=["Person"], language="English")[1]
    assert prompt_input_text(glean) == ""
    assert prompts.SUMMARY_MARKER not in glean
    assert prompt_descriptions(user) is None
    assert classify_prompt("hello") is None


def test_prompt_argument_errors() -> None:
    bad_kind: Any = "chunk"
    with pytest.raises(InvalidInput):
        summary_prompt(bad_kind, "x", ["d"], language="English", summary_length=10)
    with pytest.raises(InvalidInput):
        summary_prompt("entity", "x", [], language="English", summary_length=10)
    with pytest.raises(ConfigurationError):
        summary_prompt("entity", "x", ["d"], language="English", summary_length=0)
    with pytest.raises(ConfigurationError):
        extraction_messages("t", entity_types=[], language="English")
    not_text: Any = None
    with pytest.raises(InvalidInput):
        extraction_messages(not_text, entity_types=["Person"], language="English")


# --- never raises -----------------------------------------------------------------

_RECORD_PIECES = st.sampled_from(
    [
        *(D, "<|>", "##", "\n", "entity", "relation", "relationship", "(", ")", '"', "<|COMPLETE|>", "```"),
        *("\x00", "\ud800", "\udfff", "9.3e18", "nan", "-5"),
    ]
)
_ANY_TEXT = st.text(st.characters(exclude_categories=()))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ANY_TEXT, _RECORD_PIECES, st.floats().map(str)), max_size=30).map("".join))
def test_parse_extraction_never_raises(output: str) -> None:
    result = parse(output)
    for entity in result.entities:
        assert entity.name and entity.description
        (entity.name + entity.entity_type + entity.description).encode("utf-8")
    for relation in result.relations:
        assert relation.src and relation.tgt
        assert 0 < relation.weight <= MAX_RELATION_WEIGHT
        (relation.src + relation.tgt + relation.keywords + relation.description).encode("utf-8")


@pytest.mark.parametrize(
    "output",
    [
        "\x00" * 1000,
        "\ud800" + D + "entity",
        f"entity{D}{'A' * 200_000}{D}T{D}{'d' * 200_000}",
        f"relation{D}A{D}B{D}k{D}d{D}{'9' * 5000}",
        (f"relation{D}A{D}B{D}k{D}d\n" * 20_000),
        "<|" * 100_000,
    ],
)
def test_parse_extraction_survives_hostile_output(output: str) -> None:
    result = parse(output)
    assert all(0 < r.weight <= MAX_RELATION_WEIGHT for r in result.relations)


def test_lone_surrogates_in_output_become_replacement_characters() -> None:
    result = parse("\n".join([ent("Caf\ud800", "Person", "d\udfff"), rel("Caf\ud800", "B\x00ob")]))
    assert [(e.name, e.description) for e in result.entities] == [("Caf\ufffd", "d\ufffd")]
    assert [(r.src, r.tgt) for r in result.relations] == [("Caf\ufffd", "B ob")]
