"""Workspaces on a Citus cluster: created distributed, migrated through the coordinator, and
giving the same tables and answers as on a single node (the ``citus`` fixture's cluster)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db import doctor
from lightrag_pg.db.citus import move_workspace, placement
from lightrag_pg.db.workspace import create_workspace, drop_workspace, read_info, workspace_exists
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.server import ServerSettings
from lightrag_pg.testing import hashed_embedding_func, scripted_llm

from .citus_cluster import CitusCluster
from .migration_drift import drift_of
from .server_support import serving

pytestmark = pytest.mark.slow  # a coordinator and two workers; CI runs them

ROOT = Path(__file__).resolve().parents[1]
DOCS = {
    "d0": "Alice met Bob in Paris. Alice works at Acme.",
    "d1": "Bob joined Globex in Berlin. Acme and Globex compete.",
    "d2": "Carol visited Paris with Alice. Quantum Lab hired Carol.",
    "d3": "Acme opened an office in Berlin. Bob left Acme for Globex.",
    "d4": "Globex sued Acme in Paris. Carol testified for Acme.",
    "d5": "Alice met Bob in Berlin. Quantum Lab moved to Berlin.",
}
MODES = ("local", "global", "hybrid", "naive", "mix", "bypass")
QUESTIONS = ("Where did Alice meet Bob?", "Who competes with Acme in Berlin?")
VOLATILE = ("created_at", "updated_at", "started_at")
DIFFERING = {
    "entities": ("id",),
    "relations": ("id",),
    "workspace_info": ("distributed", "graph_enabled"),
    "doc_status": ("track_id", "metadata"),
}
"""What differs by design: surrogate ids (each node draws identity values from its own
range), whether the workspace is distributed and whether it has the AGE mirror, and the
insert's track id and processing figures (made of the clock and of the order in which
concurrent documents merged, on a single node too). ``corpus_counts`` holds random keys
and deltas split by the timing of concurrent writers: its sums are compared."""
COUNT_SUMS = (
    "SELECT jsonb_build_object('chunks', sum(chunks), 'entities', sum(entities)) FROM {}.corpus_counts"
)


LOGS = ("usage",)
"""Tables that log the calls a run made (their number depends on how concurrent merges met,
their durations on the clock), not what the workspace holds."""


def new_name() -> str:
    return f"c_{uuid.uuid4().hex[:10]}"


async def tables(dsn: str, workspace: str, *, extractions_only: bool = False) -> dict[str, list[str]]:
    """Every table of the workspace as sorted JSON rows, without timestamps and what
    differs by design (:data:`DIFFERING`); with ``extractions_only``, the LLM cache's
    extraction answers only (questions asked while documents arrive are cached with
    the context they saw)."""
    conn = await asyncpg.connect(dsn)
    try:
        names = [
            r[0]
            for r in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", workspace
            )
        ]
        found: dict[str, list[str]] = {}
        for name in names:
            if name in LOGS:
                continue
            if name == "corpus_counts":
                found[name] = [await conn.fetchval(COUNT_SUMS.format(f'"{workspace}"'))]
                continue
            rows = await conn.fetch(
                f'SELECT to_jsonb(t) AS r FROM "{workspace}"."{name}" t'  # test-only: catalog names
            )
            cleaned = []
            for row in rows:
                value = json.loads(row["r"])
                for key in (*VOLATILE, *DIFFERING.get(name, ())):
                    value.pop(key, None)
                if extractions_only and name == "llm_cache" and value["cache_type"] != "extract":
                    continue
                cleaned.append(json.dumps(value, sort_keys=True))
            found[name] = sorted(cleaned)
        return found
    finally:
        await conn.close()


@pytest_asyncio.fixture
async def pair(dsn: str, citus: CitusCluster) -> AsyncIterator[Callable[..., Any]]:
    """Build the same workspace on the single node and on the cluster (scripted LLM unless
    ``llm_model_func`` is given)."""
    made: list[tuple[str, LightRAG]] = []

    async def factory(**settings: Any) -> tuple[LightRAG, LightRAG]:
        name = new_name()
        rags = []
        for where in (dsn, citus.dsn):
            rag = LightRAG(
                dsn=where,
                workspace=name,
                **{"llm_model_func": scripted_llm, "embedding_func": hashed_embedding_func(), **settings},
            )
            made.append((where, rag))
            rags.append(rag)
        conn = await asyncpg.connect(citus.dsn)
        try:
            embedder = hashed_embedding_func()
            await create_workspace(
                conn, citus.dsn, name, embedder.embedding_dim, embedder.model_name, distributed=True
            )
        finally:
            await conn.close()
        for rag in rags:
            await rag.initialize()
        return rags[0], rags[1]

    yield factory
    for where, rag in made:
        await rag.finalize()
        conn = await asyncpg.connect(where)
        try:
            if await workspace_exists(conn, rag.workspace):
                await drop_workspace(conn, rag.workspace)
        finally:
            await conn.close()


async def analyze(rag: LightRAG) -> None:
    """Refresh the workspace's planner statistics (on a cluster, its shards'), as the
    workers' autovacuum does within a minute of a batch."""
    async with rag.session() as s:
        await s.conn.execute("ANALYZE text_chunks, chunk_terms, entities, relations")


