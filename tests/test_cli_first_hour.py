"""What a new user met in the first hour: Ctrl-C, drop without asking, a mistyped workspace,
counts that disagree, raw ``<SEP>``, empty bars."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lightrag_pg.cli import main
from lightrag_pg.cli.common import ProgressBar
from lightrag_pg.cli.graph_edit import print_entity
from lightrag_pg.cli.ingest import report
from lightrag_pg.index.progress import Progress
from lightrag_pg.rag import InsertResult

from .fake_openai import FakeOpenAI
from .test_cli_first_contact import run_db

ROOT = Path(__file__).resolve().parents[1]


class Terminal(io.StringIO):
    """Standard input that is a terminal with ``answer`` typed in."""

    def isatty(self) -> bool:
        return True


def test_drop_workspace_asks_first_and_refuses_without_a_terminal(
    dsn: str, workspace_name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_db(dsn, "create", workspace_name)
    drop = ["--dsn", dsn, "drop-workspace", workspace_name]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(drop) == 2
    assert "pass --yes" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert main(drop) == 1
    assert "not dropped" in capsys.readouterr().out
    assert run_db(dsn, "read", workspace_name) is not None
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert main(drop) == 0
    assert run_db(dsn, "read", workspace_name) is None


def test_insert_of_nothing_does_not_create_a_mistyped_workspace(
    dsn: str, workspace_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    argv = ["--dsn", dsn, "--workspace", workspace_name, "insert", str(tmp_path / "missing.md")]
    assert main([*argv, str(tmp_path / "empty.txt")]) == 1
    assert f"workspace {workspace_name!r} not created" in capsys.readouterr().out
    assert run_db(dsn, "read", workspace_name) is None


def test_the_insert_summary_counts_documents_another_process_indexed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress = Progress(docs_total=2, docs_done=1, docs_skipped=1, chunks_done=1)
    assert report(InsertResult("t", ["doc-a", "doc-b"], [], progress)) == 0
    assert "2 new, 0 already present; 1 processed, 0 failed, 1 indexed by another process" in (
        capsys.readouterr().out
    )


def test_entity_show_prints_merged_descriptions_apart(capsys: pytest.CaptureFixture[str]) -> None:
    info = {
        "entity_name": "Acme",
        "graph_data": {"entity_type": "Organization", "degree": 2, "description": "A firm.<SEP>A maker."},
        "contributions": [
            {"manual": False, "doc_id": "d", "chunk_id": "c", "entity_type": "Org", "description": "x"}
        ],
    }
    print_entity(info, as_json=False)
    out = capsys.readouterr().out
    assert "<SEP>" not in out and "  A firm.\n  A maker.\n" in out


def test_the_progress_bar_fits_an_80_column_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    bar = ProgressBar("indexing")
    bar.bar.dynamic_ncols = False
    bar.bar.ncols = 80
    many = Progress(docs_total=1200, docs_done=640, docs_failed=12, chunks_total=98000)
    bar(Progress(**{**many.__dict__, "chunks_extracted": 51234}))
    line = str(bar.bar)
    bar.close()
    capsys.readouterr()
    assert len(line) <= 80 and line.count("█") + line.count(" ") > 10, line
    assert "652/1200 docs (12 failed)" in line


def test_reembed_with_nothing_to_do_shows_no_bar(
    cli_env: None, dsn: str, workspace_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("Alice met Bob in Paris.", encoding="utf-8")
    base = ["--dsn", dsn, "--workspace", workspace_name]
    assert main([*base, "insert", str(tmp_path / "a.txt")]) == 0
    capsys.readouterr()
    assert main([*base, "reembed"]) == 0
    captured = capsys.readouterr()
    assert "nothing to do" in captured.out and "vector" not in captured.err
    assert main([*base, "drop-workspace", workspace_name, "--yes"]) == 0


@pytest.mark.slow
def test_ctrl_c_during_insert_says_at_once_that_it_stops(
    dsn: str, workspace_name: str, tmp_path: Path, llm_server: FakeOpenAI
) -> None:
    for i in range(4):
        (tmp_path / f"{i}.txt").write_text(f"Alice{i} met Bob{i} in Paris. " * 50, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "test",
        "LLM_MODEL": "fake-model",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
    }
    command = [sys.executable, "-m", "lightrag_pg", "--dsn", dsn, "--workspace", workspace_name]
    stderr = tmp_path / "stderr"
    llm_server.delay = 5.0
    try:
        with stderr.open("w") as err:
            process = subprocess.Popen(
                [*command, "insert", str(tmp_path)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )
        try:
            deadline = time.monotonic() + 60
            while "indexing" not in stderr.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            deadline = time.monotonic() + 3
            while "interrupted: stopping" not in stderr.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "interrupted: stopping" in stderr.read_text(), "Ctrl-C is answered at once"
            assert process.wait(timeout=30) == 130
        finally:
            if process.poll() is None:
                process.kill()
    finally:
        llm_server.reset_faults()
        if run_db(dsn, "read", workspace_name) is not None:
            run_db(dsn, "drop", workspace_name)
