"""Importing what upstream LightRAG 1.5.7 itself indexed, and exporting back to it.

Upstream runs from its own virtualenv (created once, cached under
``~/.cache/lightrag_pg/upstream-<version>``) through the differential benchmark's runner
(:mod:`bench.upstream_runner`), on its file storages and on its PostgreSQL storages
with the AGE graph (in a database of its own on the test server). Both systems get
their LLM answers from one scripted LLM (:class:`bench.common.SharedLLM`) and
their vectors from one hashed embedding; questions are asked with fixed keywords,
lightrag_pg's lexical search off (upstream has none).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bench.common import (
    UPSTREAM_VERSION,
    Query,
    SharedLLM,
    graph_from_rows,
    run_upstream,
    tiktoken_cache,
    upstream_python,
)
from bench.corpus import documents, questions, vocabulary
from bench.differential import MODES, Comparison, param_of, plan, retrieved, search_distances
from bench.differential_compare import Graph, Retrieved, View, jaccard
from lightrag_pg import LightRAG

from .conftest import RagFactory
from .lightrag_compat_support import Counting, database_dsn, drop_database, new_database, snapshot

pytestmark = pytest.mark.slow

DOCS, WORDS, QUESTIONS = 6, 400, 3
MODEL = "hashed-bow-64"
DELETED = 2
"""The document deleted again (and left out of the second corpus)."""


@dataclass
class Upstream:
    """What upstream indexed and answered, in each shape."""

    texts: list[str]
    paths: list[str]
    queries: list[Query]
    llm: SharedLLM
    files: Path
    files_answers: list[dict[str, Any]]
    files_graph: Graph
    files_again: list[dict[str, Any]]
    without: Path
    pg_dsn: str
    pg_database: str
    pg_workspace: str
    pg_answers: list[dict[str, Any]]
    pg_graph: Graph
    pg_again: list[dict[str, Any]]
    python: Path
    env: dict[str, str]
    work: Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lightrag_pg" / f"upstream-{UPSTREAM_VERSION}"


def postgres_env(dsn: str, database: str) -> dict[str, str]:
    """Upstream's ``POSTGRES_*`` settings for database ``database`` of the server of ``dsn``."""
    parts = urlsplit(dsn)
    host = parts.hostname or parse_qs(parts.query).get("host", ["localhost"])[0]
    return {
        "POSTGRES_HOST": host,
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": parts.username or "postgres",
        "POSTGRES_PASSWORD": parts.password or "",
        "POSTGRES_DATABASE": database,
        "POSTGRES_MAX_CONNECTIONS": "4",
    }


@pytest.fixture(scope="module")
def upstream(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = cache_dir()
    python = upstream_python(cache)
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache(cache))}
    vocab = vocabulary(seed=0)
    texts = documents(DOCS, WORDS, 0, vocab)
    paths = [f"doc-{i}.txt" for i in range(DOCS)]
    llm = SharedLLM(vocab)
    queries = plan(questions(QUESTIONS, texts, vocab, seed=1), llm)
    work = tmp_path_factory.mktemp("upstream")

    def files(name: str, keep: list[int]) -> tuple[Path, list[dict[str, Any]], Graph]:
        folder = work / name
        answers, graph, _ = run_upstream(
            python,
            env,
            work / f"{name}-run",
            [texts[i] for i in keep],
            [paths[i] for i in keep],
            queries,
            llm,
            "hashed",
            {},
            storage="files",
            working_dir=folder,
            workspace="",
        )
        return folder, answers, graph

    full, answers, graph = files("files", list(range(DOCS)))
    _, again, _ = files("files-again", list(range(DOCS)))
    without, _, _ = files("without", [i for i in range(DOCS) if i != DELETED])
    database = asyncio.run(new_database(dsn))
    pg_env = {**env, **postgres_env(dsn, database)}
    pg_answers, pg_graph, _ = run_upstream(
        python, pg_env, work / "pg-run", texts, paths, queries, llm, "hashed", {}, workspace="up_ws"
    )
    pg_again, _, _ = run_upstream(
        python, pg_env, work / "pg-again", texts, paths, queries, llm, "hashed", {}, workspace="up_again"
    )
    yield Upstream(
        texts=texts,
        paths=paths,
        queries=queries,
        llm=llm,
        files=full,
        files_answers=answers,
        files_graph=graph,
        files_again=again,
        without=without,
        pg_dsn=database_dsn(dsn, database),
        pg_database=database,
        pg_workspace="up_ws",
        pg_answers=pg_answers,
        pg_graph=pg_graph,
        pg_again=pg_again,
        python=python,
        env=env,
        work=work,
    )
    asyncio.run(drop_database(dsn, database))


