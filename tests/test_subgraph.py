"""Subgraphs for visualisation and entity labels: upstream's shape, computed in SQL, few statements."""

from __future__ import annotations

import json

import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import InvalidInput
from lightrag_pg.store.rows import EntityRow, RelationRow
from lightrag_pg.testing import StatementCounter

NASTY = 'O\'Brien $$ "quoted" ; DROP TABLE x; --'

# Hub H with leaves A1..A5; A1-B1-C1 a path away from the hub; A2-A3-H a triangle;
# X-Y an island; Lonely has no edge.
EDGES = [
    ("H", "A1"),
    ("H", "A2"),
    ("H", "A3"),
    ("H", "A4"),
    ("H", "A5"),
    ("A1", "B1"),
    ("B1", "C1"),
    ("A2", "A3"),
    ("X", "Y"),
    ("A4", NASTY),
]
SEARCHED = ["Alice", "Alice Cooper", "Malice Corp", "Bob_Alice", "Alicia", "Bob", "ALICE_IN_WONDERLAND"]
NAMES = sorted({n for pair in EDGES for n in pair} | {"Lonely"})


async def seed(rag: LightRAG) -> None:
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(
            [EntityRow(n, "Thing", f"about {n}", source_ids=["c1"]) for n in NAMES]
        )
        await uow.graph.upsert_relations_if_unchanged(
            [RelationRow(a, b, keywords="k", description=f"{a} and {b}", weight=2.0) for a, b in EDGES]
        )


def pairs(graph: dict) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in graph["edges"]}


async def test_breadth_first_subgraph_in_upstream_shape(rag: LightRAG) -> None:
    await seed(rag)
    graph = (await rag.aget_knowledge_graph("H", max_depth=1)).to_dict()
    json.dumps(graph)
    assert [n["id"] for n in graph["nodes"]] == ["H", "A1", "A2", "A3", "A4", "A5"]
    node = graph["nodes"][0]
    assert node["labels"] == ["H"]
    assert node["properties"]["entity_id"] == "H"
    assert node["properties"]["entity_type"] == "Thing"
    assert node["properties"]["description"] == "about H"
    assert node["properties"]["source_id"] == "c1"
    assert node["properties"]["degree"] == 5 and node["properties"]["depth"] == 0
    assert pairs(graph) == {("A1", "H"), ("A2", "H"), ("A3", "H"), ("A4", "H"), ("A5", "H"), ("A2", "A3")}
    edge = next(e for e in graph["edges"] if e["source"] == "A2" and e["target"] == "A3")
    assert edge["id"] == "A2-A3" and edge["type"] == "DIRECTED"
    assert edge["properties"]["weight"] == 2.0
    assert edge["properties"]["description"] == "A2 and A3"
    assert edge["properties"]["keywords"] == "k"
    assert graph["is_truncated"] is False


async def test_depth_is_the_shortest_distance_and_bounds_the_walk(rag: LightRAG) -> None:
    await seed(rag)
    depth2 = (await rag.aget_knowledge_graph("H", max_depth=2)).to_dict()
    depths = {n["id"]: n["properties"]["depth"] for n in depth2["nodes"]}
    assert depths == {"H": 0, "A1": 1, "A2": 1, "A3": 1, "A4": 1, "A5": 1, "B1": 2, NASTY: 2}
    assert ("B1", "C1") not in pairs(depth2)
    depth3 = await rag.aget_knowledge_graph("C1", max_depth=3)
    assert [n.id for n in depth3.nodes] == ["C1", "B1", "A1", "H"]
    only = await rag.aget_knowledge_graph("C1", max_depth=0)
    assert [n.id for n in only.nodes] == ["C1"] and only.edges == []


async def test_truncation_keeps_closest_then_highest_degree_then_name(rag: LightRAG) -> None:
    await seed(rag)
    graph = await rag.aget_knowledge_graph("H", max_depth=3, max_nodes=4)
    # depth 1 has A1..A5; A1, A2, A3, A4 have degree 2, A5 degree 1.
    assert [n.id for n in graph.nodes] == ["H", "A1", "A2", "A3"]
    assert graph.is_truncated is True
    kept_edges = {(e.source, e.target) for e in graph.edges}
    assert kept_edges == {("A1", "H"), ("A2", "H"), ("A3", "H"), ("A2", "A3")}
    again = await rag.aget_knowledge_graph("H", max_depth=3, max_nodes=4)
    assert again == graph
    exact = await rag.aget_knowledge_graph("X", max_depth=3, max_nodes=2)
    assert [n.id for n in exact.nodes] == ["X", "Y"] and exact.is_truncated is False


