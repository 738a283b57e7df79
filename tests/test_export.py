"""Export: CSV, JSON, Markdown, Excel and GraphML, streamed, written whole or not at all."""

from __future__ import annotations

import csv
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import ConfigurationError, InvalidInput
from lightrag_pg.export import sections
from lightrag_pg.store.rows import ChunkRow, DocumentRow, EntityRow, RelationRow
from lightrag_pg.testing import hashed_vectors

NASTY = 'O\'Brien <&> "quoted" | pipe'
ENTITIES = ["Alice", "Bob", NASTY, "Zed"]
RELATIONS = [("Alice", "Bob"), ("Alice", NASTY)]
GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


async def seed(rag: LightRAG) -> None:
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(
            [
                EntityRow(n, "Person", f"{n} line one\nline two | \x01", source_ids=["c1", "c2"])
                for n in ENTITIES
            ]
        )
        await uow.graph.upsert_relations_if_unchanged(
            [RelationRow(a, b, "knows", f"{a} knows {b}", weight=1.5) for a, b in RELATIONS]
        )
        await uow.vectors.upsert_entities(ENTITIES, ENTITIES, hashed_vectors(ENTITIES))
        await uow.docs.insert([DocumentRow("doc-1", "Alice knows Bob.")])
        await uow.chunks.upsert(
            [ChunkRow("chunk-1", "doc-1", 0, 4, "Alice knows Bob.")], hashed_vectors(["Alice"])
        )


async def test_csv_has_a_section_per_table(rag: LightRAG, tmp_path: Path) -> None:
    await seed(rag)
    result = await rag.aexport_data(tmp_path / "graph.csv", include_chunks=True)
    assert result.rows == {"entities": 4, "relations": 2, "chunks": 1}
    rows = list(csv.reader((tmp_path / "graph.csv").open(encoding="utf-8", newline="")))
    assert rows[0] == ["# entities"]
    assert tuple(rows[1]) == sections.ENTITIES.columns[:-1]
    assert [r[0] for r in rows[2:6]] == sorted(ENTITIES)
    assert rows[2][2] == "Alice line one\nline two | \x01" and rows[2][3] == "c1<SEP>c2"
    assert rows[6] == [] and rows[7] == ["# relations"]
    assert rows[9][:5] == ["Alice", "Bob", "knows", "Alice knows Bob", "1.5"]
    assert rows[12] == ["# chunks"] and rows[14][4] == "Alice knows Bob."
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


async def test_json_keeps_lists_and_vectors(rag: LightRAG, tmp_path: Path) -> None:
    await seed(rag)
    target = tmp_path / "graph.json"
    await rag.aexport_data(str(target), "json", include_vector_data=True)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert set(data) == {"entities", "relations"}
    alice = data["entities"][0]
    assert alice["name"] == "Alice" and alice["source_ids"] == ["c1", "c2"]
    assert alice["vector"] == pytest.approx(hashed_vectors(["Alice"])[0].tolist(), abs=1e-6)
    assert data["relations"][0]["weight"] == 1.5 and data["relations"][0]["vector"] is None


async def test_markdown_tables_escape_pipes_and_newlines(rag: LightRAG, tmp_path: Path) -> None:
    await seed(rag)
    target = tmp_path / "graph.md"
    await rag.aexport_data(target, "markdown")
    text = target.read_text(encoding="utf-8")
    assert "## Entities" in text and "## Relations" in text
    row = next(line for line in text.splitlines() if line.startswith("| Alice |"))
    assert "line one<br>line two \\| " in row
    assert row.count(" | ") == 6


async def test_xlsx_has_a_sheet_per_table(rag: LightRAG, tmp_path: Path) -> None:
    import openpyxl

    await seed(rag)
    target = tmp_path / "graph.xlsx"
    await rag.aexport_data(target, "xlsx", include_chunks=True)
    book = openpyxl.load_workbook(target, read_only=True)
    assert book.sheetnames == ["entities", "relations", "chunks"]
    entities = list(book["entities"].values)
    assert entities[0][0] == "name" and [r[0] for r in entities[1:]] == sorted(ENTITIES)
    assert entities[1][2] == "Alice line one\nline two | "
    relations = list(book["relations"].values)
    assert relations[1][4] == 1.5


