"""The command line, driven in-process against the test server and the scripted LLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lightrag_pg import QueryParam
from lightrag_pg.cli import build_parser, main
from lightrag_pg.db.workspace import head_revision


@pytest.mark.slow
def test_insert_query_and_admin_commands(
    cli_env: None, dsn: str, workspace_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("Alice met Bob in Paris.", encoding="utf-8")
    (folder / "b.txt").write_text("Bob joined Globex in Berlin.", encoding="utf-8")
    (folder / "broken.txt").write_bytes(b"Alice \xff\xfe met Carol")
    (folder / "ignored.pdf").write_bytes(b"%PDF")
    base = ["--dsn", dsn, "--workspace", workspace_name]

    assert main([*base, "insert", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "broken.txt: not valid UTF-8 (byte 6); skipped" in out
    assert "2 new, 0 already present; 2 processed, 0 failed" in out

    assert main([*base, "query", "Where did Alice meet Bob?", "--mode", "local", "--data"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"Alice", "Bob"} <= {e["entity_name"] for e in data["data"]["entities"]}
    assert main([*base, "query", "Where did Alice meet Bob?", "--bridge", "--no-lexical", "--data"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["chunks"]

    assert main([*base, "query", "Where did Alice meet Bob?", "--stream"]) == 0
    assert "Scripted answer" in capsys.readouterr().out

    assert main([*base, "tables"]) == 0
    assert "entities" in capsys.readouterr().out
    assert main([*base, "migrate", "--all"]) == 0
    assert f"{workspace_name}: revision {head_revision()}" in capsys.readouterr().out
    assert main(["--dsn", dsn, "drop-workspace", workspace_name, "--yes"]) == 0


def test_bad_workspace_name_is_one_clear_line(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dsn", dsn, "--workspace", "x;drop", "query", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: workspace name 'x;drop'") and err.count("\n") == 1


def test_query_bridge_switch_defaults_to_the_librarys() -> None:
    parse = build_parser().parse_args
    assert parse(["query", "Who?"]).bridge is QueryParam().bridge
    assert parse(["query", "Who?", "--bridge"]).bridge is True
    assert parse(["query", "Who?", "--no-bridge"]).bridge is False