def mode_jaccard(a: list[dict[str, Any]], b: list[dict[str, Any]], queries: list[Query]) -> dict[str, float]:
    """Mean Jaccard of the retrieved entities, relations and chunks, per mode."""
    out: dict[str, list[float]] = {}
    for q, x, y in zip(queries, a, b, strict=True):
        rx, ry = Retrieved.from_data(x), Retrieved.from_data(y)
        scores = [jaccard(getattr(rx, f), getattr(ry, f)) for f in ("entities", "relations", "chunks")]
        out.setdefault(q.mode, []).append(sum(scores) / 3)
    return {mode: sum(v) / len(v) for mode, v in out.items()}


async def ours(rag: LightRAG, queries: list[Query]) -> list[dict[str, Any]]:
    return [await rag.aquery_data(q.question, param_of(q)) for q in queries]


async def tie_aware(
    rag: LightRAG,
    answers: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    graph: Graph,
    queries: list[Query],
) -> dict[str, float]:
    """:func:`mode_jaccard` counting rows kept or dropped only by the order of rows at equal
    distance (or equal degree and weight) at a cut as agreeing: each system breaks such ties its
    own way (upstream by its index's order; lightrag_pg by name), see bench/differential.py.
    The distances are read from the imported vectors, which are upstream's."""
    async with rag.pool.acquire() as conn:
        ours_graph = graph_from_rows(
            await conn.fetch("SELECT name, entity_type, description FROM entities"),
            await conn.fetch("SELECT src, tgt, weight, keywords, description FROM relations"),
        )
        distances = [await search_distances(conn, q, "hashed") for q in queries]
    out: dict[str, list[float]] = {}
    for q, a, b, d in zip(queries, answers, theirs, distances, strict=True):
        c = Comparison.of(q, View(ours_graph, d, retrieved(a)), View(graph, d, retrieved(b), strict=True))
        out.setdefault(q.mode, []).append(sum(c.tie_aware_scores) / 3)
    return {mode: sum(v) / len(v) for mode, v in out.items()}


def upstream_counts(folder: Path) -> dict[str, int]:
    import json
    import xml.etree.ElementTree as ET

    def size(name: str) -> int:
        return len(json.loads((folder / name).read_text()))

    graph = ET.parse(folder / "graph_chunk_entity_relation.graphml").getroot()
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    vdb = {
        n: len(json.loads((folder / f"vdb_{n}.json").read_text())["data"])
        for n in ("chunks", "entities", "relationships")
    }
    return {
        "full_docs": size("kv_store_full_docs.json"),
        "doc_status": size("kv_store_doc_status.json"),
        "text_chunks": size("kv_store_text_chunks.json"),
        "llm_cache": size("kv_store_llm_response_cache.json"),
        "entities": len(graph.findall(f".//{ns}node")),
        "relations": len(graph.findall(f".//{ns}edge")),
        "chunk_vectors": vdb["chunks"],
        "entity_vectors": vdb["entities"],
        "relation_vectors": vdb["relationships"],
    }


def counts_of(tables: dict[str, list[Any]]) -> dict[str, int]:
    names = (
        "full_docs",
        "doc_status",
        "text_chunks",
        "entities",
        "relations",
        "chunk_vectors",
        "entity_vectors",
        "relation_vectors",
    )
    out = {n: len(tables[n]) for n in names}
    out["llm_cache"] = sum(1 for r in tables["llm_cache"] if not r[0].startswith("extract:"))
    return out


async def imported(
    rag_factory: RagFactory, source: str | Path, workspace: str | None = None, model: str | None = MODEL
) -> tuple[LightRAG, Counting]:
    models = Counting(llm=None)
    rag = await rag_factory(llm_model_func=models, embedding_func=models.embedding)
    await rag.aimport_lightrag(source, workspace, embedding_model=model)
    return rag, models