async def test_xlsx_without_openpyxl_names_the_extra(
    rag: LightRAG, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(ConfigurationError, match=r"lightrag-pg\[export\]"):
        await rag.aexport_data(tmp_path / "graph.xlsx", "excel")
    assert list(tmp_path.iterdir()) == []


async def test_graphml_is_valid_xml_with_nodes_and_edges(rag: LightRAG, tmp_path: Path) -> None:
    await seed(rag)
    target = tmp_path / "graph.graphml"
    result = await rag.aexport_data(target, "graphml", include_chunks=True)
    assert result.rows == {"entities": 4, "relations": 2}
    root = ET.parse(target).getroot()
    graph = root.find(f"{GRAPHML}graph")
    assert graph is not None and graph.get("edgedefault") == "undirected"
    nodes = [n.get("id") for n in graph.findall(f"{GRAPHML}node")]
    assert nodes == sorted(ENTITIES)
    edges = {(e.get("source"), e.get("target")) for e in graph.findall(f"{GRAPHML}edge")}
    assert edges == set(RELATIONS)
    keys = {k.get("id"): k.get("attr.type") for k in root.findall(f"{GRAPHML}key")}
    assert keys["edge_weight"] == "double" and keys["node_label"] == "string"
    nasty = next(n for n in graph.findall(f"{GRAPHML}node") if n.get("id") == NASTY)
    described = {d.get("key"): d.text for d in nasty.findall(f"{GRAPHML}data")}
    assert described["node_description"] == f"{NASTY} line one\nline two | "


async def test_large_exports_are_streamed_in_batches(
    rag: LightRAG, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"entity {i:04d}" for i in range(250)]
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(n) for n in names])
    monkeypatch.setattr(sections, "BATCH_ROWS", 100)
    seen: list[int] = []
    original = sections.stream

    async def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        async for section, rows in original(*args, **kwargs):
            seen.append(len(rows))
            yield section, rows

    monkeypatch.setattr("lightrag_pg.export.stream", spy)
    result = await rag.aexport_data(tmp_path / "big.json", "json")
    assert seen == [100, 100, 50, 0]
    assert result.rows == {"entities": 250, "relations": 0}
    data = json.loads((tmp_path / "big.json").read_text(encoding="utf-8"))
    assert [e["name"] for e in data["entities"]] == names and data["relations"] == []


async def test_unwritable_paths_are_refused_and_nothing_is_left(rag: LightRAG, tmp_path: Path) -> None:
    await seed(rag)
    with pytest.raises(InvalidInput, match="cannot export"):
        await rag.aexport_data(tmp_path / "missing" / "graph.csv")
    with pytest.raises(InvalidInput, match="directory"):
        await rag.aexport_data(tmp_path)
    plain_file = tmp_path / "notes.txt"
    plain_file.write_text("not a folder", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot export"):
        await rag.aexport_data(plain_file / "graph.csv")
    with pytest.raises(InvalidInput, match="format"):
        await rag.aexport_data(tmp_path / "graph.pdf", "pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


async def test_a_failure_part_way_keeps_the_previous_file(
    rag: LightRAG, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(rag)
    target = tmp_path / "graph.csv"
    target.write_text("previous export", encoding="utf-8")

    def broken(self, section, rows):  # type: ignore[no-untyped-def]
        if section.name == "relations":
            raise OSError("disk full")
        return original(self, section, rows)

    from lightrag_pg.export.formats import Writer

    original = Writer.rows
    monkeypatch.setattr(Writer, "rows", broken)
    with pytest.raises(OSError, match="disk full"):
        await rag.aexport_data(target)
    assert target.read_text(encoding="utf-8") == "previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.csv"]