def without_timings(value: Any) -> Any:
    """``value`` without its entries made of the clock (timings and timestamps) and the
    usage of the call (cache hits, query id)."""
    if isinstance(value, dict):
        return {
            k: without_timings(v) for k, v in value.items() if k not in ("timings_ms", "usage", *VOLATILE)
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


async def answers(rag: LightRAG) -> dict[str, Any]:
    """Every mode's answer and data for :data:`QUESTIONS`, and a streamed answer, as the
    workspace stands (its statistics as autovacuum left them: ranking reads none)."""
    found: dict[str, Any] = {}
    for question in QUESTIONS:
        for mode in MODES:
            found[f"{mode}:{question}"] = await rag.aquery(question, QueryParam(mode=mode))
            if mode != "bypass":
                data = await rag.aquery_data(question, QueryParam(mode=mode))
                found[f"data {mode}:{question}"] = without_timings(data)
        stream = await rag.aquery_stream(question, QueryParam(mode="mix"))
        found[f"stream:{question}"] = "".join([part async for part in stream])
    return found


async def test_a_distributed_workspace_lives_on_one_worker_without_the_age_mirror(
    citus: CitusCluster, caplog: pytest.LogCaptureFixture
) -> None:
    name = new_name()
    conn = await asyncpg.connect(citus.dsn)
    try:
        with caplog.at_level("INFO", logger="lightrag_pg.db.citus"):
            info = await create_workspace(conn, citus.dsn, name, 16, "m", distributed=True)
        assert info.distributed and not info.graph_enabled
        assert [r.message for r in caplog.records].count(
            f"workspace {name!r} is distributed over Citus: the AGE graph mirror is off (AGE keeps a "
            "graph on one node); the graph lives in its tables as usual, Cypher over it is unavailable"
        ) == 1
        where = await placement(conn, name)
        assert where in [("127.0.0.1", w.port) for w in citus.workers]
        nodes = await conn.fetchval(
            "SELECT count(DISTINCT s.nodeport) FROM citus_shards s JOIN citus_schemas c "
            "ON c.colocation_id = s.colocation_id WHERE c.schema_name = $1::regnamespace",
            name,
        )
        assert nodes == 1
        plain = new_name()
        info = await create_workspace(conn, citus.dsn, plain, 16, "m")
        assert not info.distributed and await placement(conn, plain) is None
        await drop_workspace(conn, plain)
        await drop_workspace(conn, name)
    finally:
        await conn.close()


async def test_distributed_needs_a_citus_coordinator(
    dsn: str, conn: asyncpg.Connection, citus: CitusCluster
) -> None:
    with pytest.raises(ConfigurationError, match="needs Citus"):
        await create_workspace(conn, dsn, new_name(), 16, distributed=True)
    worker = citus.workers[0].dsn
    on_worker = await asyncpg.connect(worker)
    try:
        with pytest.raises(ConfigurationError, match="needs a Citus coordinator"):
            await create_workspace(on_worker, worker, new_name(), 16, distributed=True)
    finally:
        await on_worker.close()


async def test_the_coordinator_with_schema_sharding_on_distributes_new_workspaces(
    citus: CitusCluster,
) -> None:
    name = new_name()
    conn = await asyncpg.connect(citus.dsn)
    try:
        await conn.execute("ALTER DATABASE postgres SET citus.enable_schema_based_sharding = on")
        auto = await asyncpg.connect(citus.dsn)
        try:
            info = await create_workspace(auto, citus.dsn, name, 16)
        finally:
            await auto.close()
        assert info.distributed
        await drop_workspace(conn, name)
    finally:
        await conn.execute("ALTER DATABASE postgres RESET citus.enable_schema_based_sharding")
        await conn.close()


async def test_alembic_creates_a_distributed_workspace_through_the_coordinator(citus: CitusCluster) -> None:
    name = new_name()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "alembic",
        "-x",
        f"workspace={name}",
        "-x",
        "embedding_dim=12",
        "-x",
        "distributed=true",
        "upgrade",
        "head",
        cwd=ROOT,
        env={**os.environ, "LIGHTRAG_PG_DSN": citus.dsn},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    conn = await asyncpg.connect(citus.dsn)
    try:
        info = await read_info(conn, name)
        assert info is not None and info.distributed and info.embedding_dim == 12
        await drop_workspace(conn, name)
    finally:
        await conn.close()


async def test_metadata_and_migrations_do_not_drift_on_a_distributed_workspace(citus: CitusCluster) -> None:
    name = new_name()
    conn = await asyncpg.connect(citus.dsn)
    await create_workspace(conn, citus.dsn, name, 32, distributed=True)
    try:
        assert await drift_of(citus.dsn, name, 32) == []
    finally:
        await drop_workspace(conn, name)
        await conn.close()


async def test_every_feature_gives_the_same_tables_and_answers_on_the_cluster(
    pair: Callable[..., Any], dsn: str, citus: CitusCluster, tmp_path: Path
) -> None:
    single, cluster = await pair()
    assert not single.info.distributed and cluster.info.distributed
    for rag in (single, cluster):
        result = await rag.ainsert(list(DOCS.values()), ids=list(DOCS), file_paths=[f"{i}.txt" for i in DOCS])
        assert result.progress.docs_failed == 0, result.progress.failures
    assert await tables(citus.dsn, cluster.workspace) == await tables(dsn, single.workspace)
    unanalyzed = await answers(single)
    assert await answers(cluster) == unanalyzed
    for rag in (single, cluster):
        await analyze(rag)
    assert await answers(cluster) == await answers(single) == unanalyzed

    for rag in (single, cluster):
        await rag.adelete_by_doc_id("d4")
        replaced = await rag.ainsert(
            ["Alice met Dave in Rome."], ids=["d5"], file_paths=["d5.txt"], replace=True
        )
        assert replaced.progress.docs_failed == 0
        await rag.aedit_entity("Carol", {"description": "Carol is a witness."})
        await rag.acreate_entity("Eve", {"entity_type": "person", "description": "Eve listens."})
        await rag.acreate_relation("Eve", "Alice", {"description": "Eve knows Alice.", "keywords": "knows"})
        await rag.amerge_entities(["Quantum Lab"], "Globex")
        await rag.ainsert_custom_kg(
            {
                "chunks": [{"content": "Frank builds boats.", "source_id": "k1"}],
                "entities": [
                    {
                        "entity_name": "Frank",
                        "entity_type": "person",
                        "description": "A builder.",
                        "source_id": "k1",
                    }
                ],
                "relationships": [
                    {
                        "src_id": "Frank",
                        "tgt_id": "Eve",
                        "description": "Friends.",
                        "keywords": "friends",
                        "weight": 1.0,
                        "source_id": "k1",
                    }
                ],
            }
        )
    assert await tables(citus.dsn, cluster.workspace) == await tables(dsn, single.workspace)
    assert await answers(cluster) == await answers(single)

    graphs = [
        without_timings((await rag.aget_knowledge_graph("Alice", 2, 50)).to_dict())
        for rag in (single, cluster)
    ]
    assert graphs[0] == graphs[1]
    assert await cluster.aget_graph_labels() == await single.aget_graph_labels()
    assert await cluster.asearch_labels("Ali") == await single.asearch_labels("Ali")
    exported = []
    for rag in (single, cluster):
        path = tmp_path / f"{rag.info.distributed}.json"
        await rag.aexport_data(str(path), "json", include_chunks=True)
        exported.append(without_timings(json.loads(path.read_text(encoding="utf-8"))))
    assert exported[0] == exported[1]

    for rag in (single, cluster):
        await rag.areembed(hashed_embedding_func(48))
    assert await tables(citus.dsn, cluster.workspace) == await tables(dsn, single.workspace)
    assert await answers(cluster) == await answers(single)

    conn = await asyncpg.connect(citus.dsn)
    try:
        assert (await doctor.check(conn, cluster.workspace)).ok
        await conn.execute(f'UPDATE "{cluster.workspace}".entities SET degree = 99 WHERE name = $1', "Alice")
        assert (await doctor.check(conn, cluster.workspace)).wrong_degrees == ["Alice"]
        outcome = await doctor.repair(conn, cluster.workspace)
        assert outcome.before.wrong_degrees == ["Alice"] and outcome.after.ok
    finally:
        await conn.close()


async def test_the_server_serves_a_distributed_workspace_named_by_header(
    pair: Callable[..., Any], citus: CitusCluster, tmp_path: Path
) -> None:
    _, cluster = await pair()
    settings = ServerSettings(dsn=citus.dsn, default_workspace=new_name(), input_dir=tmp_path / "inputs")
    async with serving(settings) as server:
        headers = {"LIGHTRAG-WORKSPACE": cluster.workspace}
        posted = await server.client.post("/documents/text", json={"text": DOCS["d0"]}, headers=headers)
        assert posted.status_code == 200, posted.text
        await server.track(posted.json()["track_id"], workspace=cluster.workspace)
        answer = await server.client.post(
            "/query", json={"query": QUESTIONS[0], "mode": "mix"}, headers=headers
        )
        assert answer.status_code == 200, answer.text
        labels = await server.client.get("/graph/label/list", headers=headers)
        assert "Alice" in labels.json()
    conn = await asyncpg.connect(citus.dsn)
    try:
        if await workspace_exists(conn, settings.default_workspace):
            await drop_workspace(conn, settings.default_workspace)
    finally:
        await conn.close()


async def test_moving_a_workspace_while_it_is_queried_and_written_loses_nothing(
    pair: Callable[..., Any], citus: CitusCluster
) -> None:
    single, cluster = await pair()
    first = dict(list(DOCS.items())[:3])
    await cluster.ainsert(list(first.values()), ids=list(first), file_paths=[f"{i}.txt" for i in first])
    await single.ainsert(list(DOCS.values()), ids=list(DOCS), file_paths=[f"{i}.txt" for i in DOCS])
    conn = await asyncpg.connect(citus.dsn)
    try:
        source = await placement(conn, cluster.workspace)
        other = next(w for w in citus.workers if ("127.0.0.1", w.port) != source)
        rest = {k: v for k, v in DOCS.items() if k not in first}
        queried: list[str] = []

        async def keep_querying() -> None:
            for _ in range(20):
                queried.append(await cluster.aquery(QUESTIONS[0], QueryParam(mode="mix")))

        moving = asyncio.ensure_future(move_workspace(conn, cluster.workspace, "127.0.0.1", other.port))
        inserting = asyncio.ensure_future(
            cluster.ainsert(list(rest.values()), ids=list(rest), file_paths=[f"{i}.txt" for i in rest])
        )
        await asyncio.gather(moving, inserting, keep_querying())
        move = moving.result()
        assert move.target == ("127.0.0.1", other.port) and move.size_bytes > 0
        assert await placement(conn, cluster.workspace) == ("127.0.0.1", other.port)
        assert inserting.result().progress.docs_failed == 0
    finally:
        await conn.close()
    assert len(queried) == 20
    moved = await tables(citus.dsn, cluster.workspace, extractions_only=True)
    assert moved == await tables(single.dsn, single.workspace, extractions_only=True)
    assert await answers(cluster) == await answers(single)


async def test_clearing_and_the_doctor_see_the_documents_a_session_indexes_on_the_cluster(
    pair: Callable[..., Any], citus: CitusCluster
) -> None:
    from lightrag_pg.db.advisory import TRY_LOCK, lock_key
    from lightrag_pg.errors import DocumentBusy

    _, cluster = await pair()
    await cluster.ainsert([DOCS["d0"], DOCS["d1"]], ids=["d0", "d1"], file_paths=["d0.txt", "d1.txt"])
    async with cluster.session() as s:
        await s.conn.execute("UPDATE doc_status SET status = 'processing' WHERE id IN ('d0', 'd1')")
    holder = await asyncpg.connect(citus.dsn)  # an indexing session holds d0's lock on the coordinator
    try:
        assert await holder.fetchval(TRY_LOCK, lock_key("doc", cluster.workspace, "d0"))
        conn = await asyncpg.connect(citus.dsn)
        try:
            assert (await doctor.check(conn, cluster.workspace)).stuck_documents == ["d1"]
        finally:
            await conn.close()
        with pytest.raises(DocumentBusy):
            await cluster.aclear_workspace()
    finally:
        await holder.close()


async def test_the_command_line_moves_a_workspace_to_the_worker_named(citus: CitusCluster) -> None:
    name = new_name()
    conn = await asyncpg.connect(citus.dsn)
    try:
        await create_workspace(conn, citus.dsn, name, 16, distributed=True)
        source = await placement(conn, name)
        other = next(w for w in citus.workers if ("127.0.0.1", w.port) != source)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lightrag_pg",
            "workspace",
            "move",
            name,
            "--to",
            f"127.0.0.1:{other.port}",
            "--dsn",
            citus.dsn,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        assert f"-> 127.0.0.1:{other.port}" in out.decode()
        assert await placement(conn, name) == ("127.0.0.1", other.port)
        bad = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lightrag_pg",
            "workspace",
            "move",
            name,
            "--to",
            "nowhere",
            "--dsn",
            citus.dsn,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await bad.communicate()
        assert bad.returncode != 0 and "HOST:PORT" in err.decode()
        await drop_workspace(conn, name)
    finally:
        await conn.close()


async def test_offline_indexing_gives_the_same_tables_on_the_cluster(
    pair: Callable[..., Any], dsn: str, citus: CitusCluster
) -> None:
    single, cluster = await pair(extractor="nlp")
    texts = [DOCS["d0"], DOCS["d2"], DOCS["d3"]]
    for rag in (single, cluster):
        result = await rag.ainsert(texts, ids=["d0", "d2", "d3"], file_paths=["d0.txt", "d2.txt", "d3.txt"])
        assert result.progress.docs_failed == 0, result.progress.failures
    assert await tables(citus.dsn, cluster.workspace) == await tables(dsn, single.workspace)
    for mode in ("local", "mix"):
        got = await cluster.aquery_data(QUESTIONS[0], QueryParam(mode=mode))
        assert without_timings(got) == without_timings(
            await single.aquery_data(QUESTIONS[0], QueryParam(mode=mode))
        )


async def test_a_batch_analyzes_the_shards_it_grew(pair: Callable[..., Any], citus: CitusCluster) -> None:
    """As on a single node, an insert analyzes the retrieval tables it grew, read and analyzed
    on their shards through the coordinator (whose tables are empty shells), and only those."""
    _, cluster = await pair()
    await cluster.ainsert(list(DOCS.values()), ids=list(DOCS), file_paths=[f"{i}.txt" for i in DOCS])
    conn = await asyncpg.connect(citus.dsn)
    try:
        figures = {}
        for table in ("text_chunks", "chunk_terms", "entities", "relation_vectors", "full_docs"):
            figures[table] = await conn.fetchval(
                "SELECT result::float8 FROM run_command_on_shards($1::regclass, "
                "$$SELECT reltuples FROM pg_class WHERE oid = '%s'::regclass$$)",
                f"{cluster.workspace}.{table}",
            )
        pending = await conn.fetchval(
            "SELECT result FROM run_command_on_shards($1::regclass, $$SELECT sum(gin_clean_pending_list("
            "i.indexrelid::regclass)) FROM pg_index i WHERE i.indrelid = '%s'::regclass "
            "AND i.indexrelid::regclass::text LIKE '%%text_fts%%'$$)",
            f"{cluster.workspace}.entities",
        )
    finally:
        await conn.close()
    assert pending == "0"  # the batch moved the full text index's pending list into it
    assert figures["text_chunks"] == len(DOCS) and figures["entities"] > 0 and figures["chunk_terms"] > 0
    assert figures["relation_vectors"] > 0 and figures["full_docs"] == -1  # not a retrieval table


async def test_answers_follow_no_statistics_on_the_cluster(
    pair: Callable[..., Any], citus: CitusCluster
) -> None:
    """The generated corpus on both: the same entities, relations and chunks in every mode,
    and still after the shards' statistics counted 3,000 chunks and 1,000 entities since
    deleted (analyzed while they were there). Read from the statistics (for entity search,
    those of the coordinator's empty shell), the counts made 13 of these 30 answers differ
    between the single node and the cluster."""
    from bench.corpus import CorpusLLM, documents, questions, vocabulary

    from .test_corpus_counts import answers as mode_answers

    vocab = vocabulary(size=60, seed=1)
    texts = documents(6, words=250, seed=1, vocab=vocab)
    asked = questions(8, texts, vocab, seed=1)
    single, cluster = await pair(llm_model_func=CorpusLLM(vocab))
    for rag in (single, cluster):
        assert (await rag.ainsert(texts)).progress.docs_failed == 0
    before = await mode_answers(single, asked)
    assert await mode_answers(cluster, asked) == before
    async with cluster.session() as s:
        await s.conn.execute("INSERT INTO full_docs (id, content) VALUES ('bulk', 'x')")
        await s.conn.execute(
            "INSERT INTO text_chunks (id, doc_id, chunk_order_index, tokens, content) "
            "SELECT 'bulk-' || i, 'bulk', i, 12, 'filler about the weather ' || i "
            "FROM generate_series(1, 3000) i"
        )
        await s.conn.execute(
            "INSERT INTO entities (name, entity_type, description) "
            "SELECT 'junk ' || i, 'concept', 'A junk entity ' || i FROM generate_series(1, 1000) i"
        )
        await s.conn.execute("ANALYZE text_chunks, entities")
        await s.conn.execute("DELETE FROM entities WHERE name LIKE 'junk %'")
        await s.conn.execute("DELETE FROM full_docs WHERE id = 'bulk'")
    assert await mode_answers(cluster, asked) == before
