"""Graph store: batch operations, one round trip each; AGE mirror; transactions."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import ConnectionLost
from lightrag_pg.store.rows import EntityRow, RelationRow
from lightrag_pg.testing import StatementCounter

NASTY = 'O\'Brien $$ "quoted" ; DROP TABLE x; --'


def entities(*names: str) -> list[EntityRow]:
    return [
        EntityRow(name=n, entity_type="Person", description=f"about {n}", source_ids=["c1"]) for n in names
    ]


async def cypher_count(conn: asyncpg.Connection, graph: str, pattern: str) -> int:
    await conn.execute("LOAD 'age'; SET search_path = ag_catalog, public")
    sql = (
        f"SELECT * FROM ag_catalog.cypher('{graph}', $$ MATCH {pattern} RETURN count(*) $$) "
        "AS (n ag_catalog.agtype)"
    )
    return int(str(await conn.fetchval(sql)))


async def seed(rag: LightRAG) -> None:
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities(entities("A", "B", "C", "D", NASTY))
        await uow.graph.upsert_relations(
            [
                RelationRow("B", "A", keywords="k1", weight=2.0),
                RelationRow("A", "C", weight=1.0),
                RelationRow("C", "D", weight=3.0),
                RelationRow(NASTY, "A", description="it's $$ fine", weight=1.5),
            ]
        )


async def test_batch_operations_take_one_round_trip_each(rag: LightRAG) -> None:
    await seed(rag)
    async with rag.session() as s:
        with StatementCounter() as counter:
            got = await s.graph.get_entities(["C", "missing", "A", NASTY])
            assert [e.name for e in got] == ["C", "A", NASTY]
            assert {e.name: e.degree for e in got} == {"C": 2, "A": 3, NASTY: 1}
            assert counter.statements == 1

            counter.clear()
            assert await s.graph.node_degrees(["A", "B", "zzz"]) == {"A": 3, "B": 1, "zzz": 0}
            assert counter.statements == 1

            counter.clear()
            rels = await s.graph.get_relations([("B", "A"), ("D", "C"), ("A", "D")])
            assert [(r.src, r.tgt, r.degree) for r in rels] == [("A", "B", 4), ("C", "D", 3)]
            assert counter.statements == 1

            counter.clear()
            assert await s.graph.edge_degrees([("A", "B"), ("D", "A")]) == {("A", "B"): 4, ("A", "D"): 4}
            assert counter.statements == 1

            counter.clear()
            edges = await s.graph.edges_of(["A", "D"])
            assert {r.pair for r in edges} == {("A", "B"), ("A", "C"), ("C", "D"), ("A", NASTY)}
            assert counter.statements == 1


async def test_relations_are_undirected_and_canonical(rag: LightRAG, conn: asyncpg.Connection) -> None:
    await seed(rag)
    rows = await conn.fetch(f"SELECT src, tgt FROM {rag.workspace}.relations ORDER BY src, tgt")
    assert all(r["src"] < r["tgt"] for r in rows)
    with pytest.raises(ValueError):
        RelationRow("A", "A")


async def test_age_graph_mirrors_committed_state(rag: LightRAG, conn: asyncpg.Connection) -> None:
    await seed(rag)
    graph = f"{rag.workspace}_kg"
    assert await cypher_count(conn, graph, "(n:entity)") == 5
    assert await cypher_count(conn, graph, "()-[r:DIRECTED]->()") == 4
    row = await conn.fetchval(
        f"SELECT * FROM ag_catalog.cypher('{graph}', $q$ MATCH (a:entity)-[r]-(b:entity {{entity_id: 'A'}}) "
        f"WHERE r.weight = 1.5 RETURN a.entity_id $q$) AS (n ag_catalog.agtype)"
    )
    assert json.loads(str(row)) == NASTY
    async with rag.unit_of_work() as uow:
        await uow.graph.delete_entities(["C"])
    assert await cypher_count(conn, graph, "(n:entity)") == 4
    assert await cypher_count(conn, graph, "()-[r:DIRECTED]->()") == 2


async def test_rolled_back_unit_of_work_leaves_nothing(rag: LightRAG, conn: asyncpg.Connection) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        async with rag.unit_of_work() as uow:
            await uow.graph.upsert_entities(entities("X", "Y"))
            await uow.graph.upsert_relations([RelationRow("X", "Y")])
            raise Boom
    for table in ("entities", "relations", "entity_vectors", "relation_vectors", "doc_entities"):
        assert await conn.fetchval(f"SELECT count(*) FROM {rag.workspace}.{table}") == 0
    graph = f"{rag.workspace}_kg"
    assert await cypher_count(conn, graph, "(n)") == 0
    assert await cypher_count(conn, graph, "()-[r]->()") == 0


async def test_concurrent_units_of_work_lose_no_update(rag: LightRAG) -> None:
    await seed(rag)
    started = asyncio.Event()

    async def append_source(chunk: str, hold: float) -> None:
        async with rag.unit_of_work() as uow:
            locked = await uow.graph.lock_entities(["A"])
            started.set()
            row = locked["A"]
            await asyncio.sleep(hold)
            row.source_ids = [*row.source_ids, chunk]
            await uow.graph.upsert_entities([row])

    first = asyncio.create_task(append_source("c-first", 0.3))
    await started.wait()
    await append_source("c-second", 0.0)
    await first
    async with rag.session() as s:
        (a,) = await s.graph.get_entities(["A"])
    assert a.source_ids == ["c1", "c-first", "c-second"]


async def test_optimistic_upsert_refuses_stale_versions(rag: LightRAG) -> None:
    await seed(rag)
    async with rag.session() as s:
        (a,) = await s.graph.get_entities(["A"])
    stale = EntityRow(**{**a.as_json(), "description": "stale"})
    async with rag.unit_of_work() as uow:
        assert await uow.graph.upsert_entities_if_unchanged([a]) == {"A"}
        assert await uow.graph.upsert_entities_if_unchanged([stale]) == set()
        fresh = EntityRow(name="New", version=0)
        assert await uow.graph.upsert_entities_if_unchanged([fresh]) == {"New"}


async def test_dropped_connection_mid_transaction_is_translated(
    rag: LightRAG, conn: asyncpg.Connection
) -> None:
    with pytest.raises(ConnectionLost):
        async with rag.unit_of_work() as uow:
            await uow.graph.upsert_entities(entities("Lost"))
            pid = await uow.conn.fetchval("SELECT pg_backend_pid()")
            await conn.execute("SELECT pg_terminate_backend($1)", pid)
            await uow.graph.upsert_entities(entities("Lost2"))
    assert await conn.fetchval(f"SELECT count(*) FROM {rag.workspace}.entities") == 0
    async with rag.session() as s:
        assert await s.graph.counts() == (0, 0)