async def test_a_working_directory_upstream_indexed_is_imported_and_retrieves_what_upstream_does(
    upstream: Upstream, rag_factory: RagFactory, dsn: str
) -> None:
    rag, models = await imported(rag_factory, upstream.files)
    assert models.llm_calls == models.embed_calls == 0
    assert counts_of(await snapshot(dsn, rag.workspace)) == upstream_counts(upstream.files)
    answers = await ours(rag, upstream.queries)
    raw = mode_jaccard(answers, upstream.files_answers, upstream.queries)
    ties = await tie_aware(rag, answers, upstream.files_answers, upstream.files_graph, upstream.queries)
    upstream_twice = mode_jaccard(upstream.files_again, upstream.files_answers, upstream.queries)
    reindexed = await rag_factory(llm_model_func=upstream.llm, embedding_func=Counting().embedding)
    await reindexed.ainsert(upstream.texts, file_paths=upstream.paths)
    before = mode_jaccard(await ours(reindexed, upstream.queries), upstream.files_answers, upstream.queries)
    print(
        f"\nfiles: imported vs upstream {raw}, tie-aware {ties}; upstream vs itself {upstream_twice}; "
        f"indexed here from scratch (no import) vs upstream {before}"
    )
    assert set(ties) == set(MODES)
    assert all(ties[m] >= upstream_twice[m] - 1e-9 for m in MODES)


async def test_postgres_storages_upstream_wrote_with_age_are_imported_and_retrieve_what_upstream_does(
    upstream: Upstream, rag_factory: RagFactory, dsn: str
) -> None:
    rag, models = await imported(rag_factory, upstream.pg_dsn, upstream.pg_workspace, model=None)
    assert models.llm_calls == models.embed_calls == 0
    tables = await snapshot(dsn, rag.workspace)
    assert counts_of(tables) == await upstream_table_counts(upstream)
    answers = await ours(rag, upstream.queries)
    raw = mode_jaccard(answers, upstream.pg_answers, upstream.queries)
    ties = await tie_aware(rag, answers, upstream.pg_answers, upstream.pg_graph, upstream.queries)
    upstream_twice = mode_jaccard(upstream.pg_again, upstream.pg_answers, upstream.queries)
    print(f"\npostgres: ours vs upstream {raw}, tie-aware {ties}; upstream vs itself {upstream_twice}")
    assert all(ties[m] >= upstream_twice[m] - 1e-9 for m in MODES)


async def upstream_table_counts(upstream: Upstream) -> dict[str, int]:
    import asyncpg

    conn = await asyncpg.connect(upstream.pg_dsn)
    try:
        ws = upstream.pg_workspace
        tables = {
            r[0]
            for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE tablename LIKE 'lightrag_%'")
        }

        async def count(table: str) -> int:
            return int(await conn.fetchval(f"SELECT count(*) FROM {table} WHERE workspace = $1", ws))

        def vdb(base: str) -> str:
            return next(t for t in tables if t.startswith(base + "_"))

        await conn.execute("LOAD 'age'")
        graph = f"{ws}_chunk_entity_relation"
        return {
            "full_docs": await count("lightrag_doc_full"),
            "doc_status": await count("lightrag_doc_status"),
            "text_chunks": await count("lightrag_doc_chunks"),
            "llm_cache": await count("lightrag_llm_cache"),
            "entities": int(await conn.fetchval(f'SELECT count(*) FROM "{graph}"._ag_label_vertex')),
            "relations": int(await conn.fetchval(f'SELECT count(*) FROM "{graph}"._ag_label_edge')),
            "chunk_vectors": await count(vdb("lightrag_vdb_chunks")),
            "entity_vectors": await count(vdb("lightrag_vdb_entity")),
            "relation_vectors": await count(vdb("lightrag_vdb_relation")),
        }
    finally:
        await conn.close()


async def test_an_export_is_opened_by_upstream_and_answers_with_the_same_context(
    upstream: Upstream, rag_factory: RagFactory, tmp_path: Path
) -> None:
    rag, _ = await imported(rag_factory, upstream.files)
    await rag.aexport_lightrag(tmp_path / "exported")
    answers, _, _ = await asyncio.to_thread(
        run_upstream,
        upstream.python,
        upstream.env,
        tmp_path / "run",
        [],
        [],
        upstream.queries,
        upstream.llm,
        "hashed",
        {},
        storage="files",
        working_dir=tmp_path / "exported",
        workspace="",
    )
    in_order = 0
    for q, got, expected in zip(upstream.queries, answers, upstream.files_answers, strict=True):
        assert context(got, set) == context(expected, set), (q.mode, q.question)
        in_order += context(got, list) == context(expected, list)
    print(f"\nexport: same context for all {len(answers)} questions, in the same order for {in_order}")


def context(answer: dict[str, Any], kind: Any) -> tuple[Any, ...]:
    """The entities, relations and chunks of an answer with their texts (``kind``: list, or set
    to leave out the order of rows upstream ranks equal, which follows its graph's insertion order)."""
    data = answer["data"]
    return (
        kind((e["entity_name"], e.get("entity_type"), e.get("description")) for e in data["entities"]),
        kind(
            (*sorted((r["src_id"], r["tgt_id"])), r.get("description"), r.get("keywords"), r.get("weight"))
            for r in data["relationships"]
        ),
        kind(c["content"] for c in data["chunks"]),
    )


