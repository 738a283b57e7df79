"""The differential benchmark's comparison: causes of differing rows and the tie-aware Jaccard."""

from __future__ import annotations

from typing import Any

from bench.common import SHARED_PROMPTS, Query
from bench.differential import param_of
from bench.differential_compare import (
    Distances,
    Graph,
    Retrieved,
    View,
    explain,
    jaccard,
    passes,
    tie_aware_jaccard,
    ties_of,
    vector_cut,
)

Pair = tuple[str, str]


def graph(relations: dict[Pair, float]) -> Graph:
    names = {n for pair in relations for n in pair}
    return Graph(
        {n: ("person", f"about {n}") for n in names},
        {tuple(sorted(p)): (w, frozenset({"k"}), f"{p[0]} and {p[1]}") for p, w in relations.items()},  # type: ignore[misc]
    )


def view(
    g: Graph,
    entities: dict[str, float],
    relations: dict[Pair, float],
    got: tuple[list[str], list[Pair]],
    info: dict[str, int] | None = None,
    strict: bool = False,
) -> View:
    return View(
        g,
        Distances(entities, relations),
        Retrieved(tuple(got[0]), tuple(got[1]), (), info=info or {}),
        strict,
    )


def causes(differences: list[Any]) -> dict[Any, str]:
    return {(d.kind, d.item if isinstance(d.item, str) else tuple(d.item)): d.cause for d in differences}


def test_the_harness_asks_lightrag_pg_without_lexical_search() -> None:
    # upstream has no lexical search: the comparison must be of the vector and graph paths only
    param = param_of(Query("q", "mix", ["h"], ["l"]))
    assert param.lexical is False
    assert param.enable_rerank is False
    assert set(SHARED_PROMPTS) == {
        "rag_response",
        "kg_query_context",
        "naive_rag_response",
        "naive_query_context",
    }


def test_the_threshold_is_inclusive_for_lightrag_pg_and_strict_for_upstream() -> None:
    assert passes(0.8, 0.2, strict=False)
    assert not passes(0.8, 0.2, strict=True)
    assert vector_cut({"a": 0.1, "b": 0.8, "c": 0.5}, 3, 0.2, strict=False) == 0.8
    assert vector_cut({"a": 0.1, "b": 0.8, "c": 0.5}, 3, 0.2, strict=True) is None
    assert vector_cut({"a": 0.1, "b": 0.3, "c": 0.3}, 2, 0.2, strict=True) == 0.3


def test_relations_tied_at_the_top_k_cut_agree_in_the_tie_aware_figure_only() -> None:
    # global mode, top_k 2: A-B is nearest, then B-C and C-D at exactly the same distance;
    # each system keeps one of the two (its index's order), and their endpoints follow
    g = graph({("A", "B"): 1.0, ("B", "C"): 1.0, ("C", "D"): 1.0, ("D", "E"): 1.0})
    distances = {("A", "B"): 0.1, ("B", "C"): 0.4, ("C", "D"): 0.4, ("D", "E"): 0.7}
    ours = view(g, {}, distances, (["A", "B", "C"], [("A", "B"), ("B", "C")]))
    theirs = view(g, {}, distances, (["A", "B", "C", "D"], [("A", "B"), ("C", "D")]), strict=True)
    diffs = explain("global", ours, theirs, top_k=2, threshold=0.2, chunk_top_k=20)
    assert causes(diffs) == {
        ("relations", ("B", "C")): "tie",
        ("relations", ("C", "D")): "tie",
        ("entities", "D"): "tie",
    }
    a, b = ours.got.relations, theirs.got.relations
    assert jaccard(a, b) == 1 / 3
    assert tie_aware_jaccard(a, b, ties_of(diffs, "relations")) == 1.0
    assert tie_aware_jaccard(ours.got.entities, theirs.got.entities, ties_of(diffs, "entities")) == 1.0


def test_a_row_tied_in_one_system_only_is_not_a_tie() -> None:
    # upstream's C-D is nearer than B-C (its description differs): not an order of equal rows
    g = graph({("A", "B"): 1.0, ("B", "C"): 1.0, ("C", "D"): 1.0})
    ours = view(
        g,
        {},
        {("A", "B"): 0.1, ("B", "C"): 0.4, ("C", "D"): 0.4},
        (["A", "B", "C"], [("A", "B"), ("B", "C")]),
    )
    theirs = view(
        g,
        {},
        {("A", "B"): 0.1, ("B", "C"): 0.4, ("C", "D"): 0.3},
        (["A", "B", "C", "D"], [("A", "B"), ("C", "D")]),
    )
    diffs = explain("global", ours, theirs, top_k=2, threshold=0.2, chunk_top_k=20)
    assert causes(diffs)[("relations", ("C", "D"))] == "relation-vector"
    assert causes(diffs)[("relations", ("B", "C"))] == "relation-vector"
    assert ties_of(diffs, "relations") == frozenset()


