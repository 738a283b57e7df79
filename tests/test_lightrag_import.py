"""Importing an upstream LightRAG workspace (synthesized in upstream's formats) and exporting one.

The same checks against upstream 1.5.7 itself, run from its own virtualenv, are in
tests/test_lightrag_upstream.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.lightrag_shapes import synthesize, write_workdir
from lightrag_pg import LightRAG
from lightrag_pg.errors import EmbeddingMismatch, InvalidInput, SourceFormatError
from lightrag_pg.index.lightrag_compat.report import ImportProgress
from lightrag_pg.testing import StatementCounter

from .conftest import RagFactory
from .lightrag_compat_support import Counting, drop_database, postgres_source, snapshot

MODEL = "hashed-bow-64"


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    return synthesize(12, seed=3)


@pytest.fixture
def workdir(corpus, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    return write_workdir(corpus, tmp_path / "upstream")


async def counted_rag(rag_factory: RagFactory, **settings: object) -> tuple[LightRAG, Counting]:
    models = Counting()
    rag = await rag_factory(llm_model_func=models, embedding_func=models.embedding, **settings)
    return rag, models


async def test_a_working_directory_is_imported_whole_without_a_model_call(
    rag_factory: RagFactory,
    workdir: Path,
    corpus,
    dsn: str,  # type: ignore[no-untyped-def]
) -> None:
    rag, models = await counted_rag(rag_factory)
    with StatementCounter() as counter:
        report = await rag.aimport_lightrag(workdir, embedding_model=MODEL, batch_size=10)
    assert models.llm_calls == 0 and models.embed_calls == 0
    tables = await snapshot(dsn, rag.workspace)
    entity_links = {(n, c) for n, e in corpus.entities.items() for c in e.chunks}
    assert len(tables["full_docs"]) == len(corpus.docs) == report.counts["documents"].written
    assert {r[0] for r in tables["doc_status"]} == set(corpus.docs)
    assert len(tables["text_chunks"]) == len(tables["chunk_vectors"]) == len(corpus.chunks)
    assert len(tables["entities"]) == len(tables["entity_vectors"]) == len(corpus.entities)
    assert len(tables["relations"]) == len(tables["relation_vectors"]) == len(corpus.relations)
    assert {r[0] for r in tables["llm_cache"]} >= set(corpus.cache)
    # every (entity, chunk) of upstream's chunk lists has its fragment, read from the cached extraction
    assert {(r[0], r[1]) for r in tables["entity_fragments"]} == entity_links
    assert report.fragments_filled == 0 and report.chunks_without_cached_extraction == 0
    assert {r[0] for r in tables["entity_fragments"] if r[4] == "UNKNOWN"} == set()
    stored = {r[0]: r for r in tables["entities"]}
    name, merged = next((n, e) for n, e in corpus.entities.items() if len(e.chunks) > 1)
    assert stored[name][2] == "<SEP>".join(merged.descriptions)  # upstream's row, as stored
    assert all(r[5] for r in tables["entities"]) and all(r[7] for r in tables["relations"])  # context tokens
    rows = len(corpus.docs) + len(corpus.chunks) * 4 + len(corpus.entities) * 3 + len(corpus.relations) * 3
    assert counter.statements < rows / 2  # batches of 10 rows: statements do not follow the rows


async def test_importing_twice_changes_nothing(rag_factory: RagFactory, workdir: Path, dsn: str) -> None:
    rag, _ = await counted_rag(rag_factory)
    await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    before = await snapshot(dsn, rag.workspace)
    again = await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    assert await snapshot(dsn, rag.workspace) == before
    assert sum(c.written for c in again.counts.values()) == 0
    assert again.counts["documents"].kept == len(before["full_docs"])


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("phase", ["chunks", "entities", "relation_vectors", "fragments", "relation_chunks"])
async def test_an_interrupted_import_finishes_when_run_again(
    rag_factory: RagFactory, workdir: Path, dsn: str, phase: str
) -> None:
    clean, _ = await counted_rag(rag_factory)
    await clean.aimport_lightrag(workdir, embedding_model=MODEL, batch_size=7)
    rag, _ = await counted_rag(rag_factory)
    seen: list[ImportProgress] = []

    def stop(p: ImportProgress) -> None:
        seen.append(p)
        if p.phase == phase and p.done and sum(s.phase == phase for s in seen) > 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        await rag.aimport_lightrag(workdir, embedding_model=MODEL, batch_size=7, progress=stop)
    indexes = {
        "hnsw": "SELECT indexname FROM pg_indexes "
        "WHERE schemaname = current_schema() AND indexname LIKE '%hnsw'"
    }
    built = await snapshot(dsn, rag.workspace, indexes)  # a failed import builds what it dropped
    assert [r[0] for r in built["hnsw"]] == [
        f"{t}_vectors_embedding_hnsw" for t in ("chunk", "entity", "relation")
    ]
    resumed = await rag.aimport_lightrag(workdir, embedding_model=MODEL, batch_size=7)
    assert await snapshot(dsn, rag.workspace) == await snapshot(dsn, clean.workspace)
    assert resumed.counts["documents"].written == 0  # the first run got further than that
    assert await snapshot(dsn, rag.workspace, indexes) == built
    assert bool(resumed.indexes_built) == resumed.indexes_deferred  # dropped again only if no vector was in


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["age", "pgtable"])
async def test_postgres_storages_are_imported(
    rag_factory: RagFactory,
    corpus,
    dsn: str,
    graph: str,  # type: ignore[no-untyped-def]
) -> None:
    source, database = await postgres_source(dsn, corpus, "their_ws", graph)
    try:
        rag, models = await counted_rag(rag_factory)
        report = await rag.aimport_lightrag(source, "their_ws")
        assert models.llm_calls == models.embed_calls == 0
        assert report.embedding.startswith("hashed_bow_64 (64 dimensions)")  # read from the table names
        tables = await snapshot(dsn, rag.workspace)
        assert len(tables["full_docs"]) == len(corpus.docs)
        assert len(tables["text_chunks"]) == len(tables["chunk_vectors"]) == len(corpus.chunks)
        assert len(tables["entities"]) == len(tables["entity_vectors"]) == len(corpus.entities)
        assert len(tables["relations"]) == len(tables["relation_vectors"]) == len(corpus.relations)
        assert len(tables["entity_fragments"]) == sum(len(e.chunks) for e in corpus.entities.values())
        with pytest.raises(SourceFormatError, match="no LIGHTRAG_DOC_FULL"):
            await rag.aimport_lightrag(dsn, "their_ws")  # the test database holds no upstream tables
        assert len(await rag.aquery_data("who met whom", None) or {}) > 0
    finally:
        await drop_database(dsn, database)


@pytest.mark.slow
async def test_the_same_workspace_from_files_and_from_postgres_is_the_same(
    rag_factory: RagFactory,
    corpus,
    workdir: Path,
    dsn: str,  # type: ignore[no-untyped-def]
) -> None:
    source, database = await postgres_source(dsn, corpus, "default", "age")
    try:
        from_files, _ = await counted_rag(rag_factory)
        from_pg, _ = await counted_rag(rag_factory)
        await from_files.aimport_lightrag(workdir, embedding_model=MODEL)
        await from_pg.aimport_lightrag(source)
        tables = dict(TABLES_WITHOUT_VECTORS)
        assert await snapshot(dsn, from_files.workspace, tables) == await snapshot(
            dsn, from_pg.workspace, tables
        )
    finally:
        await drop_database(dsn, database)


TABLES_WITHOUT_VECTORS = {
    "entities": "SELECT name, entity_type, description, source_ids, file_paths FROM entities",
    "relations": "SELECT src, tgt, keywords, description, weight, source_ids FROM relations",
    "entity_fragments": "SELECT entity_name, chunk_id, seq, doc_id, description FROM entity_fragments",
    "relation_fragments": "SELECT src, tgt, chunk_id, seq, weight FROM relation_fragments",
    "text_chunks": "SELECT id, doc_id, chunk_order_index, tokens, content FROM text_chunks",
}


async def test_another_model_or_dimension_is_refused_before_anything_is_written(
    rag_factory: RagFactory, workdir: Path, dsn: str
) -> None:
    narrow = await rag_factory(embedding_func=Counting(dim=32).embedding)
    with pytest.raises(EmbeddingMismatch, match="64 dimensions"):
        await narrow.aimport_lightrag(workdir, embedding_model=MODEL)
    rag, _ = await counted_rag(rag_factory)
    with pytest.raises(EmbeddingMismatch, match="do not record the embedding model"):
        await rag.aimport_lightrag(workdir)
    with pytest.raises(EmbeddingMismatch, match="embeds with 'hashed-bow-64'"):
        await rag.aimport_lightrag(workdir, embedding_model="text-embedding-3-small")
    for name in (narrow.workspace, rag.workspace):
        assert not any((await snapshot(dsn, name)).values())


async def test_documents_already_in_the_workspace_are_skipped_and_shared_rows_merged(
    rag_factory: RagFactory,
    corpus,
    workdir: Path,
    dsn: str,  # type: ignore[no-untyped-def]
) -> None:
    from bench.import_lightrag import ShapeLLM

    models = Counting(llm=ShapeLLM(corpus))
    rag = await rag_factory(llm_model_func=models, embedding_func=models.embedding)
    doc_id, doc = next(iter(corpus.docs.items()))
    await rag.ainsert(doc["content"], file_paths=doc["file_path"])  # indexed here first: same doc- id
    own = await snapshot(dsn, rag.workspace, {"status": "SELECT id, chunks_list FROM doc_status"})
    models.llm_calls = models.embed_calls = 0
    report = await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    assert models.llm_calls == models.embed_calls == 0
    assert report.skipped_documents == [doc_id]
    assert report.counts["statuses"].skipped == {"document already in the workspace": 1}
    tables = await snapshot(dsn, rag.workspace)
    assert own["status"][0] in [(r[0], r[3]) for r in tables["doc_status"]]  # its status and chunks are ours
    assert not {r[0] for r in tables["text_chunks"]} & set(corpus.chunks) - {
        c for c, v in corpus.chunks.items() if v["full_doc_id"] != doc_id
    }
    shared = {r[0] for r in tables["entity_fragments"] if r[3] == doc_id} & {
        r[0] for r in tables["entity_fragments"] if r[3] != doc_id
    }
    assert shared and report.rows_merged >= 1
    stored = {r[0]: r for r in tables["entities"]}
    for name in shared:  # rebuilt from both sides' fragments, by the insert's rules
        pieces = {r[5] for r in tables["entity_fragments"] if r[0] == name}
        assert set(stored[name][2].split("<SEP>")) == pieces
    again = await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    assert again.rows_merged == 0 and await snapshot(dsn, rag.workspace) == tables


async def test_chunks_without_cached_extraction_get_their_piece_of_the_description(
    rag_factory: RagFactory,
    corpus,
    workdir: Path,
    tmp_path: Path,
    dsn: str,  # type: ignore[no-untyped-def]
) -> None:
    cached, _ = await counted_rag(rag_factory)
    await cached.aimport_lightrag(workdir, embedding_model=MODEL)
    exact = await snapshot(dsn, cached.workspace)
    (workdir / "kv_store_llm_response_cache.json").write_text("{}")
    summarised, merged = next((n, e) for n, e in corpus.entities.items() if len(e.chunks) > 2)
    summarise(workdir / "graph_chunk_entity_relation.graphml", summarised, "A summary of it.")
    rag, _ = await counted_rag(rag_factory)
    report = await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    assert report.fragments_exact == 0 and report.chunks_without_cached_extraction == len(corpus.chunks)
    tables = await snapshot(dsn, rag.workspace)

    def pieces(rows: list[tuple], summary: bool) -> set[tuple]:  # type: ignore[type-arg]
        return {(r[0], r[1], r[5]) for r in rows if (r[0] == summarised) == summary}

    # as many <SEP> pieces as chunks: each chunk gets its piece, what its cached extraction said
    assert pieces(tables["entity_fragments"], False) == pieces(exact["entity_fragments"], False)
    # a summary (one piece for several chunks) goes whole to each of them
    assert pieces(tables["entity_fragments"], True) == {
        (summarised, c, "A summary of it.") for c in merged.chunks
    }
    weights: dict[tuple[str, str], float] = {}
    for r in tables["relation_fragments"]:
        weights[(r[0], r[1])] = weights.get((r[0], r[1]), 0.0) + r[7]
    assert all(abs(weights[(r[0], r[1])] - r[4]) < 1e-9 for r in tables["relations"])
    # deleting a document leaves the summary with the entity's other chunks (rows rebuilt from
    # many pieces are summarised, as an insert would: the scripted LLM answers those)
    doc_id = corpus.chunks[merged.chunks[0]]["full_doc_id"]
    await rag.adelete_by_doc_id(doc_id)
    after = {r[0]: r for r in (await snapshot(dsn, rag.workspace))["entities"]}
    assert after[summarised][2] == "A summary of it."


def summarise(graphml: Path, name: str, description: str) -> None:
    """Replace an entity's description in a GraphML file, as an upstream summary would."""
    import xml.etree.ElementTree as ET

    ns = "{http://graphml.graphdrawing.org/xmlns}"
    ET.register_namespace("", ns[1:-1])
    tree = ET.parse(graphml)
    keys = {k.get("id"): k.get("attr.name") for k in tree.getroot().iter(f"{ns}key")}
    node = next(n for n in tree.getroot().iter(f"{ns}node") if n.get("id") == name)
    next(d for d in node if keys.get(d.get("key")) == "description").text = description
    tree.write(graphml, encoding="utf-8", xml_declaration=True)


