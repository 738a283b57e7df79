"""Workspaces: names, creation, listing, dropping, dimensions, comments."""

from __future__ import annotations

import asyncio
import sys

import asyncpg
import pytest

from lightrag_pg import DimensionMismatch, InvalidWorkspaceName, LightRAG
from lightrag_pg.db.identifiers import relation_of, schema_of, validate_workspace
from lightrag_pg.db.sqlfile import render
from lightrag_pg.db.workspace import (
    create_workspace,
    drop_workspace,
    head_revision,
    list_workspaces,
    migrate_all,
    read_info,
    table_stats,
    workspace_exists,
)
from lightrag_pg.errors import WorkspaceNotFound
from lightrag_pg.testing import StatementCounter
from lightrag_pg.testing import hashed_embedding_func as embedding_func

BAD_NAMES = [
    "",
    "a'b",
    'a"b',
    "a$$b",
    "x; DROP SCHEMA public CASCADE",
    "café",
    "Upper",
    "1abc",
    "a-b",
    "a b",
    "x" * 61,
    "public",
    "pg_catalog",
    "pg_toast",
    "ag_catalog",
    "information_schema",
    "pg_anything",
    "mine_kg",
]

TABLES = {
    "workspace_info",
    "reembed_state",
    "full_docs",
    "doc_status",
    "text_chunks",
    "chunk_terms",
    "corpus_counts",
    "chunk_vectors",
    "entities",
    "entity_vectors",
    "relations",
    "relation_vectors",
    "doc_entities",
    "doc_relations",
    "entity_fragments",
    "relation_fragments",
    "llm_cache",
    "usage",
}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_workspace_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidWorkspaceName):
        validate_workspace(name)
    with pytest.raises(InvalidWorkspaceName):
        LightRAG(workspace=name, embedding_func=embedding_func())


@pytest.mark.parametrize("name", [None, 3, b"abc"])
def test_non_string_workspace_names_are_refused(name: object) -> None:
    with pytest.raises(InvalidWorkspaceName):
        validate_workspace(name)


def test_good_names_pass() -> None:
    assert validate_workspace("default") == "default"
    assert validate_workspace("_x1") == "_x1"
    assert validate_workspace("a" * 60) == "a" * 60


async def test_every_table_lives_in_the_workspace_schema(rag: LightRAG, conn: asyncpg.Connection) -> None:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", rag.workspace)
    assert {r[0] for r in rows} == TABLES | {"alembic_version"}
    info = await read_info(conn, rag.workspace)
    assert info is not None and info.graph_enabled and info.embedding_dim == 32
    assert info.embedding_model == "hashed-bow-32"


async def test_every_table_and_column_has_a_comment(rag: LightRAG, conn: asyncpg.Connection) -> None:
    missing = await conn.fetch(
        """
        SELECT c.relname, a.attname
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'alembic_version'
          AND col_description(c.oid, a.attnum) IS NULL
        """,
        rag.workspace,
    )
    assert [tuple(r) for r in missing] == []
    uncommented = await conn.fetch(
        """
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'v') AND c.relname <> 'alembic_version'
          AND obj_description(c.oid, 'pg_class') IS NULL
        """,
        rag.workspace,
    )
    assert [r[0] for r in uncommented] == []


async def test_vector_indexes_are_hnsw_cosine(rag: LightRAG, conn: asyncpg.Connection) -> None:
    defs = await conn.fetch(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexdef LIKE '%hnsw%'",
        rag.workspace,
    )
    assert len(defs) == 3
    assert all("vector_cosine_ops" in r[0] for r in defs)


CREATE_SCRIPT = """
import asyncio, sys, asyncpg
from lightrag_pg.db.workspace import create_workspace
async def main():
    conn = await asyncpg.connect(sys.argv[1])
    info = await create_workspace(conn, sys.argv[1], sys.argv[2], 8)
    print(info.created_at.isoformat())
asyncio.run(main())
"""