def test_local_differences_follow_an_entity_found_by_one_system() -> None:
    # local mode, top_k 1: upstream's description of Y brings it nearer than X, so its
    # edges replace X's; X's edges "follow" the entity, and X itself is an entity-vector cause
    g = graph({("X", "P"): 1.0, ("Y", "Q"): 1.0})
    ours = view(g, {"X": 0.3, "Y": 0.4}, {}, (["X"], [("P", "X")]))
    theirs = view(g, {"X": 0.3, "Y": 0.2}, {}, (["Y"], [("Q", "Y")]), strict=True)
    diffs = explain("local", ours, theirs, top_k=1, threshold=0.2, chunk_top_k=20)
    assert causes(diffs) == {
        ("entities", "X"): "entity-vector",
        ("entities", "Y"): "entity-vector",
        ("relations", ("P", "X")): "follows-entity",
        ("relations", ("Q", "Y")): "follows-entity",
    }


def test_edges_tied_on_degree_and_weight_at_the_token_cut_are_ties() -> None:
    # one found entity H; its edges rank by (edge degree, weight); the relation budget cut
    # falls inside a group of equal keys, which each system orders its own way
    g = graph({("H", "A"): 2.0, ("H", "B"): 1.0, ("H", "C"): 1.0, ("H", "D"): 1.0})
    info = {"total_relations_found": 4, "relations_after_truncation": 2}
    ours = view(g, {"H": 0.1}, {}, (["H"], [("A", "H"), ("B", "H")]), info)
    theirs = view(g, {"H": 0.1}, {}, (["H"], [("A", "H"), ("C", "H")]), info, strict=True)
    diffs = explain("local", ours, theirs, top_k=40, threshold=0.2, chunk_top_k=20)
    assert causes(diffs) == {("relations", ("B", "H")): "tie", ("relations", ("C", "H")): "tie"}


def test_a_shorter_budget_cut_is_a_budget_cause_not_a_tie() -> None:
    # upstream's longer descriptions fill the relation budget one edge earlier
    g = graph({("H", "A"): 3.0, ("H", "B"): 2.0, ("H", "C"): 1.0})
    ours = view(
        g,
        {"H": 0.1},
        {},
        (["H"], [("A", "H"), ("B", "H")]),
        {"total_relations_found": 3, "relations_after_truncation": 2},
    )
    theirs = view(
        g,
        {"H": 0.1},
        {},
        (["H"], [("A", "H")]),
        {"total_relations_found": 3, "relations_after_truncation": 1},
        strict=True,
    )
    diffs = explain("local", ours, theirs, top_k=40, threshold=0.2, chunk_top_k=20)
    assert causes(diffs) == {("relations", ("B", "H")): "relation-budget"}


def test_a_nearer_row_one_vector_search_skipped_is_an_index_miss() -> None:
    # both systems hold the same distances; upstream returned C-D (0.5) but not B-C (0.3):
    # an exact search cannot do that, an approximate index scan can
    g = graph({("A", "B"): 1.0, ("B", "C"): 1.0, ("C", "D"): 1.0})
    distances = {("A", "B"): 0.1, ("B", "C"): 0.3, ("C", "D"): 0.5}
    ours = view(g, {}, distances, (["A", "B", "C"], [("A", "B"), ("B", "C")]))
    theirs = view(g, {}, distances, (["A", "B", "C", "D"], [("A", "B"), ("C", "D")]), strict=True)
    diffs = explain("global", ours, theirs, top_k=2, threshold=0.2, chunk_top_k=20)
    assert causes(diffs)[("relations", ("B", "C"))] == "index-miss"
    # and C-D, beyond the exact top-2 cut (0.3), took the skipped row's place
    assert causes(diffs)[("relations", ("C", "D"))] == "index-miss"


def test_equal_keys_in_another_order_before_a_token_cut_are_a_tie_order() -> None:
    # hybrid-like entity budget: both lists hold entities of the same keys position by
    # position, but X and Y (equal distance) come in another order, so the budget keeps
    # a different one of them
    g = graph({("A", "B"): 1.0})
    entities = {"A": 0.1, "X": 0.3, "Y": 0.3}
    info = {"total_entities_found": 3, "entities_after_truncation": 2}
    ours = view(g, entities, {}, (["A", "X"], []), info)
    theirs = view(g, entities, {}, (["A", "Y"], []), info, strict=True)
    diffs = explain("hybrid", ours, theirs, top_k=40, threshold=0.2, chunk_top_k=20)
    assert causes(diffs) == {("entities", "X"): "tie-order", ("entities", "Y"): "tie-order"}
    assert tie_aware_jaccard(ours.got.entities, theirs.got.entities, ties_of(diffs, "entities")) == 1.0
