"""The README's Python example runs as written, offline, and returns what the README says."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lightrag_pg.query.keyword_plan import resolve_keywords

from .conftest import drop_if_exists

ROOT = Path(__file__).resolve().parents[1]
OFFLINE_UNSET = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_MODEL", "EMBEDDING_MODEL", "EMBEDDING_DIM")


def python_example() -> str:
    """The first Python block of the README's "Using it from Python" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Using it from Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "no Python example in the README"
    return found.group(1)


@pytest.mark.slow
def test_the_python_example_runs_offline_and_finds_the_entities(dsn: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(python_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_UNSET}
    env["LIGHTRAG_PG_DSN"] = dsn
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            [sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
    finally:
        asyncio.run(drop_if_exists(dsn, "curie"))
    assert done.returncode == 0, done.stderr
    assert "[no-context]" not in done.stdout
    assert "['" in done.stdout and "Marie Curie" in done.stdout and "Sorbonne" in done.stdout
    assert done.stderr.strip() == "", f"stray lines on stderr: {done.stderr}"


def test_a_question_without_keywords_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        plan = resolve_keywords([], [], mode="mix", query="What links them?")
    assert plan.warnings and not caplog.records, "an app without logging set up printed them"