async def test_deleting_an_imported_document_leaves_what_importing_without_it_gives(
    upstream: Upstream, rag_factory: RagFactory, dsn: str
) -> None:
    deleted, models = await imported(rag_factory, upstream.files)
    doc_id = next(
        r[0] for r in (await snapshot(dsn, deleted.workspace))["full_docs"] if r[2] == upstream.paths[DELETED]
    )
    before = await snapshot(dsn, deleted.workspace)
    touched_entities = {r[0] for r in before["entity_fragments"] if r[3] == doc_id}
    touched_relations = {(r[0], r[1]) for r in before["relation_fragments"] if r[4] == doc_id}
    await deleted.adelete_by_doc_id(doc_id)
    assert models.llm_calls == 0  # few fragments per row: joined, no summary
    without, _ = await imported(rag_factory, upstream.without)
    a, b = await snapshot(dsn, deleted.workspace), await snapshot(dsn, without.workspace)
    without_track_ids = {
        "doc_status": "SELECT id, status, chunks_count, chunks_list, file_path, error_msg FROM doc_status"
    }
    assert await snapshot(dsn, deleted.workspace, without_track_ids) == await snapshot(
        dsn, without.workspace, without_track_ids
    )  # (each upstream run gave its documents a track id of its own)
    exact = (
        "full_docs",
        "text_chunks",
        "chunk_vectors",
        "entity_fragments",
        "relation_fragments",
        "doc_entities",
        "doc_relations",
    )
    for table in exact:
        assert a[table] == b[table], table
    assert [r[:2] for r in a["llm_cache"]] == [r[:2] for r in b["llm_cache"]]
    assert [r[0] for r in a["entities"]] == [r[0] for r in b["entities"]]
    assert [r[:2] for r in a["relations"]] == [r[:2] for r in b["relations"]]
    assert touched_entities and touched_relations
    for table, vectors, touched, width in (
        ("entities", "entity_vectors", touched_entities, 1),
        ("relations", "relation_vectors", touched_relations, 2),
    ):
        for x, y, vx, vy in zip(a[table], b[table], a[vectors], b[vectors], strict=True):
            key = x[0] if width == 1 else x[:2]
            if key not in touched:  # untouched: every column and the vector, as upstream stored them
                assert (x, vx) == (y, vy)
            else:  # rebuilt here by the insert's rules: upstream's order of fragments and keywords aside
                assert rebuilt(x, width) == rebuilt(y, width)


def rebuilt(row: tuple[Any, ...], width: int) -> tuple[Any, ...]:
    """A row with its joined fields as sets: an entity's type (lower case), description pieces,
    sources and files; a relation's keywords, description pieces, weight, sources and files."""
    if width == 1:
        name, kind, description, sources, files = row[:5]
        return name, kind.lower(), set(description.split("<SEP>")), set(sources), set(files)
    src, tgt, keywords, description, weight, sources, files = row[:7]
    words = {k.strip() for k in keywords.split(",") if k.strip()}
    return src, tgt, words, set(description.split("<SEP>")), weight, set(sources), set(files)


async def test_an_imported_document_inserted_again_is_a_no_op_and_indexing_it_anew_reads_the_imported_cache(
    upstream: Upstream, rag_factory: RagFactory, dsn: str
) -> None:
    models = Counting(llm=upstream.llm)
    rag = await rag_factory(llm_model_func=models, embedding_func=models.embedding)
    await rag.aimport_lightrag(upstream.files, embedding_model=MODEL)
    before = await snapshot(dsn, rag.workspace)
    text, path = upstream.texts[DELETED], upstream.paths[DELETED]
    result = await rag.ainsert(text, file_paths=path)
    assert result.new_ids == [] and len(result.skipped_ids) == 1
    assert models.llm_calls == 0 and await snapshot(dsn, rag.workspace) == before
    doc_id = result.skipped_ids[0]
    fragments = {(r[0], r[2], r[5]) for r in before["entity_fragments"] if r[3] == doc_id}
    await rag.adelete_by_doc_id(doc_id, keep_cache=True)
    await rag.ainsert(text, file_paths=path)
    assert models.llm_calls == 0  # every extraction and gleaning answer came from the imported cache
    after = await snapshot(dsn, rag.workspace)
    assert {(r[0], r[2], r[5]) for r in after["entity_fragments"] if r[3] == doc_id} == fragments