@pytest.mark.slow
async def test_creation_is_idempotent_and_safe_across_processes(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CREATE_SCRIPT,
            dsn,
            workspace_name,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]
    outputs = [await p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    assert len({out.strip() for out, _ in outputs}) == 1
    conns = [await asyncpg.connect(dsn) for _ in range(2)]
    try:
        infos = await asyncio.gather(*(create_workspace(c, dsn, workspace_name, 8) for c in conns))
        assert infos[0].created_at == infos[1].created_at
        assert await workspace_exists(conn, workspace_name)
    finally:
        for c in conns:
            await c.close()


async def test_dimension_mismatch_names_both_numbers(rag: LightRAG, dsn: str) -> None:
    other = LightRAG(dsn=dsn, workspace=rag.workspace, embedding_func=embedding_func(64))
    with pytest.raises(DimensionMismatch, match=r"32.*64"):
        await other.initialize()
    await other.finalize()


async def test_drop_one_workspace_leaves_the_other(dsn: str, conn: asyncpg.Connection) -> None:
    a, b = "drop_a_ws", "drop_b_ws"
    for name in (a, b):
        await create_workspace(conn, dsn, name, 8)
    await conn.execute(f"INSERT INTO {b}.entities (name) VALUES ('kept')")
    await drop_workspace(conn, a)
    names = await list_workspaces(conn)
    assert a not in names and b in names
    assert await conn.fetchval(f"SELECT count(*) FROM {b}.entities") == 1
    assert await conn.fetchval("SELECT count(*) FROM ag_catalog.ag_graph WHERE name = $1", f"{a}_kg") == 0
    assert await conn.fetchval("SELECT count(*) FROM ag_catalog.ag_graph WHERE name = $1", f"{b}_kg") == 1
    assert await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = 'public'") == 1
    await drop_workspace(conn, b)


async def test_dropping_a_missing_or_system_workspace_fails_cleanly(conn: asyncpg.Connection) -> None:
    with pytest.raises(WorkspaceNotFound):
        await drop_workspace(conn, "never_created")
    with pytest.raises(InvalidWorkspaceName):
        await drop_workspace(conn, "public")
    assert await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = 'public'") == 1


async def test_migrate_all_upgrades_every_workspace(
    dsn: str, conn: asyncpg.Connection, workspace_name: str
) -> None:
    await create_workspace(conn, dsn, workspace_name, 8)
    await conn.execute(f"UPDATE {workspace_name}.alembic_version SET version_num = '0002'")
    await conn.execute(f"DROP VIEW {workspace_name}.relation_overview, {workspace_name}.entity_overview")
    await conn.execute(f"DROP FUNCTION {workspace_name}.node_degree(text)")
    names = await migrate_all(conn, dsn)
    assert workspace_name in names
    info = await read_info(conn, workspace_name)
    assert info is not None and info.revision == head_revision()
    assert await conn.fetchval(f"SELECT count(*) FROM {workspace_name}.entity_overview") == 0


async def test_the_overview_views_split_a_joined_description(rag: LightRAG, conn: asyncpg.Connection) -> None:
    ws = rag.workspace
    await conn.execute(
        f"INSERT INTO {ws}.entities (name, description) VALUES ('a', 'one<SEP>two'), ('b', 'a summary')"
    )
    await conn.execute(
        f"INSERT INTO {ws}.relations (src, tgt, description) VALUES ('a', 'b', 'x<SEP>y<SEP>z')"
    )
    parts = await conn.fetch(f"SELECT name, description_parts FROM {ws}.entity_overview ORDER BY name")
    assert [(r["name"], r["description_parts"]) for r in parts] == [
        ("a", ["one", "two"]),
        ("b", ["a summary"]),
    ]
    assert await conn.fetchval(f"SELECT description_parts FROM {ws}.relation_overview") == ["x", "y", "z"]


async def test_table_stats_counts_every_table_in_two_statements(
    rag: LightRAG, conn: asyncpg.Connection
) -> None:
    await conn.execute(f"INSERT INTO {rag.workspace}.entities (name) VALUES ('a'), ('b')")
    with StatementCounter() as counter:
        stats = {t.name: t for t in await table_stats(conn, rag.workspace)}
    assert counter.statements == 2
    assert set(stats) == TABLES | {"alembic_version", "entity_overview", "relation_overview"}
    assert stats["entities"].row_count == 2 and stats["entity_overview"].is_view
    assert stats["alembic_version"].row_count == 1 and stats["relations"].row_count == 0
    assert stats["entities"].comment == "Knowledge graph vertices"


def test_only_validated_identifiers_are_rendered_into_sql() -> None:
    sql = "SELECT '{}'::text[], {n} FROM {schema}.t"
    assert render(sql, schema=schema_of("books"), n=3) == "SELECT '{}'::text[], 3 FROM \"books\".t"
    with pytest.raises(TypeError):
        render(sql, schema="books; DROP SCHEMA public")  # type: ignore[arg-type]
    with pytest.raises(InvalidWorkspaceName):
        schema_of('x"; DROP')
    assert relation_of('Weird "Name"') is None