async def test_malformed_sources_are_refused_with_a_clear_error(
    rag_factory: RagFactory, workdir: Path, tmp_path: Path
) -> None:
    rag, _ = await counted_rag(rag_factory)
    with pytest.raises(SourceFormatError, match="is not a folder"):
        await rag.aimport_lightrag(tmp_path / "missing", embedding_model=MODEL)
    empty = tmp_path / "empty"
    (empty / "ws1").mkdir(parents=True)
    shutil.copy(workdir / "kv_store_full_docs.json", empty / "ws1")
    with pytest.raises(SourceFormatError, match="its workspaces: ws1"):
        await rag.aimport_lightrag(empty, embedding_model=MODEL)
    with pytest.raises(InvalidInput, match="must be a folder name"):
        await rag.aimport_lightrag(empty, "../ws1", embedding_model=MODEL)
    broken = tmp_path / "broken"
    shutil.copytree(workdir, broken)
    vdb = json.loads((broken / "vdb_entities.json").read_text())
    vdb["data"].append(dict(vdb["data"][0], entity_name="Extra"))
    (broken / "vdb_entities.json").write_text(json.dumps(vdb))
    with pytest.raises(SourceFormatError, match="fewer matrix rows than data records"):
        await rag.aimport_lightrag(broken, embedding_model=MODEL)
    (broken / "kv_store_text_chunks.json").write_text('{"a": {"content": "x"')
    with pytest.raises(SourceFormatError, match="not valid JSON"):
        await rag.aimport_lightrag(broken, embedding_model=MODEL)
    (broken / "kv_store_text_chunks.json").write_text('{"a": {"content": "x\\u0000y"}, "b": 3}')
    (broken / "vdb_entities.json").write_text((workdir / "vdb_entities.json").read_text())
    report = await rag.aimport_lightrag(broken, embedding_model=MODEL)
    assert report.unreadable == {"chunks": 2}  # no document id, not a record: counted, not stored


