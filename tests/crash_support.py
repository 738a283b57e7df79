"""Helpers shared by the crash and concurrency tests: workers, consistency checks, snapshots."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lightrag_pg.db.advisory import TRY_LOCK, UNLOCK, lock_key
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.testing import KNOWN, D, classify_prompt, names_in, prompt_input_text, responder
from lightrag_pg.testing import SENTENCE as _SENTENCE
from lightrag_pg.types import GRAPH_FIELD_SEP

from .fake_openai import FakeOpenAI
from .insert_worker import build_rag

ROOT = Path(__file__).resolve().parents[1]

# Members M01..M21 are entities too (see crowd_responder): the committee
# sentence yields more than BATCH relations, which are merged in two
# transactions with an embedding call in between.
MEMBERS = [f"M{i:02d}" for i in range(1, 22)]
CROWD_DOC = f"Alice met Bob in Paris. The committee of {', '.join(MEMBERS)} elected Alice."
CRASH_DOCS = [
    "Alice met Bob in Paris. Alice works at Acme.",
    "Bob joined Globex in Berlin. Acme and Globex compete.",
    CROWD_DOC,
    "Alice and Bob founded Quantum Lab. Paris welcomed Carol.",
    "Globex sued Acme in Paris. Bob testified for Globex.",
    "Carol and Bob met at Quantum Lab in Berlin. Alice joined later.",
]
# Documents enqueued together are processed in id order: the crowd document third.
CRASH_IDS = [f"crash-{i}" for i in range(len(CRASH_DOCS))]
CRASH_PATHS = [f"crash{i}.txt" for i in range(len(CRASH_DOCS))]

# Every document names Alice and Bob; they share a sentence in A, B and C only.
SHARED = {
    "A": "Alice met Bob in Paris.",
    "B": "Alice and Bob founded Acme in Berlin.",
    "C": "Bob hired Carol. Alice and Bob argued at Globex.",
    "D": "Alice wrote to Carol. Bob read the letter in Paris.",
}


# --------------------------------------------------------------------------- scripted LLM

_MEMBER = re.compile(r"\bM\d{2}\b")


def crowd_names(text: str) -> list[str]:
    """Known names and members (M01, M02, ...), in order of first appearance."""
    found = [(text.find(n), n) for n in KNOWN if n in text]
    found += [(m.start(), m.group()) for m in _MEMBER.finditer(text)]
    return list(dict.fromkeys(n for _, n in sorted(found)))


def crowd_extraction(text: str) -> str:
    """The scripted extraction answer, members included (typed Person)."""
    sentences = [s.strip() for s in _SENTENCE.findall(text)]
    lines = []
    for name in crowd_names(text):
        first = next(s for s in sentences if name in crowd_names(s))
        lines.append(f"entity{D}{name}{D}{KNOWN.get(name, 'Person')}{D}{name} is mentioned: {first}")
    seen: set[tuple[str, str]] = set()
    for sentence in sentences:
        names = crowd_names(sentence)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if (a, b) not in seen:
                    seen.add((a, b))
                    lines.append(f"relation{D}{a}{D}{b}{D}co-occurrence, {a.lower()}{D}{sentence}")
    return "\n".join([*lines, "<|COMPLETE|>"])


def crowd_pairs() -> set[tuple[str, str]]:
    """The distinct (canonical) relations of the crowd document: more than one batch."""
    pairs = set()
    for sentence in _SENTENCE.findall(CROWD_DOC):
        names = crowd_names(sentence)
        pairs |= {(min(a, b), max(a, b)) for i, a in enumerate(names) for b in names[i + 1 :]}
    return pairs


def crowd_responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    prompt = messages[-1]["content"]
    if classify_prompt(prompt) == "extraction":
        return crowd_extraction(prompt_input_text(prompt) or "")
    return responder(messages, body)


# --------------------------------------------------------------------------- processes


class Worker:
    """One worker subprocess (``tests.insert_worker`` unless told), its output going to files."""

    def __init__(self, proc: asyncio.subprocess.Process, out: Path, err: Path) -> None:
        self.proc = proc
        self.out = out
        self.err = err

    @classmethod
    async def start(
        cls, tmp_path: Path, name: str, spec: dict[str, Any], module: str = "tests.insert_worker"
    ) -> Worker:
        out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with out.open("wb") as o, err.open("wb") as e:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                module,
                json.dumps(spec),
                cwd=ROOT,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=o,
                stderr=e,
            )
        return cls(proc, out, err)

    def output(self) -> str:
        return f"stdout:\n{self.out.read_text()}\nstderr:\n{self.err.read_text()[-4000:]}"

    def result(self) -> dict[str, Any]:
        lines = [json.loads(x) for x in self.out.read_text().splitlines() if x.startswith("{")]
        done = [x for x in lines if x.get("event") == "done"]
        assert done, f"worker printed no result\n{self.output()}"
        return done[-1]

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await asyncio.wait_for(self.proc.wait(), 10)


def spec(dsn: str, workspace: str, llm_server: FakeOpenAI, texts: list[str], **extra: Any) -> dict[str, Any]:
    return {"dsn": dsn, "workspace": workspace, "base_url": llm_server.base_url, "texts": texts, **extra}


async def wait_until(
    check: Callable[[], Awaitable[bool]], what: str, *, timeout: float, worker: Worker | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if worker is not None and worker.proc.returncode is not None:
            pytest.fail(f"worker exited ({worker.proc.returncode}) before {what}\n{worker.output()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.01)


def doc_lock_key(workspace: str, doc_id: str) -> str:
    """The pipeline's session advisory lock key of one document."""
    return lock_key("doc", workspace, doc_id)


