"""The embedded server's lifecycle and Alembic from the shell, run as a user would (subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightrag_pg.cli import main
from lightrag_pg.db.embedded import stop_server
from lightrag_pg.db.workspace import head_revision

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
_CONFIG_VARS = ("LIGHTRAG_PG_DSN", "XDG_RUNTIME_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL")

HEAD = head_revision()


def shell_env(**extra: str) -> dict[str, str]:
    """The environment of a newcomer's shell: no DSN, no endpoint, no XDG_RUNTIME_DIR."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _CONFIG_VARS and not k.startswith(("EMBEDDING_", "LLM_", "LIGHTRAG_PG_"))
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def alembic(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "alembic", "-c", str(ROOT / "alembic.ini"), *args], env, cwd)


def test_embedded_server_lifecycle_script_and_alembic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "pgdata"
    env = shell_env(LIGHTRAG_PG_DATA_DIR=str(data_dir))
    monkeypatch.delenv("LIGHTRAG_PG_DSN", raising=False)
    monkeypatch.setenv("LIGHTRAG_PG_DATA_DIR", str(data_dir))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    try:
        assert main(["server", "status"]) == 3
        expected = f"not created yet (the first command creates it): embedded server in {data_dir}\n"
        assert capsys.readouterr().out == expected

        script = "from lightrag_pg.db.embedded import embedded_dsn; print(embedded_dsn())"
        started = run([sys.executable, "-c", script], env, elsewhere)
        assert started.returncode == 0 and started.stdout.startswith("postgresql://")
        assert started.stderr == ""  # no XDG_RUNTIME_DIR warning

        assert main(["server", "dsn"]) == 0
        assert capsys.readouterr().out == started.stdout
        assert main(["server", "status"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"running: embedded server in {data_dir}, pid ")
        assert out.endswith(f"dsn {started.stdout}")

        created = alembic("-x", "workspace=from_alembic", "upgrade", "head", env=env, cwd=elsewhere)
        assert created.returncode == 0, created.stderr
        assert created.stdout == (
            f"created workspace 'from_alembic' at revision {HEAD}: "
            "384 dimensions, embeddings all-MiniLM-L6-v2-onnx-int8\n"
        )
        assert created.stderr == ""
        again = alembic("-x", "workspace=from_alembic", "upgrade", "head", env=env, cwd=elsewhere)
        assert again.stdout == f"workspace 'from_alembic' is already at revision {HEAD}; nothing to do\n"
        assert main(["workspaces"]) == 0
        _, row = capsys.readouterr().out.splitlines()
        assert row.split()[:4] == ["from_alembic", "384", "all-MiniLM-L6-v2-onnx-int8", "enabled"]

        assert main(["server", "stop"]) == 0
        assert capsys.readouterr().out == f"stopped: embedded server in {data_dir}\n"
        assert main(["server", "status"]) == 3
        assert capsys.readouterr().out == f"stopped: embedded server in {data_dir}\n"
        assert main(["server", "stop"]) == 0
        assert capsys.readouterr().out.startswith("not running:")
    finally:
        stop_server(data_dir)


def test_alembic_takes_the_dimension_of_the_configured_embedding(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    env = shell_env(
        LIGHTRAG_PG_DSN=dsn, OPENAI_BASE_URL="http://127.0.0.1:9/v1", EMBEDDING_MODEL="e5", EMBEDDING_DIM="64"
    )
    done = alembic("-x", f"workspace={workspace_name}", "upgrade", "head", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = f"created workspace {workspace_name!r} at revision {HEAD}: 64 dimensions, embeddings e5\n"
    assert done.stdout == expected
    assert main(["--dsn", dsn, "drop-workspace", workspace_name, "--yes"]) == 0


def test_alembic_refuses_an_embedding_of_unknown_dimension(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    env = shell_env(LIGHTRAG_PG_DSN=dsn, OPENAI_BASE_URL="http://127.0.0.1:9/v1", EMBEDDING_MODEL="e5")
    done = alembic("-x", f"workspace={workspace_name}", "upgrade", "head", env=env, cwd=tmp_path)
    assert done.returncode != 0
    assert "unknown dimension of embedding model 'e5': set EMBEDDING_DIM or pass -x embedding_dim=N" in (
        done.stdout + done.stderr
    )


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_alembic_without_c_needs_the_repository_root(where: str, tmp_path: Path, dsn: str) -> None:
    cwd = ROOT if where == "root" else tmp_path
    env = shell_env(LIGHTRAG_PG_DSN=dsn)
    done = run([sys.executable, "-m", "alembic", "heads"], env, cwd)
    if where == "root":
        assert done.returncode == 0 and HEAD in done.stdout
    else:
        assert done.returncode != 0 and "script_location" in done.stdout + done.stderr
