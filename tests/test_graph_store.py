"""Graph store: batch operations, one round trip each; AGE mirror; transactions."""

from __future__ import annotations

import dataclasses
import json

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import ConnectionLost, StorageError
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
        await uow.graph.upsert_entities_if_unchanged(entities("A", "B", "C", "D", NASTY))
        await uow.graph.upsert_relations_if_unchanged(
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
    await conn.execute(f"DELETE FROM {rag.workspace}.entities WHERE name = 'C'")
    assert await cypher_count(conn, graph, "(n:entity)") == 4
    assert await cypher_count(conn, graph, "()-[r:DIRECTED]->()") == 2


async def test_rolled_back_unit_of_work_leaves_nothing(rag: LightRAG, conn: asyncpg.Connection) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        async with rag.unit_of_work() as uow:
            await uow.graph.upsert_entities_if_unchanged(entities("X", "Y"))
            await uow.graph.upsert_relations_if_unchanged([RelationRow("X", "Y")])
            raise Boom
    for table in ("entities", "relations", "entity_vectors", "relation_vectors", "doc_entities"):
        assert await conn.fetchval(f"SELECT count(*) FROM {rag.workspace}.{table}") == 0
    graph = f"{rag.workspace}_kg"
    assert await cypher_count(conn, graph, "(n)") == 0
    assert await cypher_count(conn, graph, "()-[r]->()") == 0


async def test_optimistic_upsert_refuses_stale_versions(rag: LightRAG) -> None:
    await seed(rag)
    async with rag.session() as s:
        (a,) = await s.graph.get_entities(["A"])
    stale = dataclasses.replace(a, description="stale")
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
            await uow.graph.upsert_entities_if_unchanged(entities("Lost"))
            pid = await uow.conn.fetchval("SELECT pg_backend_pid()")
            await conn.execute("SELECT pg_terminate_backend($1)", pid)
            await uow.graph.upsert_entities_if_unchanged(entities("Lost2"))
    assert await conn.fetchval(f"SELECT count(*) FROM {rag.workspace}.entities") == 0


async def test_list_columns_of_any_length_round_trip(rag: LightRAG) -> None:
    rows = [
        EntityRow(name="Empty"),
        EntityRow(name="One", source_ids=["c1"], file_paths=["a.txt"]),
        EntityRow(name="Many", source_ids=["c3", "c1", "c2"], file_paths=['we"ird,{path}', "b.txt"]),
    ]
    async with rag.unit_of_work() as uow:
        assert await uow.graph.upsert_entities_if_unchanged(rows) == {"Empty", "One", "Many"}
    async with rag.session() as s:
        found = await s.graph.get_entities(["Empty", "One", "Many"])
    got = {e.name: (e.source_ids, e.file_paths) for e in found}
    assert got == {
        "Empty": ([], []),
        "One": (["c1"], ["a.txt"]),
        "Many": (["c3", "c1", "c2"], ['we"ird,{path}', "b.txt"]),
    }


@pytest.mark.parametrize("method", ["entity_states", "relation_states"])
async def test_merge_state_reads_raise_storage_errors(rag: LightRAG, method: str) -> None:
    keys = ["A"] if method == "entity_states" else [("A", "B")]
    with pytest.raises(StorageError, match="UndefinedTable"):
        async with rag.unit_of_work() as uow:
            await uow.conn.execute("SET LOCAL search_path TO pg_catalog")  # the tables are unknown
            await getattr(uow.graph, method)("doc", keys)


async def test_a_driver_error_leaves_a_pool_connection_translated(rag: LightRAG) -> None:
    with pytest.raises(StorageError, match="UndefinedTable"):
        async with rag.pool.acquire() as conn:
            await conn.fetch("SELECT * FROM no_such_table")


HUB_DOCS = 300

HUB_LINKS = (  # $1: the documents linked to A and to (A, C)
    "INSERT INTO full_docs (id, content, file_path) SELECT d, '', 'f' FROM unnest($1::text[]) d",
    "INSERT INTO doc_entities (doc_id, entity_name) SELECT d, 'A' FROM unnest($1::text[]) d",
    "INSERT INTO doc_relations (doc_id, src, tgt) SELECT d, 'A', 'C' FROM unnest($1::text[]) d",
)
HUB_FRAGMENTS = (  # $1: the documents whose fragments of A and (A, C) are stored
    "INSERT INTO entity_fragments (entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)"
    " SELECT 'A', d || '-c', 0, d, 'Person', 'about A', 'f' FROM unnest($1::text[]) d",
    "INSERT INTO relation_fragments (src, tgt, chunk_id, seq, doc_id, keywords, description, weight,"
    " file_path) SELECT 'A', 'C', d || '-c', 0, d, 'k', 'A and C', 1.0, 'f' FROM unnest($1::text[]) d",
)


async def test_merge_states_of_a_hub_read_its_links_and_fragments_once(rag: LightRAG) -> None:
    """Fault: the check for contributions merged before fragments were recorded (a link
    without fragments) compared every link of a row with every fragment of it, so the
    merge state of a row named by n documents cost n * n (every merge into a hub)."""
    from lightrag_pg.store.graph import SQL

    await seed(rag)
    docs = [f"doc-{i:03d}" for i in range(HUB_DOCS)]
    async with rag.session() as s:
        for statement in HUB_LINKS:
            await s.conn.execute(statement, docs)
        for statement in HUB_FRAGMENTS:  # the last document's links predate fragments: it has none
            await s.conn.execute(statement, docs[:-1])
        entity = await s.graph.entity_states("new", ["A"])
        relation = await s.graph.relation_states("new", [("A", "C")])
        assert entity["A"].unrecorded and relation[("A", "C")].unrecorded
        for statement in HUB_FRAGMENTS:
            await s.conn.execute(statement, docs[-1:])
        entity = await s.graph.entity_states("new", ["A"])
        relation = await s.graph.relation_states("new", [("A", "C")])
        assert not entity["A"].unrecorded and not relation[("A", "C")].unrecorded
        rows = {
            "entity_states": await rows_processed(s.conn, SQL["entity_states"], ["A"], "new", True),
            "relation_states": await rows_processed(
                s.conn, SQL["relation_states"], ["A"], ["C"], "new", True
            ),
        }
    assert all(n < 20 * HUB_DOCS for n in rows.values()), rows


async def rows_processed(conn: asyncpg.Connection, sql: str, *args: object) -> int:
    """Rows all the plan nodes of one run of ``sql`` produce, every loop counted."""
    plan = json.loads(await conn.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", *args))
    nodes, total = [plan[0]["Plan"]], 0.0
    while nodes:
        node = nodes.pop()
        total += node["Actual Rows"] * node["Actual Loops"]
        nodes += node.get("Plans", [])
    return round(total)
