"""An entity removed by a graph edit while an indexer merges a relation to it."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.index.writer import GraphWriter

from .crash_support import assert_consistent, statuses

pytestmark = pytest.mark.slow


async def test_entity_deleted_between_entity_and_relation_writes_is_recreated(
    rag: LightRAG, conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = rag.workspace
    describe_all = GraphWriter.describe_all
    removed: list[str] = []

    async def delete_bob_then_describe(self: GraphWriter, kind: str, *args: Any) -> Any:
        # The relation round has read its endpoints (Bob among them) and not yet written.
        if kind == "relation" and not removed:
            removed.append((await rag.adelete_by_entity("Bob"))["entity_name"])
        return await describe_all(self, kind, *args)

    monkeypatch.setattr(GraphWriter, "describe_all", delete_bob_then_describe)
    result = await rag.ainsert("Alice met Bob in Paris.", ids="race-1")

    assert removed == ["Bob"]
    assert result.progress.docs_failed == 0, result.progress.failures
    assert await statuses(conn, ws) == {"race-1": "processed"}
    bob = await conn.fetchrow(f"SELECT * FROM {ws}.entities WHERE name = 'Bob'")
    assert bob is not None
    pairs = {(r["src"], r["tgt"]) for r in await conn.fetch(f"SELECT src, tgt FROM {ws}.relations")}
    assert ("Alice", "Bob") in pairs, "the relation to Bob recreated him"
    await assert_consistent(conn, ws)