async def test_an_export_is_imported_back_to_the_same_workspace(
    rag_factory: RagFactory, workdir: Path, tmp_path: Path, dsn: str
) -> None:
    first, _ = await counted_rag(rag_factory)
    await first.aimport_lightrag(workdir, embedding_model=MODEL)
    exported = await first.aexport_lightrag(tmp_path / "exported")
    assert exported.files["vdb_relationships.json"] == exported.files["kv_store_relation_chunks.json"]
    with pytest.raises(InvalidInput, match="not empty"):
        await first.aexport_lightrag(tmp_path / "exported")
    second, _ = await counted_rag(rag_factory)
    await second.aimport_lightrag(tmp_path / "exported", embedding_model=MODEL)
    assert await snapshot(dsn, second.workspace) == await snapshot(dsn, first.workspace)
    assert not [p for p in (tmp_path / "exported").iterdir() if p.name.startswith(".")]


def test_the_commands_import_and_export(
    workdir: Path,
    tmp_path: Path,
    dsn: str,
    workspace_name: str,
    cli_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lightrag_pg.cli import main

    base = ["--workspace", workspace_name, "--dsn", dsn]
    code = main(["import-lightrag", str(workdir), *base, "--json", "--embedding-model", "fake-embedding"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["counts"]["documents"]["written"] == 12
    assert main(["import-lightrag", str(workdir), *base, "--embedding-model", "fake-embedding"]) == 0
    assert "documents: 12 read, 0 written, 12 already there" in capsys.readouterr().out
    assert main(["export-lightrag", str(tmp_path / "out"), *base]) == 0
    assert "vdb_entities.json: " in capsys.readouterr().out
    assert main(["import-lightrag", str(workdir), *base]) == 2
    assert "do not record the embedding model" in capsys.readouterr().err


def name_by_path(folder: Path, copy_of: str | None = None) -> dict[str, str]:
    """Give the working directory's documents upstream 1.5.7's ids for files (``doc-`` + MD5 of
    the path) instead of their content's; with ``copy_of``, add a second document with that
    document's text under another path. Returns the new id of every old one."""
    import hashlib

    def md5(text: str) -> str:
        return hashlib.md5(text.encode()).hexdigest()

    def load(name: str) -> dict:  # type: ignore[type-arg]
        return json.loads((folder / name).read_text())

    docs, status, chunks = (
        load("kv_store_full_docs.json"),
        load("kv_store_doc_status.json"),
        load("kv_store_text_chunks.json"),
    )
    renamed = {old: "doc-" + md5(doc["file_path"]) for old, doc in docs.items()}
    docs = {renamed[k]: v for k, v in docs.items()}
    status = {renamed[k]: v for k, v in status.items()}
    for chunk in chunks.values():
        chunk["full_doc_id"] = renamed[chunk["full_doc_id"]]
    if copy_of is not None:
        twin = "doc-" + md5("copy.txt")
        docs[twin] = {**docs[renamed[copy_of]], "file_path": "copy.txt"}
        status[twin] = {**status[renamed[copy_of]], "file_path": "copy.txt", "chunks_list": []}
        for cid, chunk in list(chunks.items()):
            if chunk["full_doc_id"] == renamed[copy_of]:
                chunks[f"{twin}-{cid[-9:]}"] = {**chunk, "full_doc_id": twin}
    for name, value in (
        ("kv_store_full_docs.json", docs),
        ("kv_store_doc_status.json", status),
        ("kv_store_text_chunks.json", chunks),
    ):
        (folder / name).write_text(json.dumps(value))
    return renamed


async def test_documents_upstream_named_after_their_file_get_our_content_ids(
    rag_factory: RagFactory,
    corpus,
    workdir: Path,
    dsn: str,  # type: ignore[no-untyped-def]
) -> None:
    original = next(iter(corpus.docs))
    renamed = name_by_path(workdir, copy_of=original)
    rag, models = await counted_rag(rag_factory)
    report = await rag.aimport_lightrag(workdir, embedding_model=MODEL)
    assert report.counts["documents"].skipped == {"same text as another upstream document": 1}
    tables = await snapshot(dsn, rag.workspace)
    assert {r[0] for r in tables["full_docs"]} == set(corpus.docs)  # ours: named after the content
    assert {r[1] for r in tables["text_chunks"]} == set(corpus.docs)
    assert len(tables["text_chunks"]) == len(corpus.chunks)  # the copy's chunks are not imported twice
    upstream_ids = await snapshot(
        dsn, rag.workspace, {"ids": "SELECT id, metadata->'lightrag_import'->>'upstream_id' FROM doc_status"}
    )
    assert dict(upstream_ids["ids"]) == {old: new for old, new in renamed.items()}
    result = await rag.ainsert(corpus.docs[original]["content"], file_paths="again.txt")
    assert result.skipped_ids == [original] and models.llm_calls == 0  # the same text is a no-op
    assert await rag.aimport_lightrag(workdir, embedding_model=MODEL) is not None
    assert await snapshot(dsn, rag.workspace) == tables
