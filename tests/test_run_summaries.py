"""An indexing run summarises each row it merged once, after all its merges."""

from __future__ import annotations

from collections import Counter
from typing import Any

import asyncpg

from lightrag_pg.testing import classify_prompt, scripted_llm

from .conftest import RagFactory
from .crash_support import snapshot

DOCS = [
    "Alice met Bob in Paris.",
    "Alice and Bob founded Acme in Berlin.",
    "Bob hired Carol. Alice and Bob argued at Globex.",
    "Alice wrote to Carol. Bob read the letter in Paris.",
    "Alice and Bob left Acme for Globex.",
    "Carol and Alice met Bob at Quantum Lab.",
]
SETTINGS: dict[str, Any] = {"force_llm_summary_on_merge": 3}


def counting_llm(asked: Counter[str]) -> Any:
    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        asked[classify_prompt(prompt) or "other"] += 1
        return await scripted_llm(prompt, system_prompt, **kwargs)

    return llm


async def test_one_insert_summarises_each_row_once_and_ends_as_one_document_per_insert(
    rag_factory: RagFactory, dsn: str, conn: asyncpg.Connection
) -> None:
    together: Counter[str] = Counter()
    one = await rag_factory(llm_model_func=counting_llm(together), **SETTINGS)
    await one.ainsert(DOCS, ids=[f"d{i}" for i in range(len(DOCS))])
    apart: Counter[str] = Counter()
    other = await rag_factory(llm_model_func=counting_llm(apart), **SETTINGS)
    for i in reversed(range(len(DOCS))):
        await other.ainsert(DOCS[i], ids=f"d{i}")

    ws = one.workspace
    summarised = await conn.fetchval(
        f"SELECT (SELECT count(*) FROM {ws}.entities WHERE strpos(description, '<SEP>') = 0"
        f"        AND (SELECT count(*) FROM {ws}.entity_fragments f WHERE f.entity_name = name) >= 3)"
        f" + (SELECT count(*) FROM {ws}.relations r WHERE strpos(description, '<SEP>') = 0"
        f"        AND (SELECT count(*) FROM {ws}.relation_fragments f"
        f"             WHERE f.src = r.src AND f.tgt = r.tgt) >= 3)"
    )
    assert summarised >= 2, "Alice, Bob and their relation have enough fragments for a summary"
    assert together["summary"] == summarised, together
    assert apart["summary"] > together["summary"], (apart, together)
    assert await snapshot(conn, one.workspace) == await snapshot(conn, other.workspace)


async def test_rows_a_stopped_run_left_joined_are_summarised_by_the_next_run(
    rag_factory: RagFactory, conn: asyncpg.Connection
) -> None:
    rag = await rag_factory(**SETTINGS)
    await rag.ainsert(DOCS, ids=[f"d{i}" for i in range(len(DOCS))])
    ws = rag.workspace
    expected = {
        r["name"]: r["description"] for r in await conn.fetch(f"SELECT name, description FROM {ws}.entities")
    }
    # As a run leaves them when it stops between its merges and its summaries.
    await conn.execute(
        f"UPDATE {ws}.entities e SET description = ("
        f"  SELECT string_agg(DISTINCT f.description, '<SEP>') FROM {ws}.entity_fragments f"
        f"  WHERE f.entity_name = e.name) WHERE e.name IN ('Alice', 'Bob')"
    )
    assert "<SEP>" in await conn.fetchval(f"SELECT description FROM {ws}.entities WHERE name = 'Alice'")
    await rag.ainsert("Globex opened in Berlin.", ids="d-next")  # the next run
    after = {
        r["name"]: r["description"] for r in await conn.fetch(f"SELECT name, description FROM {ws}.entities")
    }
    assert {n: after[n] for n in ("Alice", "Bob")} == {n: expected[n] for n in ("Alice", "Bob")}