async def wait_doc_locks_released(conn: asyncpg.Connection, ws: str, doc_ids: Iterable[str]) -> None:
    """Wait until no session holds a document lock (a killed client's backend exits shortly after)."""
    keys = [doc_lock_key(ws, d) for d in doc_ids]

    async def free() -> bool:
        for key in keys:
            if not await conn.fetchval(TRY_LOCK, key):
                return False
            await conn.execute(UNLOCK, key)
        return True

    await wait_until(free, "the dead worker's document locks to be released", timeout=10)


async def drop_if_exists(conn: asyncpg.Connection, ws: str) -> None:
    if await workspace_exists(conn, ws):
        await drop_workspace(conn, ws)


# --------------------------------------------------------------------------- invariants


def fragments(description: str) -> tuple[str, ...]:
    """A joined description's fragments, sorted (their order follows the merge order)."""
    return tuple(sorted(f for f in description.split(GRAPH_FIELD_SEP) if f))


async def statuses(conn: asyncpg.Connection, ws: str) -> dict[str, str]:
    return {r["id"]: r["status"] for r in await conn.fetch(f"SELECT id, status FROM {ws}.doc_status")}


async def graph_mirror(conn: asyncpg.Connection, ws: str) -> tuple[list[str], list[float]]:
    """Entity names of the AGE vertices and weights of the AGE edges."""
    g = f'"{ws}_kg"'
    names = [
        json.loads(r[0])["entity_id"] for r in await conn.fetch(f'SELECT properties::text FROM {g}."entity"')
    ]
    weights = [
        json.loads(r[0])["weight"] for r in await conn.fetch(f'SELECT properties::text FROM {g}."DIRECTED"')
    ]
    return sorted(names), sorted(weights)


