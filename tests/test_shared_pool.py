"""One connection pool shared by workspaces: a connection is pointed at a workspace on checkout,
with one statement and only when it served another; workspaces of different vector widths
alternate on the same connections with results that are right and isolated."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

import lightrag_pg
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.dimensions import VECTOR_HNSW_MAX_DIM, HalfvecCast
from lightrag_pg.db.identifiers import graph_of, relation_of, schema_of, search_path
from lightrag_pg.db.pool import SQL, SharedPool, open_shared_pool
from lightrag_pg.db.sqlfile import load_queries, load_queries_at, render
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.errors import ConfigurationError, PoolExhausted
from lightrag_pg.testing import StatementCounter, hashed_embedding_func, names_in, scripted_llm

TEXTS = {
    8: "Alice founded Acme in Paris.",
    16: "Bob joined Globex in Berlin.",
    2048: "Carol runs Quantum Lab in Paris.",
}
EXTRA = "O'Brien $$ Co hired Bob in Berlin."


class SwitchCounter(StatementCounter):
    """A :class:`StatementCounter` that also counts the statements pointing a connection elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.switches = 0

    def _wrap(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        counted = super()._wrap(name, method)

        async def also_switches(conn: asyncpg.Connection, *args: Any, **kwargs: Any) -> Any:
            if args and args[0] == SQL["point_at"]:
                self.switches += 1
            return await counted(conn, *args, **kwargs)

        return also_switches


@pytest_asyncio.fixture
async def names(workspace_name: str, conn: asyncpg.Connection) -> AsyncIterator[dict[int, str]]:
    """A workspace name per embedding width, dropped afterwards."""
    chosen = {dim: f"{workspace_name}_d{dim}" for dim in TEXTS}
    yield chosen
    for name in chosen.values():
        if await workspace_exists(conn, name):
            await drop_workspace(conn, name)


@pytest_asyncio.fixture
async def vector_type(conn: asyncpg.Connection) -> None:
    """pgvector installed, as the first workspace of a database installs it (pooled connections need it)."""
    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


@pytest.mark.usefixtures("vector_type")
async def test_a_connection_is_pointed_at_a_workspace_only_when_it_served_another(
    dsn: str, workspace_name: str
) -> None:
    home, other = workspace_name, f"{workspace_name}_other"
    shared = await open_shared_pool(dsn, home, min_size=0, max_size=1)
    a, b = shared.workspace(home, 8), shared.workspace(other, 8)
    try:
        async with a.acquire():  # the connection, made and set up outside the counts
            pass

        async def path_seen(pool: Any) -> tuple[str, int, int]:
            with SwitchCounter() as counter:
                async with pool.acquire() as conn:
                    value = await conn.fetchval("SELECT current_setting('search_path')")
            return value, counter.statements, counter.switches

        assert await path_seen(a) == (search_path(home), 1, 0)  # connections start at home
        assert await path_seen(a) == (search_path(home), 1, 0)
        assert await path_seen(b) == (search_path(other), 2, 1)
        assert await path_seen(b) == (search_path(other), 1, 0)
        assert await path_seen(a) == (search_path(home), 2, 1)

        async with b.acquire() as conn:
            await conn.reset()  # RESET ALL: back to the connect-time path, and the pool knows it may be
        assert await path_seen(b) == (search_path(other), 2, 1)
        assert shared.pool.get_size() == 1
    finally:
        await shared.close()


@pytest.mark.usefixtures("vector_type")
async def test_a_workspace_holds_at_most_its_share(dsn: str, workspace_name: str) -> None:
    shared = await open_shared_pool(dsn, workspace_name, min_size=0, max_size=3, share=2, acquire_timeout=0.3)
    busy, other = shared.workspace(workspace_name, 8), shared.workspace(f"{workspace_name}_b", 8)
    try:
        async with busy.acquire(), busy.acquire():
            with pytest.raises(PoolExhausted, match=r"after 0.3 s \(2 connections \(its share\)"):
                async with busy.acquire():
                    pass
            async with other.acquire() as conn:  # the busy workspace left one for the others
                assert await conn.fetchval("SELECT 1") == 1
            waiting = asyncio.create_task(_hold(busy))
            await asyncio.sleep(0.05)
            assert not waiting.done()
        assert await waiting == 1  # its turn came when a connection of its share was released
        async with busy.acquire(), other.acquire(), other.acquire():
            with pytest.raises(PoolExhausted, match=r"all 3 connections in use"):
                async with busy.acquire():
                    pass
    finally:
        await shared.close()


async def _hold(pool: Any) -> int:
    async with pool.acquire(timeout=5) as conn:
        return int(await conn.fetchval("SELECT 1"))


async def test_a_shared_pool_is_closed_by_its_owner_not_by_a_workspace(dsn: str, workspace_name: str) -> None:
    shared = await open_shared_pool(dsn, workspace_name, min_size=0, max_size=2)
    rag = LightRAG(workspace=workspace_name, embedding_func=hashed_embedding_func(8), pool=shared)
    try:
        await rag.initialize()
        assert rag.pool.shared is shared and rag.dsn == shared.dsn
        await rag.drop_workspace()  # finalizes the LightRAG; the pool stays open
        async with shared.workspace(workspace_name, 8).acquire() as conn:
            assert await conn.fetchval("SELECT 1") == 1
    finally:
        await shared.close()
    with pytest.raises(ConfigurationError, match="not both"):
        LightRAG(dsn=dsn, workspace=workspace_name, pool=shared)


def rag_on(pool: SharedPool | None, dsn: str, name: str, dim: int) -> LightRAG:
    where: dict[str, Any] = {"pool": pool} if pool else {"dsn": dsn}
    return LightRAG(
        workspace=name,
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(dim),
        retry_base_delay=0.01,
        **where,
    )


async def snapshot(rag: LightRAG, dim: int) -> dict[str, Any]:
    """What a workspace answers: its labels, whole graph, query data and one entity with its vector."""
    text = TEXTS[dim]
    first = names_in(text)[0]
    info = await rag.aget_entity_info(first, include_vector_data=True)
    vector = info["vector_data"]["vector"]
    assert len(vector) == dim
    data = await rag.aquery_data(f"What about {first}?", QueryParam(mode="mix"))
    del data["metadata"]["timings_ms"], data["metadata"]["usage"]  # of this call
    return {
        "labels": await rag.aget_graph_labels(),
        "graph": (await rag.aget_knowledge_graph("*")).to_dict(),
        "data": data,
        "entity": {k: v for k, v in info.items() if k != "vector_data"},
        "vector": [round(float(x), 2) for x in vector],
    }


@pytest.mark.slow
async def test_workspaces_of_different_widths_alternate_on_the_same_connections(
    dsn: str, names: dict[int, str]
) -> None:
    assert max(TEXTS) > VECTOR_HNSW_MAX_DIM  # one workspace searches through halfvec
    shared = await open_shared_pool(dsn, names[8], min_size=0, max_size=2)
    rags = {dim: rag_on(shared, dsn, name, dim) for dim, name in names.items()}
    try:
        for rag in rags.values():
            await rag.initialize()
        with SwitchCounter() as counter:
            await asyncio.gather(*(rags[d].ainsert(TEXTS[d], ids=f"doc-{d}") for d in TEXTS))
            assert counter.switches > 0
        seen = [await asyncio.gather(*(snapshot(rags[d], d) for d in TEXTS)) for _ in range(2)]
        assert seen[0] == seen[1]  # interleaved twice on two connections: the same answers
        for (dim, text), got in zip(TEXTS.items(), seen[0], strict=True):
            assert got["labels"] == sorted(names_in(text)), dim
            assert {n["id"] for n in got["graph"]["nodes"]} == set(names_in(text))
            assert got["data"]["status"] == "success"
            assert {e["entity_name"] for e in got["data"]["data"]["entities"]} <= set(names_in(text))
            assert [c["content"] for c in got["data"]["data"]["chunks"]] == [text]
            assert len(got["vector"]) == dim

        wide = max(TEXTS)
        await rags[16].ainsert(EXTRA, ids="doc-extra")
        after_insert = await asyncio.gather(*(snapshot(rags[d], d) for d in TEXTS))
        assert "O'Brien $$ Co" in after_insert[1]["labels"]
        assert after_insert[0] == seen[0][0] and after_insert[2] == seen[0][2]
        deleted = await rags[16].adelete_by_doc_id("doc-extra")
        assert deleted.deleted_ids == ["doc-extra"]
        assert await asyncio.gather(*(snapshot(rags[d], d) for d in TEXTS)) == seen[0]

        for dim, name in names.items():  # the same answers through a pool of the workspace's own
            own = rag_on(None, dsn, name, dim)
            await own.initialize()
            try:
                assert await snapshot(own, dim) == seen[0][list(TEXTS).index(dim)], dim
            finally:
                await own.finalize()
        assert shared.pool.get_size() <= 2 and rags[wide].pool.embedding_dim == wide
    finally:
        for rag in rags.values():
            await rag.finalize()
        await shared.close()


REEMBED_SQL = load_queries("lightrag_pg.store", "reembed.sql")
TRANSFER_SQL = load_queries("lightrag_pg.store", "transfer.sql")
ROW_RETURNING = re.compile(r"(?is)^\s*(select|with)\b|\breturning\b")
WORKSPACE_TYPED = {"vector", "halfvec", "sparsevec"}


def placeholders(workspace: str) -> dict[str, Any]:
    """A value for every placeholder of the SQL files, for ``workspace`` (8 dimensions)."""
    relation = relation_of("entities")
    assert relation is not None
    return {
        "schema": schema_of(workspace),
        "graph": graph_of(workspace),
        "halfvec": HalfvecCast(8),
        "dim": 8,
        "vlabel": 3,
        "elabel": 4,
        "position": 0,
        "relation": relation,
        "top_k": 5,
        "chunk_top_k": 5,
        "high_degree_set": 1000,
        "walk_seeds": 5,
        "walk_fanout": 32,
        "walk_entities": 400,
        "walk_steps": 8,
        "bridge_from": 1,
        "bridge_fanout": 32,
        "bridge_slots": 3,
        "bridge_articles": 1,
        "rrf_k": 60,
        "pick_rrf_k": 0,
    }


async def test_no_statement_returns_a_column_whose_type_depends_on_the_workspace(
    dsn: str, names: dict[int, str]
) -> None:
    """asyncpg keeps a connection's prepared statements across workspaces; PostgreSQL re-parses
    them under the new search_path but refuses, inside a transaction, one whose result type
    changed (a ``vector(8)`` column read in a workspace of 16 dimensions). So every statement
    that returns rows returns only types of the catalogs: vectors leave as ``real[]``."""
    name = names[8]
    rag = rag_on(None, dsn, name, 8)
    await rag.initialize()
    checked: list[str] = []
    try:
        async with rag.pool.acquire() as conn:
            staging = conn.transaction()  # with the re-embed's staging tables, rolled back
            await staging.start()
            await conn.execute(render(REEMBED_SQL["create_shadows"], dim=8))
            await conn.execute(TRANSFER_SQL["create_document_map"])  # a LightRAG import's session table
            try:
                for path in sorted(Path(lightrag_pg.__file__).parent.rglob("*.sql")):
                    if path.name == "citus.sql":  # run only where Citus is; none returns a vector
                        continue
                    if path.name == "upstream_tables.sql":  # upstream's tables, on their own connection
                        continue
                    for block, sql in load_queries_at(path).items():
                        body = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
                        if not ROW_RETURNING.search(body):
                            continue
                        rendered = render(sql, **placeholders(name))
                        if re.search(r"\{[a-z_]+\}", rendered):  # a fragment other statements embed
                            continue
                        statement = await conn.prepare(rendered)
                        for attribute in statement.get_attributes():
                            where = f"{path.name}:{block} column {attribute.name}"
                            assert attribute.type.name not in WORKSPACE_TYPED, where
                            assert attribute.type.schema in ("pg_catalog", "ag_catalog"), where
                        checked.append(block)
            finally:
                await staging.rollback()
        assert len(checked) >= 80 and {"counts", "entity_vector", "search_chunks"} <= set(checked)
    finally:
        await rag.drop_workspace()
