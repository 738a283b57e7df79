"""The versioned write: a row deleted while a writer waits for it is not created again."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.store.rows import EntityRow, RelationRow


async def _seed(rag: LightRAG) -> tuple[EntityRow, RelationRow]:
    async with rag.unit_of_work() as uow:
        await uow.graph.write_entities(
            [
                EntityRow("Ann", "Person", "from A", ["chunk-a"]),
                EntityRow("Bo", "Person", "from A", ["chunk-a"]),
            ]
        )
        await uow.graph.write_relations([RelationRow("Ann", "Bo", "met", "from A", 1.0, ["chunk-a"])])
    async with rag.session() as s:
        [ann] = await s.graph.get_entities(["Ann"])
        [rel] = await s.graph.edges_of(["Ann"])
    return ann, rel


@pytest.mark.parametrize("kind", ["entity", "relation"])
async def test_a_row_deleted_while_the_writer_waits_is_not_recreated(
    rag: LightRAG, conn: asyncpg.Connection, kind: str
) -> None:
    ann, rel = await _seed(rag)
    ws = rag.workspace
    async with rag.pool.acquire() as other:
        tx = other.transaction()
        await tx.start()
        if kind == "entity":
            await other.execute(f"DELETE FROM {ws}.entities WHERE name = 'Ann'")
        else:
            await other.execute(f"DELETE FROM {ws}.relations WHERE src = 'Ann' AND tgt = 'Bo'")

        async def write() -> object:
            async with rag.unit_of_work() as uow:
                if kind == "entity":
                    merged = EntityRow(
                        "Ann", "Person", "from A<SEP>from B", ["chunk-a", "chunk-b"], version=ann.version
                    )
                    return await uow.graph.write_entities([merged])
                merged_r = RelationRow(
                    "Ann", "Bo", "met", "from A<SEP>from B", 2.0, ["chunk-a", "chunk-b"], version=rel.version
                )
                written, _ = await uow.graph.write_relations([merged_r])
                return written

        writing = asyncio.ensure_future(write())
        await asyncio.sleep(0.3)
        assert not writing.done(), "the write waits for the delete's row lock"
        await tx.commit()
        written = await asyncio.wait_for(writing, 10)
    assert written == set()
    if kind == "entity":
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entities WHERE name = 'Ann'") == 0
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors WHERE name = 'Ann'") == 0
    else:
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.relations") == 0
