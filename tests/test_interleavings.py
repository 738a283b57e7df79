"""Random interleavings of inserts, deletes, replaces and entity edits end as a serial build would.

A seeded scheduler puts a random wait before every SQL statement of every
writer, so each seed runs the same operations in another interleaving. After
each schedule the workspace must equal a control built serially from the
surviving documents (and the same edit): rows, descriptions, weights, source
ids, vectors, fragments, links, degrees and the AGE mirror.

``LIGHTRAG_PG_SCHEDULES`` runs that many more seeds than :data:`FOUND`, the
schedules that brought deleted rows back before writes re-checked the newest
row (kept so the suite replays them).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.errors import GraphItemNotFound

from .conftest import RagFactory
from .crash_support import assert_consistent, graph_mirror

pytestmark = pytest.mark.slow

BASE = {
    "doc-a": "Alice met Bob in Paris. Alice and Carol founded Acme.",
    "doc-b": "Alice and Bob founded Acme in Berlin. Globex hired Bob.",
    "doc-c": "Carol joined Quantum Lab. Carol and Alice argued at Globex.",
}
NEW = {
    "doc-d": "Alice met Bob at Acme. Bob and Carol left Paris for Berlin.",
    "doc-e": "Globex and Acme merged in Paris. Alice wrote to Bob.",
}
REPLACED_B = "Bob and Alice left Acme. Globex moved to Paris."
EDIT = ("Carol", {"description": "Carol leads Quantum Lab."})

FOUND: list[int] = [107, 110, 128, 129, 138, 147, 168]
"""Seeds whose schedules brought deleted rows back before the fix: 7 of seeds 100-179
(a document's rows kept after its delete, rebuilt from its deleted fragments)."""

SETTINGS: dict[str, Any] = {"force_llm_summary_on_merge": 2, "max_parallel_insert": 2}
"""Summaries from the second fragment on, so merges call the model while rows move."""


@contextmanager
def jitter(seed: int, most: float = 0.004) -> Iterator[None]:
    """A random wait (seeded) before every statement any connection runs."""
    rng = random.Random(seed)
    names = ("execute", "fetch", "fetchrow", "fetchval", "executemany")
    originals = {n: getattr(asyncpg.Connection, n) for n in names}

    def wrap(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def delayed(self: asyncpg.Connection, *args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(rng.uniform(0.0, most))
            return await method(self, *args, **kwargs)

        return delayed

    for n, m in originals.items():
        setattr(asyncpg.Connection, n, wrap(m))
    try:
        yield
    finally:
        for n, m in originals.items():
            setattr(asyncpg.Connection, n, m)


def operations(seed: int) -> tuple[list[str], dict[str, str]]:
    """The operations of a seed (names, in start order) and the documents that survive them."""
    rng = random.Random(seed)
    others = rng.sample(["insert-e", "replace-b", "edit", "delete-c"], rng.randint(1, 3))
    ops = ["delete-a", "insert-d", *others]
    rng.shuffle(ops)
    survivors = dict(BASE)
    survivors.pop("doc-a")
    if "delete-c" in ops:
        survivors.pop("doc-c")
    if "replace-b" in ops:
        survivors["doc-b"] = REPLACED_B
    survivors["doc-d"] = NEW["doc-d"]
    if "insert-e" in ops:
        survivors["doc-e"] = NEW["doc-e"]
    return ops, survivors


async def run_operation(rag: LightRAG, op: str) -> bool:
    """Run ``op``; whether it was an edit that landed (it finds no entity to edit when the
    documents naming it are all deleted before another one names it again)."""
    if op.startswith("insert-"):
        doc = f"doc-{op[-1]}"
        result = await rag.ainsert(NEW[doc], ids=doc, file_paths=f"{doc}.txt")
        assert result.progress.docs_failed == 0, result.progress.failures
    elif op.startswith("delete-"):
        await rag.adelete_by_doc_id(f"doc-{op[-1]}")
    elif op == "replace-b":
        result = await rag.ainsert(REPLACED_B, ids="doc-b", file_paths="doc-b.txt", replace=True)
        assert result.progress.docs_failed == 0, result.progress.failures
    elif op == "edit":
        try:
            await rag.aedit_entity(*EDIT)
        except GraphItemNotFound:
            return False
        return True
    return False


async def dump(conn: asyncpg.Connection, ws: str) -> dict[str, Any]:
    """Everything the documents decide in a workspace, without times and versions."""

    async def rows(sql: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in await conn.fetch(sql.format(ws=ws)))

    mirror = await graph_mirror(conn, ws)
    return {
        "entities": await rows(
            "SELECT name, entity_type, description, source_ids, file_paths, degree, context_tokens"
            " FROM {ws}.entities"
        ),
        "relations": await rows(
            "SELECT src, tgt, keywords, description, weight, source_ids, file_paths, context_tokens"
            " FROM {ws}.relations"
        ),
        "entity_vectors": await rows(
            "SELECT name, content, embedding::real[]::text FROM {ws}.entity_vectors"
        ),
        "relation_vectors": await rows(
            "SELECT src, tgt, content, embedding::real[]::text FROM {ws}.relation_vectors"
        ),
        "entity_fragments": await rows(
            "SELECT entity_name, chunk_id, seq, doc_id, entity_type, description, file_path"
            " FROM {ws}.entity_fragments"
        ),
        "relation_fragments": await rows(
            "SELECT src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path"
            " FROM {ws}.relation_fragments"
        ),
        "doc_entities": await rows("SELECT doc_id, entity_name FROM {ws}.doc_entities"),
        "doc_relations": await rows("SELECT doc_id, src, tgt FROM {ws}.doc_relations"),
        "chunks": await rows("SELECT id, doc_id, content FROM {ws}.text_chunks"),
        "docs": await rows("SELECT id, status FROM {ws}.doc_status"),
        "mirror": mirror,
    }


def differences(got: dict[str, Any], want: dict[str, Any]) -> dict[str, tuple[list[Any], list[Any]]]:
    """Per table, the rows only in ``got`` and those only in ``want``."""
    out = {}
    for table in want:
        extra = [r for r in got[table] if r not in want[table]]
        missing = [r for r in want[table] if r not in got[table]]
        if extra or missing:
            out[table] = (extra, missing)
    return out


class Controls:
    """Serial builds, one per set of surviving documents (and edit), made once."""

    def __init__(self, rag_factory: RagFactory, conn: asyncpg.Connection) -> None:
        self.rag_factory = rag_factory
        self.conn = conn
        self.made: dict[tuple[tuple[tuple[str, str], ...], bool], dict[str, Any]] = {}

    async def of(self, survivors: dict[str, str], edited: bool) -> dict[str, Any]:
        key = (tuple(sorted(survivors.items())), edited)
        if key not in self.made:
            control = await self.rag_factory(**SETTINGS)
            ids = sorted(survivors)
            for doc in ids:
                await control.ainsert(survivors[doc], ids=doc, file_paths=f"{doc}.txt")
            if edited:
                await control.aedit_entity(*EDIT)
            self.made[key] = await dump(self.conn, control.workspace)
        return self.made[key]


async def run_schedule(
    seed: int, rag_factory: RagFactory, conn: asyncpg.Connection, controls: Controls
) -> dict[str, tuple[list[Any], list[Any]]]:
    """Run seed ``seed``'s operations concurrently; the differences from its serial control."""
    ops, survivors = operations(seed)
    first = await rag_factory(**SETTINGS)
    for doc in sorted(BASE):
        await first.ainsert(BASE[doc], ids=doc, file_paths=f"{doc}.txt")
    writers = [first] + [await rag_factory(first.workspace, **SETTINGS) for _ in ops[1:]]
    with jitter(seed):
        edits = await asyncio.gather(*(run_operation(w, op) for w, op in zip(writers, ops, strict=True)))
    await assert_consistent(conn, first.workspace)
    return differences(await dump(conn, first.workspace), await controls.of(survivors, any(edits)))


def seeds() -> list[int]:
    extra = int(os.environ.get("LIGHTRAG_PG_SCHEDULES", "16"))
    return sorted(set(FOUND) | {200 + i for i in range(extra)})


@pytest.mark.parametrize("seed", seeds())
async def test_a_schedule_ends_as_the_serial_build_of_its_survivors(
    seed: int, rag_factory: RagFactory, conn: asyncpg.Connection, controls: Controls
) -> None:
    assert await run_schedule(seed, rag_factory, conn, controls) == {}, operations(seed)[0]


@pytest.fixture(scope="module")
def controls_cache() -> dict[Any, dict[str, Any]]:
    return {}


@pytest.fixture
def controls(
    rag_factory: RagFactory, conn: asyncpg.Connection, controls_cache: dict[Any, dict[str, Any]]
) -> Controls:
    made = Controls(rag_factory, conn)
    made.made = controls_cache
    return made