async def assert_consistent(conn: asyncpg.Connection, ws: str) -> None:
    """What must hold at every commit, crash or not."""
    dangling = await conn.fetch(
        f"SELECT src, tgt FROM {ws}.relations r"
        f" WHERE NOT EXISTS (SELECT 1 FROM {ws}.entities e WHERE e.name = r.src)"
        f" OR NOT EXISTS (SELECT 1 FROM {ws}.entities e WHERE e.name = r.tgt)"
    )
    assert dangling == []
    entity_vectors = await conn.fetch(
        f"SELECT e.name, count(v.name) AS n FROM {ws}.entities e LEFT JOIN {ws}.entity_vectors v USING (name)"
        f" GROUP BY e.name HAVING count(v.name) <> 1"
    )
    assert entity_vectors == [], "entities without exactly one vector"
    relation_vectors = await conn.fetch(
        f"SELECT r.src, r.tgt, count(v.src) AS n FROM {ws}.relations r LEFT JOIN {ws}.relation_vectors v"
        f" USING (src, tgt) GROUP BY r.src, r.tgt HAVING count(v.src) <> 1"
    )
    assert relation_vectors == [], "relations without exactly one vector"
    n_entities = await conn.fetchval(f"SELECT count(*) FROM {ws}.entities")
    n_relations = await conn.fetchval(f"SELECT count(*) FROM {ws}.relations")
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.entity_vectors") == n_entities
    assert await conn.fetchval(f"SELECT count(*) FROM {ws}.relation_vectors") == n_relations
    g = f'"{ws}_kg"'
    assert await conn.fetchval(f'SELECT count(*) FROM {g}."entity"') == n_entities
    assert await conn.fetchval(f'SELECT count(*) FROM {g}."DIRECTED"') == n_relations
    names, weights = await graph_mirror(conn, ws)
    assert names == sorted(r[0] for r in await conn.fetch(f"SELECT name FROM {ws}.entities"))
    assert weights == sorted(r[0] for r in await conn.fetch(f"SELECT weight FROM {ws}.relations"))
    processed = await conn.fetch(
        f"SELECT s.id, s.chunks_list, s.chunks_count,"
        f" array(SELECT c.id FROM {ws}.text_chunks c WHERE c.doc_id = s.id ORDER BY c.id) AS stored,"
        f" (SELECT count(*) FROM {ws}.text_chunks c JOIN {ws}.chunk_vectors v ON v.chunk_id = c.id"
        f"  WHERE c.doc_id = s.id) AS vectors"
        f" FROM {ws}.doc_status s WHERE s.status = 'processed'"
    )
    for doc in processed:
        assert doc["chunks_list"], f"processed document {doc['id']} has no chunks_list"
        assert sorted(doc["chunks_list"]) == doc["stored"], doc["id"]
        assert doc["chunks_count"] == len(doc["chunks_list"]) == doc["vectors"], doc["id"]
    # A document's chunks are written in the transaction that marks it processed.
    assert (
        await conn.fetchval(
            f"SELECT count(*) FROM {ws}.text_chunks c JOIN {ws}.doc_status s ON s.id = c.doc_id"
            f" WHERE s.status <> 'processed'"
        )
        == 0
    )
    # A link is written with the merge it records: the row carries one of the document's chunks.
    assert (
        await conn.fetch(
            f"SELECT l.doc_id, l.entity_name FROM {ws}.doc_entities l"
            f" JOIN {ws}.doc_status s ON s.id = l.doc_id"
            f" JOIN {ws}.entities e ON e.name = l.entity_name"
            f" WHERE s.status = 'processed' AND NOT (e.source_ids && s.chunks_list)"
        )
        == []
    )
    assert (
        await conn.fetch(
            f"SELECT l.doc_id, l.src, l.tgt FROM {ws}.doc_relations l"
            f" JOIN {ws}.doc_status s ON s.id = l.doc_id"
            f" JOIN {ws}.relations r ON (r.src, r.tgt) = (l.src, l.tgt)"
            f" WHERE s.status = 'processed' AND NOT (r.source_ids && s.chunks_list)"
        )
        == []
    )


async def snapshot(conn: asyncpg.Connection, ws: str) -> dict[str, Any]:
    """Everything an insert decides, independent of the order documents were merged in."""
    entities = sorted(
        (
            r["name"],
            r["entity_type"],
            sorted(r["source_ids"]),
            sorted(r["file_paths"]),
            fragments(r["description"]),
        )
        for r in await conn.fetch(f"SELECT * FROM {ws}.entities")
    )
    relations = sorted(
        (
            r["src"],
            r["tgt"],
            r["weight"],
            sorted(r["source_ids"]),
            sorted(r["file_paths"]),
            fragments(r["description"]),
            sorted(k.strip() for k in r["keywords"].split(",")),
        )
        for r in await conn.fetch(f"SELECT * FROM {ws}.relations")
    )
    return {
        "entities": entities,
        "relations": relations,
        "chunks": sorted(
            tuple(r) for r in await conn.fetch(f"SELECT id, doc_id, content FROM {ws}.text_chunks")
        ),
        "docs": sorted(
            (r["id"], r["status"], sorted(r["chunks_list"]))
            for r in await conn.fetch(f"SELECT id, status, chunks_list FROM {ws}.doc_status")
        ),
        "doc_entities": sorted(tuple(r) for r in await conn.fetch(f"SELECT * FROM {ws}.doc_entities")),
        "doc_relations": sorted(tuple(r) for r in await conn.fetch(f"SELECT * FROM {ws}.doc_relations")),
    }


def co_occurrences(texts: Iterable[str], a: str, b: str) -> int:
    """Chunks (one per short document) with a sentence naming both ``a`` and ``b``: the scripted weight."""
    return sum(any(a in names_in(s) and b in names_in(s) for s in _SENTENCE.findall(t)) for t in texts)


async def ingest_control(dsn: str, ws: str, llm_server: FakeOpenAI, texts: list[str], **kw: Any) -> None:
    """Ingest ``texts`` into a fresh workspace in one uninterrupted insert."""
    async with build_rag(dsn, ws, llm_server.base_url) as control:
        result = await control.ainsert(texts, **kw)
    assert result.progress.docs_done == len(texts) and result.progress.docs_failed == 0


# --------------------------------------------------------------------------- tests
