"""The graph-management commands end to end: docs, entity, relation, graph, export,
import-kg, clear-cache and delete, in-process against the test server and the scripted LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lightrag_pg.cli import main
from tests.test_graph_edit import CUSTOM_KG


@pytest.mark.slow
def test_graph_management_commands(
    cli_env: None, dsn: str, workspace_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("Alice met Bob in Paris. Alice works at Acme.", encoding="utf-8")
    (folder / "b.txt").write_text("Bob joined Globex in Berlin. Acme and Globex compete.", encoding="utf-8")
    base = ["--dsn", dsn, "--workspace", workspace_name]

    def run(*argv: str, code: int = 0) -> str:
        assert main([*base, *argv]) == code
        captured = capsys.readouterr()
        return captured.out if code == 0 else captured.err

    run("insert", str(folder))
    counts = json.loads(run("docs", "--counts", "--json"))
    assert counts["processed"] == 2 and counts["all"] == 2
    listing = json.loads(run("docs", "--status", "processed", "--json"))
    assert {Path(d["file_path"]).name for d in listing["documents"]} == {"a.md", "b.txt"}
    assert "page 1 of 1 (2 documents)" in run("docs")

    alice = json.loads(run("entity", "show", "Alice", "--json"))
    assert alice["graph_data"]["entity_type"] == "Person" and alice["contributions"]
    assert "A chemist." in run("entity", "edit", "Alice", "--description", "A chemist.")
    assert "Alicia (Person)" in run("entity", "rename", "Alice", "Alicia")
    merged = json.loads(run("entity", "merge", "Alicia", "Bob", "--json"))
    assert merged["entity_name"] == "Alicia"
    assert run("entity", "show", "Bob", code=2).startswith("error: no entity named 'Bob'")
    err = run("entity", "rename", "Alicia", "Paris", code=2)
    assert "allow_merge" in err and err.count("\n") == 1

    assert "weight 7" in run("relation", "edit", "Alicia", "Paris", "--weight", "7")
    created = json.loads(run("relation", "edit", "Acme", "Paris", "--create", "--description", "x", "--json"))
    assert created["graph_data"]["description"] == "x"
    assert "deleted" in run("relation", "delete", "Paris", "Acme")
    assert run("relation", "show", "Paris", "Acme", code=2).startswith("error: no relation")

    graph = json.loads(run("graph", "Alicia", "--depth", "1", "--json"))
    assert "Alicia" in {n["id"] for n in graph["nodes"]} and graph["edges"]
    assert "nodes" in run("graph", "*")

    out = tmp_path / "kg.graphml"
    assert "graphml" in run("export", str(out), "--format", "graphml")
    assert "Alicia" in out.read_text(encoding="utf-8")

    kg_file = tmp_path / "kg.json"
    kg_file.write_text(json.dumps(CUSTOM_KG), encoding="utf-8")
    assert "imported kg-cli: 2 chunks" in run("import-kg", str(kg_file), "--doc-id", "kg-cli")
    bad = dict(CUSTOM_KG, entities=[dict(CUSTOM_KG["entities"][0], source_id="zz")])
    kg_file.write_text(json.dumps(bad), encoding="utf-8")
    assert "'zz' names no chunk" in run("import-kg", str(kg_file), code=2)

    assert "deleted" in run("clear-cache", "--type", "query")
    result = json.loads(run("delete", "kg-cli", "--json"))
    assert result["deleted_ids"] == ["kg-cli"]
    assert "deleted 1 documents" in run("delete", "--file-path", str(folder / "b.txt"))
    assert run("delete", "nope", code=2).startswith("error: no document")
    assert json.loads(run("docs", "--counts", "--json"))["all"] == 1
    # the manual edit outlived the delete of b.txt
    assert json.loads(run("entity", "show", "Alicia", "--json"))["graph_data"]["description"] == "A chemist."
    assert main(["--dsn", dsn, "drop-workspace", workspace_name, "--yes"]) == 0


async def test_the_documented_import_kg_example_imports(rag_factory: Any) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "import-kg.md").read_text(encoding="utf-8")
    payload = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])
    rag = await rag_factory()
    await rag.ainsert_custom_kg(payload)
    async with rag.session() as s:
        [acme] = await s.graph.get_entities(["Acme"])
        edges = await s.graph.edges_of(["Alice"])
    assert acme.entity_type == "Organization" and len(acme.source_ids) == 2
    assert [(e.src, e.tgt, e.weight) for e in edges] == [("Acme", "Alice", 2.0)]
