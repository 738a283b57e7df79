"""Editing the graph by hand: entities and relations created, edited, renamed, merged and
deleted, each in one transaction, with vectors and the AGE mirror following."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg import GraphItemExists, GraphItemNotFound, InvalidInput, LightRAG
from lightrag_pg.db.doctor import check
from lightrag_pg.testing import StatementCounter, scripted_llm
from tests.conftest import RagFactory
from tests.test_deletion import NO_SUMMARY, SUMMARIES, CountingLLM, insert, snapshot


@pytest.fixture
def graphs(rag_factory: RagFactory) -> Callable[..., Any]:
    """Initialized LightRAGs (scripted LLM); the same workspace when ``workspace`` is given."""

    def factory(workspace: str | None = None, llm: Any = scripted_llm, **settings: Any) -> Any:
        return rag_factory(workspace, llm_model_func=llm, **{**NO_SUMMARY, **settings})

    return factory


async def mirror_matches(rag: LightRAG) -> None:
    """The AGE graph holds exactly the entities and relations of the tables."""
    snap = await snapshot(rag.dsn, rag.workspace)
    snap["graph_vertices"] = [(json.loads(v[0]),) for v in snap["graph_vertices"]]
    snap["graph_edges"] = [(s, t, json.loads(p)) for s, t, p in snap["graph_edges"]]
    vertices = sorted(v[0]["entity_id"] for v in snap["graph_vertices"])
    assert vertices == sorted(e[0] for e in snap["entities"])
    edges = sorted(tuple(sorted((s, t))) for s, t, _ in snap["graph_edges"])
    assert edges == sorted((r[0], r[1]) for r in snap["relations"])
    by_pair = {tuple(sorted((s, t))): p for s, t, p in snap["graph_edges"]}
    for src, tgt, _keywords, description, weight, *_ in snap["relations"]:
        assert by_pair[(src, tgt)]["description"] == description
        assert by_pair[(src, tgt)]["weight"] == weight
    names = {e[0]: e for e in snap["entities"]}
    for (props,) in snap["graph_vertices"]:
        assert props["description"] == names[props["entity_id"]][2]
    vectors = {v[0]: v[1] for v in snap["entity_vectors"]}
    for name, _, description, *_ in snap["entities"]:
        assert vectors[name] == f"{name}\n{description}"
    rel_vectors = {(v[0], v[1]): v[2] for v in snap["relation_vectors"]}
    for src, tgt, keywords, description, *_ in snap["relations"]:
        assert rel_vectors[(src, tgt)] == f"{keywords}\t{src}\n{tgt}\n{description}"
    conn = await asyncpg.connect(rag.dsn)
    try:
        report = await check(conn, rag.workspace)
    finally:
        await conn.close()
    assert report.ok, report.summary()


async def test_create_edit_and_delete_entity(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    info = await rag.acreate_entity("Zeta Corp", {"entity_type": "Organization", "description": "A maker."})
    assert info["graph_data"]["entity_type"] == "Organization"
    assert info["graph_data"]["description"] == "A maker."
    assert info["source_id"] == "manual_creation"
    assert [c["manual"] for c in info["contributions"]] == [True]
    info = await rag.aedit_entity("Zeta Corp", {"description": "A maker of things."})
    assert info["graph_data"]["description"] == "A maker of things."
    assert info["graph_data"]["entity_type"] == "Organization"
    with_vector = await rag.aget_entity_info("Zeta Corp", include_vector_data=True)
    assert with_vector["vector_data"]["content"] == "Zeta Corp\nA maker of things."
    assert len(with_vector["vector_data"]["vector"]) == 32
    await mirror_matches(rag)
    result = await rag.adelete_by_entity("Zeta Corp")
    assert result["status"] == "success" and result["relations_deleted"] == 0
    with pytest.raises(GraphItemNotFound):
        await rag.aget_entity_info("Zeta Corp")
    await mirror_matches(rag)


async def test_bad_entity_input_changes_nothing(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0", "d1"])
    before = await snapshot(rag.dsn, rag.workspace)
    with pytest.raises(GraphItemExists, match="already exists"):
        await rag.acreate_entity("Alice", {"description": "again"})
    with pytest.raises(InvalidInput, match="description is required"):
        await rag.acreate_entity("Nobody", {"entity_type": "Person"})
    with pytest.raises(InvalidInput, match="cannot set colour"):
        await rag.aedit_entity("Alice", {"colour": "blue"})
    with pytest.raises(GraphItemNotFound, match="'Nobody'"):
        await rag.aedit_entity("Nobody", {"description": "x"})
    with pytest.raises(GraphItemNotFound):
        await rag.adelete_by_entity("Nobody")
    with pytest.raises(GraphItemExists, match="allow_merge"):
        await rag.aedit_entity("Alice", {"entity_name": "Bob"})
    with pytest.raises(InvalidInput, match="renaming is not allowed"):
        await rag.aedit_entity("Alice", {"entity_name": "Alicia"}, allow_rename=False)
    with pytest.raises(InvalidInput, match="one of its own sources"):
        await rag.amerge_entities(["Alice", "Bob"], "Alice")
    with pytest.raises(GraphItemNotFound, match="'Nobody'"):
        await rag.amerge_entities(["Alice", "Nobody"], "Carol")
    with pytest.raises(GraphItemNotFound):
        await rag.acreate_relation("Alice", "Nobody", {"description": "x"})
    with pytest.raises(GraphItemExists):
        await rag.acreate_relation("Bob", "Alice", {"description": "x"})
    with pytest.raises(GraphItemNotFound):
        await rag.aedit_relation("Alice", "Globex", {"description": "x"})
    with pytest.raises(InvalidInput, match="weight"):
        await rag.aedit_relation("Alice", "Bob", {"weight": "heavy"})
    with pytest.raises(GraphItemNotFound):
        await rag.adelete_by_relation("Alice", "Globex")
    assert await snapshot(rag.dsn, rag.workspace) == before


async def test_manual_edit_survives_document_delete(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0", "d1"])
    await rag.aedit_entity("Acme", {"description": "Acme is a rocket company.", "entity_type": "Company"})
    await rag.acreate_relation("Acme", "Paris", {"description": "Acme sells in Paris.", "keywords": "sales"})
    await rag.aedit_relation("Alice", "Bob", {"description": "Old friends.", "weight": 5.0})
    await rag.adelete_by_doc_id(["d0"])
    acme = await rag.aget_entity_info("Acme")
    assert acme["graph_data"]["description"] == "Acme is a rocket company."
    assert acme["graph_data"]["entity_type"] == "Company"
    relation = await rag.aget_relation_info("Paris", "Acme")
    assert relation["graph_data"]["description"] == "Acme sells in Paris."
    # Paris and Alice came from d0 only: their manual anchors keep them for the manual relations
    edge = await rag.aget_relation_info("Alice", "Bob")
    assert edge["graph_data"]["description"] == "Old friends." and edge["graph_data"]["weight"] == 5.0
    assert "manual_creation" in (await rag.aget_entity_info("Paris"))["source_id"]
    await mirror_matches(rag)
    # indexing d0 again does not overwrite the pinned fields
    await insert(rag, ["d0"])
    acme = await rag.aget_entity_info("Acme")
    assert acme["graph_data"]["description"] == "Acme is a rocket company."
    assert len([c for c in acme["contributions"] if not c["manual"]]) == 2
    await mirror_matches(rag)


async def test_merge_redirects_drops_self_loops_and_merges_duplicates(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0", "d1"])
    before = await snapshot(rag.dsn, rag.workspace)
    old = {(r[0], r[1]): r for r in before["relations"]}
    info = await rag.amerge_entities(["Bob"], "Alice")
    after = await snapshot(rag.dsn, rag.workspace)
    pairs = {(r[0], r[1]): r for r in after["relations"]}
    assert not any("Bob" in p for p in pairs)
    assert ("Alice", "Bob") not in pairs  # the self-loop is gone
    assert ("Alice", "Globex") in pairs and ("Alice", "Berlin") in pairs
    # (Alice, Paris) and (Bob, Paris) became one relation holding both contributions
    merged = pairs[("Alice", "Paris")]
    assert merged[4] == old[("Alice", "Paris")][4] + old[("Bob", "Paris")][4]
    fragments = [f for f in after["relation_fragments"] if f[:2] == ("Alice", "Paris")]
    assert len(fragments) == 2
    assert len(pairs) == len(old) - 1 - 1  # one self-loop dropped, one duplicate merged
    bob_fragments = [f for f in before["entity_fragments"] if f[0] == "Bob"]
    alice_fragments = [f for f in after["entity_fragments"] if f[0] == "Alice"]
    assert len(alice_fragments) == len(bob_fragments) + len(
        [f for f in before["entity_fragments"] if f[0] == "Alice"]
    )
    assert info["graph_data"]["entity_type"] == "Person"
    assert {d for d, n in after["doc_entities"] if n == "Alice"} == {"d0", "d1"}
    assert ("d1", "Alice", "Globex") in after["doc_relations"]
    await mirror_matches(rag)
    # a later delete rebuilds the merged entity from what remains
    await rag.adelete_by_doc_id(["d1"])
    assert (await rag.aget_entity_info("Alice"))["source_id"].count("chunk-") == 1
    await mirror_matches(rag)


async def test_rename_and_rename_with_merge(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0", "d1"])
    info = await rag.aedit_entity("Globex", {"entity_name": "Globex Inc"})
    assert info["entity_name"] == "Globex Inc"
    with pytest.raises(GraphItemNotFound):
        await rag.aget_entity_info("Globex")
    assert (await rag.aget_relation_info("Globex Inc", "Acme"))["graph_data"]["weight"] > 0
    await mirror_matches(rag)
    info = await rag.aedit_entity(
        "Globex Inc", {"entity_name": "Acme", "description": "One company."}, allow_merge=True
    )
    assert info["graph_data"]["description"] == "One company."
    names = [e[0] for e in (await snapshot(rag.dsn, rag.workspace))["entities"]]
    assert "Globex Inc" not in names and "Acme" in names
    with pytest.raises(GraphItemNotFound):
        await rag.aget_relation_info("Acme", "Globex Inc")
    await mirror_matches(rag)


async def test_statement_counts(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0", "d1"])
    counts: dict[str, int] = {}

    async def count(label: str, call: Any) -> None:
        with StatementCounter() as counter:
            await call
        counts[label] = counter.statements

    await count("create_entity", rag._run.editor().create_entity("Zeta", {"description": "z"}))
    await count("edit_entity", rag._run.editor().edit_entity("Acme", {"description": "A company."}))
    await count("rename_entity", rag._run.editor().edit_entity("Zeta", {"entity_name": "Zeta Two"}))
    await count("fold_entities", rag._run.editor().fold_entities(["Bob", "Berlin"], "Alice"))
    await count(
        "create_relation",
        rag._run.editor().upsert_relation("Zeta Two", "Acme", {"description": "r"}, create=True),
    )
    await count(
        "edit_relation", rag._run.editor().upsert_relation("Zeta Two", "Acme", {"weight": 2.0}, create=False)
    )
    await count("delete_relation", rag._run.editor().delete_relation("Acme", "Zeta Two"))
    await count("delete_entity", rag._run.editor().delete_entity("Zeta Two"))
    await count("entity_info", rag._run.editor().read_entity("Alice"))
    print(counts)
    assert counts == {
        "create_entity": 8,
        "edit_entity": 9,  # 2 reads; BEGIN, lock, manual fragments out, row, fragment, vector, COMMIT
        "rename_entity": 13,
        "fold_entities": 16,  # 4 reads; 12 in the one transaction
        "create_relation": 11,
        "edit_relation": 11,
        "delete_relation": 3,
        "delete_entity": 3,
        "entity_info": 2,
    }


async def test_concurrent_edits_of_one_entity_lose_nothing(graphs: Callable[..., Any]) -> None:
    first = await graphs()
    await insert(first, ["d0"])
    second = await graphs(workspace=first.workspace)
    for round_ in range(3):
        await asyncio.gather(
            first.aedit_entity("Alice", {"entity_type": f"Type{round_}"}),
            second.aedit_entity("Alice", {"description": f"Description {round_}."}),
        )
        info = await first.aget_entity_info("Alice")
        assert info["graph_data"]["entity_type"] == f"Type{round_}"
        assert info["graph_data"]["description"] == f"Description {round_}."
    await mirror_matches(first)


CUSTOM_KG = {
    "chunks": [
        {"content": "Dana founded Helix in Oslo.", "source_id": "c1", "file_path": "kg.json"},
        {"content": "Helix partners with Acme.", "source_id": "c2"},
    ],
    "entities": [
        {"entity_name": "Dana", "entity_type": "Person", "description": "Founder.", "source_id": "c1"},
        {
            "entity_name": "Helix",
            "entity_type": "Organization",
            "description": "A firm.",
            "source_id": "c1<SEP>c2",
        },
    ],
    "relationships": [
        {
            "src_id": "Dana",
            "tgt_id": "Helix",
            "description": "founded",
            "keywords": "founder",
            "source_id": "c1",
        },
        {"src_id": "Helix", "tgt_id": "Acme", "description": "partners", "weight": 2.0, "source_id": "c2"},
    ],
}


async def test_custom_kg_insert_and_delete(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0"])
    before = await snapshot(rag.dsn, rag.workspace)
    with StatementCounter() as counter:
        result = await rag.ainsert_custom_kg(CUSTOM_KG, full_doc_id="kg-1")
    assert result == {"status": "success", "doc_id": "kg-1", "chunks": 2, "entities": 3, "relationships": 2}
    assert counter.statements == 20  # 5 reads; 15 in the one transaction
    helix = await rag.aget_entity_info("Helix")
    assert helix["graph_data"]["description"] == "A firm."
    assert len(helix["contributions"]) == 2
    acme = await rag.aget_entity_info("Acme")
    assert any(c["doc_id"] == "kg-1" for c in acme["contributions"])
    assert (await rag.aget_relation_info("Acme", "Helix"))["graph_data"]["weight"] == 2.0
    counts = await rag.aget_status_counts()
    assert counts["processed"] == 2
    await mirror_matches(rag)
    await rag.adelete_by_doc_id("kg-1")
    assert await snapshot(rag.dsn, rag.workspace) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda kg: kg["entities"][0].update(source_id="c9"), "'c9' names no chunk"),
        (lambda kg: kg["relationships"][0].update(source_id="c1<SEP>nope"), "'nope' names no chunk"),
        (lambda kg: kg["relationships"][1].update(tgt_id="Nobody"), "'Nobody', which is neither"),
        (lambda kg: kg["relationships"][1].update(weight="x"), "weight must be a finite number"),
        (lambda kg: kg["chunks"].append({"content": "again", "source_id": "c1"}), "used by two chunks"),
        (lambda kg: kg.update(nodes=[]), "unknown keys nodes"),
        (lambda kg: kg["entities"][1].pop("description"), "description must be a non-empty string"),
    ],
)
async def test_custom_kg_dangling_references(graphs: Callable[..., Any], change: Any, message: str) -> None:
    rag = await graphs()
    await insert(rag, ["d0"])
    before = await snapshot(rag.dsn, rag.workspace)
    kg = json.loads(json.dumps(CUSTOM_KG))
    change(kg)
    with pytest.raises(InvalidInput, match=message):
        await rag.ainsert_custom_kg(kg)
    assert await snapshot(rag.dsn, rag.workspace) == before


@pytest.mark.slow
async def test_concurrent_edits_from_two_processes_lose_nothing(graphs: Callable[..., Any]) -> None:
    rag = await graphs()
    await insert(rag, ["d0"])
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    rounds = 15
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.edit_worker",
            rag.dsn,
            rag.workspace,
            "Alice",
            field,
            str(rounds),
            cwd=root,
            env=env,
            stderr=asyncio.subprocess.PIPE,
        )
        for field in ("entity_type", "description")
    ]
    for worker in workers:
        _, err = await worker.communicate()
        assert worker.returncode == 0, err.decode()
    info = await rag.aget_entity_info("Alice")
    assert info["graph_data"]["entity_type"] == f"entity_type {rounds - 1}"
    assert info["graph_data"]["description"] == f"description {rounds - 1}"
    assert [c["pinned"] for c in info["contributions"]].count(True) == 1
    await mirror_matches(rag)


async def test_an_edit_that_loses_the_race_is_planned_again(graphs: Callable[..., Any]) -> None:
    first = await graphs()
    await insert(first, ["d0"])
    second = await graphs(workspace=first.workspace)
    editor = first._run.editor()
    original = editor.apply
    calls = 0

    async def racing_apply(edit: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # another writer lands between the plan and its transaction
            await second.aedit_entity("Alice", {"entity_type": "Raced"})
        await original(edit)

    editor.apply = racing_apply  # type: ignore[method-assign]
    info = await first.aedit_entity("Alice", {"description": "Mine."})
    assert calls == 2
    assert (info["graph_data"]["entity_type"], info["graph_data"]["description"]) == ("Raced", "Mine.")


async def test_a_merge_racing_a_document_insert_keeps_the_new_contributions(
    graphs: Callable[..., Any],
) -> None:
    first = await graphs()
    await insert(first, ["d0"])
    second = await graphs(workspace=first.workspace)
    editor = first._run.editor()
    original = editor.apply
    calls = 0

    async def racing_apply(edit: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # d1 adds relations to Bob after the merge was planned
            await insert(second, ["d1"])
        await original(edit)

    editor.apply = racing_apply  # type: ignore[method-assign]
    await first.amerge_entities(["Bob"], "Alice")
    assert calls == 2
    snap = await snapshot(first.dsn, first.workspace)
    assert not [r for r in snap["relations"] if "Bob" in r[:2]]
    assert ("Alice", "Globex") in {(r[0], r[1]) for r in snap["relations"]}
    assert {f[3] for f in snap["entity_fragments"] if f[0] == "Alice"} == {"d0", "d1"}
    await mirror_matches(first)


async def test_rename_keeps_moved_relation_descriptions_without_a_model_call(
    graphs: Callable[..., Any],
) -> None:
    llm = CountingLLM()
    rag = await graphs(llm=llm, **SUMMARIES)
    await insert(rag, ["d0", "d1", "d3", "d5"])
    before = await rag.aget_relation_info("Alice", "Bob")
    assert len(before["contributions"]) == 2 and before["graph_data"]["description"].startswith("Summary")
    llm.calls.clear()
    await rag.aedit_entity("Bob", {"entity_name": "Robert"})
    assert llm.calls["summary"] == 1  # Robert's own description; none for the moved relations
    after = await rag.aget_relation_info("Alice", "Robert")
    assert after["graph_data"]["description"] == before["graph_data"]["description"]
    await mirror_matches(rag)