async def test_a_hub_adds_its_heaviest_neighbours_first_and_more_on_request(rag: LightRAG) -> None:
    leaves = [f"L{i:02d}" for i in range(12)]
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(
            [EntityRow(n, "Thing", f"about {n}", source_ids=["c1"]) for n in ["Hub", "Far", *leaves]]
        )
        await uow.graph.upsert_relations_if_unchanged(
            [
                RelationRow("Hub", n, keywords="k", description="d", weight=float(i % 4))
                for i, n in enumerate(leaves)
            ]
            + [RelationRow("Far", "L00", keywords="k", description="d", weight=1.0)]
        )
    capped = await rag.aget_knowledge_graph("Hub", max_depth=2, max_neighbours=3)
    # weights 3.0 for L03, L07, L11: the heaviest three; L00 is not kept, so Far is not reached.
    assert [n.id for n in capped.nodes] == ["Hub", "L03", "L07", "L11"]
    hub = capped.nodes[0]
    assert hub.properties["degree"] == 12 > sum("Hub" in (e.source, e.target) for e in capped.edges)
    more = await rag.aget_knowledge_graph("Hub", max_depth=1, max_neighbours=6)
    assert {n.id for n in capped.nodes} < {n.id for n in more.nodes} and len(more.nodes) == 7
    assert {n.id for n in more.nodes[1:]} == {"L03", "L07", "L11", "L02", "L06", "L10"}  # weights 3, 2
    whole = await rag.aget_knowledge_graph("Hub", max_depth=2)
    assert len(whole.nodes) == 14
    with pytest.raises(InvalidInput, match="max_neighbours"):
        await rag.aget_knowledge_graph("Hub", max_neighbours=0)


async def test_star_gives_the_highest_degree_nodes_and_the_edges_among_them(rag: LightRAG) -> None:
    await seed(rag)
    graph = await rag.aget_knowledge_graph("*", max_nodes=3)
    assert [n.id for n in graph.nodes] == ["H", "A1", "A2"]
    assert {(e.source, e.target) for e in graph.edges} == {("A1", "H"), ("A2", "H")}
    assert graph.is_truncated is True
    whole = await rag.aget_knowledge_graph("*")
    assert len(whole.nodes) == len(NAMES) and whole.is_truncated is False
    assert whole.nodes[-1].id == "Lonely"
    assert len(whole.edges) == len(EDGES)


async def test_unknown_label_gives_an_empty_graph(rag: LightRAG) -> None:
    await seed(rag)
    graph = await rag.aget_knowledge_graph("nobody")
    assert graph.to_dict() == {"nodes": [], "edges": [], "is_truncated": False}


async def test_subgraph_takes_two_statements(rag: LightRAG) -> None:
    await seed(rag)
    for label in ("H", "*", NASTY):
        with StatementCounter() as counter:
            graph = await rag.aget_knowledge_graph(label, max_depth=3)
        assert graph.nodes
        assert counter.statements == 2, (label, counter.by_method)
    with StatementCounter() as counter:
        await rag.aget_knowledge_graph("nobody")
    assert counter.statements == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_depth": -1}, "max_depth"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"max_nodes": True}, "max_nodes"),
        ({"max_depth": "2"}, "max_depth"),
    ],
)
async def test_bad_subgraph_parameters_are_refused(rag: LightRAG, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        await rag.aget_knowledge_graph("H", **kwargs)


async def test_empty_label_is_refused(rag: LightRAG) -> None:
    with pytest.raises(InvalidInput, match="label"):
        await rag.aget_knowledge_graph("")


async def test_labels_and_popular_labels(rag: LightRAG) -> None:
    await seed(rag)
    with StatementCounter() as counter:
        labels = await rag.aget_graph_labels()
        popular = await rag.aget_popular_labels(4)
    assert counter.statements == 2
    assert labels == sorted(NAMES)
    assert popular == ["H", "A1", "A2", "A3"]
    everything = await rag.aget_popular_labels(100)
    assert everything[-1] == "Lonely" and len(everything) == len(NAMES)
    with pytest.raises(InvalidInput):
        await rag.aget_popular_labels(0)


async def test_label_search_ranks_exact_prefix_word_substring_then_fuzzy(rag: LightRAG) -> None:
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(name=n) for n in SEARCHED])
    with StatementCounter() as counter:
        found = await rag.asearch_labels("alice")
    assert counter.statements == 1
    assert found == ["Alice", "Alice Cooper", "ALICE_IN_WONDERLAND", "Bob_Alice", "Malice Corp", "Alicia"]
    assert await rag.asearch_labels("  ALICE  ", limit=2) == ["Alice", "Alice Cooper"]
    typo = await rag.asearch_labels("alise")
    assert typo[0] == "Alice"
    assert "Bob" not in typo
    assert await rag.asearch_labels("   ") == []
    assert await rag.asearch_labels("%") == []


async def test_label_search_takes_names_literally(rag: LightRAG) -> None:
    await seed(rag)
    assert (await rag.asearch_labels("brien $$"))[0] == NASTY
    assert await rag.asearch_labels("_") == []
