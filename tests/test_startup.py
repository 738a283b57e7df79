"""Start-up cost: the command line loads heavy libraries only when a command needs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

import lightrag_pg
from lightrag_pg import LightRAG
from lightrag_pg.db.migrate import migrations_dir
from lightrag_pg.db.workspace import create_workspace, drop_workspace, head_revision
from lightrag_pg.llm.cached import CachedKeywords, cache_key
from lightrag_pg.offline.minilm import EMBEDDING_DIM, MODEL_NAME
from lightrag_pg.store.cache import PoolCache
from lightrag_pg.testing import hashed_embedding_func

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

NOT_FOR_HELP = ("openai", "alembic", "sqlalchemy", "spacy", "onnxruntime", "tiktoken", "numpy", "tqdm")
"""Libraries ``lightrag-pg --help`` must not import."""

NOT_FOR_OFFLINE_QUERY = ("openai", "alembic", "sqlalchemy")
"""Libraries a query without an LLM, on a workspace at the newest revision, must not import."""

NOT_FOR_REPEATED_QUERY = (*NOT_FOR_OFFLINE_QUERY, "spacy", "thinc", "onnxruntime", "tokenizers", "tiktoken")
"""Libraries a question asked before without an LLM must not import: its keywords are cached,
and its vectors and token counts are in its query memo."""

NOT_FOR_ANY_QUERY = (
    "lightrag_pg.export",
    "lightrag_pg.index.custom_kg",
    "lightrag_pg.index.deletion",
    "lightrag_pg.index.extract",
    "lightrag_pg.index.graph_edit",
    "lightrag_pg.index.intake",
    "lightrag_pg.index.pipeline",
    "lightrag_pg.index.writer",
)
"""Modules of other commands (export, indexing, deletion, graph editing), which a query must not import."""


def offline_env(**extra: str) -> dict[str, str]:
    """This environment without any LLM or embedding endpoint, with the worktree first on the path."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LLM_", "EMBEDDING_", "LIGHTRAG_PG_"))
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def imported_modules(args: list[str], env: dict[str, str]) -> set[str]:
    """Modules imported by ``python -X importtime -m lightrag_pg ARGS``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lightrag_pg", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def imported_packages(args: list[str], env: dict[str, str]) -> set[str]:
    """Top-level packages imported by ``python -X importtime -m lightrag_pg ARGS``."""
    return {name.split(".")[0] for name in imported_modules(args, env)}


def test_help_imports_no_heavy_library() -> None:
    loaded = imported_packages(["--help"], offline_env())
    assert "lightrag_pg" in loaded
    assert not loaded & set(NOT_FOR_HELP), sorted(loaded & set(NOT_FOR_HELP))


def test_command_help_imports_no_heavy_library() -> None:
    loaded = imported_packages(["query", "--help"], offline_env())
    assert not loaded & set(NOT_FOR_HELP), sorted(loaded & set(NOT_FOR_HELP))


async def test_offline_query_imports_neither_the_llm_client_nor_the_migrations(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    await create_workspace(conn, dsn, workspace_name, EMBEDDING_DIM, MODEL_NAME)
    try:
        args = ["query", "what is stored?", "--mode", "naive", "--workspace", workspace_name, "--dsn", dsn]
        loaded = imported_packages(args, offline_env())
    finally:
        await drop_workspace(conn, workspace_name)
    assert "onnxruntime" in loaded  # the question was embedded by the local model
    assert not loaded & set(NOT_FOR_OFFLINE_QUERY), sorted(loaded & set(NOT_FOR_OFFLINE_QUERY))


async def test_repeated_offline_question_loads_no_spacy_no_embedding_model_and_no_tokenizer(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    await create_workspace(conn, dsn, workspace_name, EMBEDDING_DIM, MODEL_NAME)
    try:
        args = ["query", "How are the budgets applied?", "--workspace", workspace_name, "--dsn", dsn]
        first = imported_modules(args, offline_env())
        second = imported_modules(args, offline_env())
    finally:
        await drop_workspace(conn, workspace_name)
    assert "lightrag_pg.offline._spacy_text" in first  # the first time, the keywords were extracted
    assert "onnxruntime" in {name.split(".")[0] for name in first}  # and the question embedded
    packages = {name.split(".")[0] for name in second}
    assert not packages & set(NOT_FOR_REPEATED_QUERY), sorted(packages & set(NOT_FOR_REPEATED_QUERY))
    assert not (first | second) & set(NOT_FOR_ANY_QUERY), sorted((first | second) & set(NOT_FOR_ANY_QUERY))


async def test_offline_keywords_are_cached_per_rule(
    dsn: str, workspace_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def keywords(query: str) -> tuple[list[str], list[str]]:
        calls.append(query)
        return ["budget"], [f"Alice {len(calls)}"]

    rag = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=hashed_embedding_func())
    async with rag:
        cache = PoolCache(rag.pool)
        one, other = CachedKeywords(keywords, cache, "one"), CachedKeywords(keywords, cache, "two")
        assert await one("Who is Alice?") == (["budget"], ["Alice 1"])
        assert await one("Who is Alice?") == (["budget"], ["Alice 1"])  # from the cache
        assert await other("Who is Alice?") == (["budget"], ["Alice 2"])  # another rule
        assert await CachedKeywords(keywords, None, "one")("Who is Alice?") == (["budget"], ["Alice 3"])
        async with rag.session() as s:
            await s.cache.put(  # an entry that is not a keyword answer is asked again
                cache_key("keywords", "default", "offline", "one", "Who is Bob?"),
                "not json",
                cache_type="keywords",
            )
        assert await one("Who is Bob?") == (["budget"], ["Alice 4"])
        assert calls == ["Who is Alice?"] * 3 + ["Who is Bob?"]
        await rag.drop_workspace()


def test_package_names_load_on_first_use() -> None:
    code = (
        "import sys, lightrag_pg\n"
        "assert 'lightrag_pg.rag' not in sys.modules\n"
        "from lightrag_pg import LightRAG, QueryParam, EmbeddingFunc, Settings, LightRAGError\n"
        "assert LightRAG.__module__ == 'lightrag_pg.rag'\n"
        "assert set(lightrag_pg.__all__) <= set(dir(lightrag_pg))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=offline_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_unknown_package_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        lightrag_pg.no_such_name  # noqa: B018


def test_head_revision_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    assert head_revision() == ScriptDirectory.from_config(cfg).get_current_head()
