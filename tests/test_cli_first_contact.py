"""The command line as a newcomer meets it: options, errors, workspaces, files, failures."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg.cli import main
from lightrag_pg.db.workspace import create_workspace, drop_workspace, read_info
from lightrag_pg.testing import hashed_vectors, responder

from .fake_openai import FakeOpenAI


def run_db(dsn: str, action: str, name: str) -> object:
    """Create, drop or read a workspace from a synchronous test (main() runs its own loop)."""

    async def go() -> object:
        conn = await asyncpg.connect(dsn)
        try:
            if action == "create":
                return await create_workspace(conn, dsn, name, 64, "fake-embedding")
            if action == "drop":
                return await drop_workspace(conn, name)
            return await read_info(conn, name)
        finally:
            await conn.close()

    return asyncio.run(go())


@pytest.fixture
def workspace(dsn: str, workspace_name: str) -> Iterator[str]:
    """An existing workspace, dropped afterwards."""
    run_db(dsn, "create", workspace_name)
    yield workspace_name
    if run_db(dsn, "info", workspace_name) is not None:
        run_db(dsn, "drop", workspace_name)


def closed_port_dsn() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://me:s3cret@127.0.0.1:{port}/db"


@pytest.mark.parametrize(
    "argv",
    [
        ["tables", "--workspace", "{ws}", "--dsn", "{dsn}"],
        ["--workspace", "{ws}", "--dsn", "{dsn}", "tables"],
        ["--dsn", "{dsn}", "tables", "--workspace", "{ws}", "-v"],
        ["--workspace", "{ws}", "tables", "--dsn", "{dsn}", "--debug"],
    ],
)
def test_global_options_before_or_after_the_command(
    argv: list[str], dsn: str, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.format(ws=workspace, dsn=dsn) for a in argv]) == 0
    assert "entities" in capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [
        ["workspaces"],
        ["tables"],
        ["migrate", "--all"],
        ["migrate"],
        ["drop-workspace", "x"],
        ["query", "Where is Alice?"],
        ["insert", "{file}"],
        ["demo"],
    ],
)
def test_a_wrong_dsn_is_one_line_naming_it(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "a.txt"
    file.write_text("Alice met Bob.", encoding="utf-8")
    bad = closed_port_dsn()
    argv = ["--dsn", bad, *(c.format(file=file) for c in command)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("error: cannot connect to PostgreSQL at postgresql://me:***@127.0.0.1:")
    assert "(from --dsn)" in captured.err
    assert "s3cret" not in captured.err + captured.out
    assert "lost the connection" not in captured.err


def test_a_wrong_dsn_from_the_environment_says_so_and_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LIGHTRAG_PG_DSN", closed_port_dsn())
    assert main(["workspaces"]) == 2
    err = capsys.readouterr().err
    assert "(from $LIGHTRAG_PG_DSN)" in err and "Traceback" not in err
    assert main(["workspaces", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith("error: cannot connect")


def test_querying_a_missing_workspace_lists_the_existing_ones(
    dsn: str, workspace: str, workspace_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"{workspace_name}_missing"
    assert main(["--dsn", dsn, "--workspace", missing, "query", "Where is Alice?"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: workspace {missing!r} does not exist (existing workspaces: ")
    assert workspace in err and err.count("\n") == 1
    assert run_db(dsn, "info", missing) is None
    assert main(["--dsn", dsn, "--workspace", missing, "tables"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("question", ["", "   \n"])
def test_an_empty_question_is_refused(question: str, dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dsn", dsn, "query", question]) == 2
    assert capsys.readouterr().err == "error: the question is empty\n"


def test_insert_creates_the_workspace_and_says_so(
    cli_env: None, dsn: str, workspace_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Alice met Bob in Paris.", encoding="utf-8")
    base = ["insert", str(doc), "--dsn", dsn, "--workspace", workspace_name]
    try:
        assert main(base) == 0
        out = capsys.readouterr().out
        assert f"created workspace {workspace_name!r}: 64 dimensions, embeddings fake-embedding" in out
        assert main(base) == 0
        out = capsys.readouterr().out
        assert "created workspace" not in out and "0 new, 1 already present" in out
    finally:
        run_db(dsn, "drop", workspace_name)


def test_insert_names_skipped_files_and_refuses_pdf(
    cli_env: None, dsn: str, workspace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    (folder / ".git").mkdir(parents=True)
    (folder / "a.md").write_text("Alice met Bob in Paris.", encoding="utf-8")
    (folder / "paper.pdf").write_bytes(b"%PDF-1.7 binary")
    (folder / "table.csv").write_text("a,b", encoding="utf-8")
    (folder / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    named_pdf = tmp_path / "report.PDF"
    named_pdf.write_bytes(b"%PDF-1.4 plain ascii body")
    disguised = tmp_path / "scan.txt"
    disguised.write_bytes(b"%PDF-1.4 plain ascii body")

    argv = ["--dsn", dsn, "--workspace", workspace, "insert", str(folder), str(named_pdf), str(disguised)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"note: {folder / 'paper.pdf'}: not .txt/.md/.markdown; skipped" in out
    assert f"note: {folder / 'table.csv'}: not .txt/.md/.markdown; skipped" in out
    assert f"note: {folder}: 1 hidden file(s) skipped" in out
    assert f"warning: {named_pdf}: a PDF is not plain text; convert it" in out
    assert f"warning: {disguised}: a PDF is not plain text" in out
    assert "1 new, 0 already present; 1 processed, 0 failed" in out


def test_insert_says_when_two_files_have_the_same_content(
    cli_env: None, dsn: str, workspace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.md", tmp_path / "copy.md"
    for f in (first, second):
        f.write_text("Alice met Bob in Paris.", encoding="utf-8")
    assert main(["--dsn", dsn, "--workspace", workspace, "insert", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert f"note: {second}: same content as {first}; stored once" in out
    assert "1 new, 0 already present; 1 processed, 0 failed" in out


@pytest.fixture
def poisoning_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A scripted endpoint whose embeddings of any text containing POISON have the wrong size."""

    def embedder(texts: list[str]) -> list[list[float]]:
        vectors = hashed_vectors(texts, 64).tolist()
        return [v[:8] if "POISON" in t else v for t, v in zip(texts, vectors, strict=True)]

    with FakeOpenAI(responder, embedder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("EMBEDDING_MODEL", "fake-embedding")
        monkeypatch.setenv("EMBEDDING_DIM", "64")
        yield server


def test_an_earlier_failure_is_reported_apart_and_does_not_fail_new_documents(
    poisoning_llm: FakeOpenAI, dsn: str, workspace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, good = tmp_path / "bad.txt", tmp_path / "good.txt"
    bad.write_text("POISON everywhere, Alice.", encoding="utf-8")
    good.write_text("Bob joined Globex in Berlin.", encoding="utf-8")
    base = ["--dsn", dsn, "--workspace", workspace, "insert"]

    assert main([*base, str(bad)]) == 1
    out = capsys.readouterr().out
    assert "1 new, 0 already present; 0 processed, 1 failed" in out
    assert "failed: doc-" in out

    assert main([*base, str(good)]) == 0
    out = capsys.readouterr().out
    assert "1 new, 0 already present; 1 processed, 0 failed" in out
    assert "1 document(s) from earlier runs were retried and failed again:" in out
    assert out.count("still failing: doc-") == 1 and "\nfailed:" not in out
