"""Lexical search fused with vector search, on both backends (pg_textsearch BM25 and tsvector)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.migrate import MigrationTarget, upgrade
from lightrag_pg.db.workspace import create_workspace, drop_workspace, head_revision, read_info
from lightrag_pg.store.rows import ChunkRow, DocumentRow, EntityRow, RelationRow
from lightrag_pg.testing import StatementCounter, hashed_embedding_func, hashed_vectors

ROOT = Path(__file__).resolve().parents[1]
DIM = 32
BACKENDS = ["bm25", "tsvector"]
CODE = "XK7Q"
QUESTION = f"How do I configure the network on my machine with {CODE}?"
FILLER = [
    "river",
    "stone",
    "ledger",
    "quantum",
    "harbour",
    "meadow",
    "lantern",
    "copper",
    "orchard",
    "valley",
]


def distractor(i: int) -> str:
    return f"How do I configure the network on my machine? Configure the network, then the machine {i}."


def needle() -> str:
    words = [FILLER[i % len(FILLER)] for i in range(40)]
    words[20] = CODE
    return " ".join(words)


@pytest_asyncio.fixture(params=BACKENDS)
async def lexical_rag(
    request: pytest.FixtureRequest, dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> AsyncIterator[LightRAG]:
    """A workspace created with the backend of the test's parameter."""
    info = await create_workspace(conn, dsn, workspace_name, DIM, f"hashed-bow-{DIM}", lexical=request.param)
    assert info.lexical_backend == request.param
    rag = LightRAG(dsn=dsn, workspace=workspace_name, embedding_func=hashed_embedding_func(DIM))
    await rag.initialize()
    yield rag
    await rag.finalize()


async def store_chunks(rag: LightRAG, texts: dict[str, str], doc_id: str = "doc-1") -> None:
    async with rag.unit_of_work() as uow:
        await uow.docs.insert([DocumentRow(doc_id, "x")])
        await uow.chunks.upsert(
            [
                ChunkRow(cid, doc_id, i, len(text.split()), text, f"{cid}.txt")
                for i, (cid, text) in enumerate(texts.items())
            ],
            hashed_vectors(list(texts.values()), DIM),
        )


def corpus() -> dict[str, str]:
    texts = {f"chunk-d{i:02d}": distractor(i) for i in range(40)}
    texts["chunk-needle"] = needle()
    return texts


async def chunk_ids(rag: LightRAG, mode: str, lexical: bool, **extra: object) -> list[str]:
    param = QueryParam(mode=mode, chunk_top_k=3, lexical=lexical, **extra)  # type: ignore[arg-type]
    data = await rag.aquery_data(QUESTION, param)
    return [c["file_path"].removesuffix(".txt") for c in data["data"]["chunks"]]


async def test_a_new_workspace_gets_full_text_search_by_default(
    rag: LightRAG, conn: asyncpg.Connection
) -> None:
    info = await read_info(conn, rag.workspace)
    assert info is not None and info.lexical_backend == "tsvector"


@pytest.mark.slow
async def test_a_bm25_workspace_cannot_be_written_by_two_transactions_at_once(lexical_rag: LightRAG) -> None:
    """Why bm25 is opt-in: pg_textsearch 1.0.0 holds a per-index lock to the end of a
    writing transaction; a second writer waits on it, and a cancel does not reach it."""
    await store_chunks(lexical_rag, corpus())
    backend = lexical_rag.info.lexical_backend if lexical_rag.info else None
    async with lexical_rag.pool.acquire() as first, lexical_rag.pool.acquire() as second:
        async with first.transaction():
            await first.execute("UPDATE text_chunks SET content = 'one' WHERE id = 'chunk-d00'")
            task = asyncio.ensure_future(
                second.execute("UPDATE text_chunks SET content = 'two' WHERE id = 'chunk-d01'")
            )
            done, _ = await asyncio.wait([task], timeout=2)
            assert bool(done) == (backend == "tsvector")
        await asyncio.wait_for(task, timeout=10)


@pytest.mark.parametrize("mode", ["naive", "mix"])
async def test_fusion_finds_a_chunk_by_a_rare_code_word_the_embeddings_miss(
    lexical_rag: LightRAG, mode: str
) -> None:
    await store_chunks(lexical_rag, corpus())
    keywords = {"hl_keywords": ["network"], "ll_keywords": ["machine"]} if mode == "mix" else {}
    assert "chunk-needle" not in await chunk_ids(lexical_rag, mode, False, **keywords)
    assert "chunk-needle" in await chunk_ids(lexical_rag, mode, True, **keywords)


async def test_lexical_search_follows_chunk_updates_and_deletes(lexical_rag: LightRAG) -> None:
    await store_chunks(lexical_rag, corpus())
    async with lexical_rag.unit_of_work() as uow:
        await uow.chunks.upsert(
            [ChunkRow("chunk-needle", "doc-1", 40, 10, "nothing to see", "chunk-needle.txt")],
            hashed_vectors(["nothing to see"], DIM),
        )
    assert "chunk-needle" not in await chunk_ids(lexical_rag, "naive", True)
    await store_chunks(lexical_rag, {"chunk-new": needle()}, doc_id="doc-2")
    assert "chunk-new" in await chunk_ids(lexical_rag, "naive", True)
    await lexical_rag.adelete_by_doc_id("doc-2")
    assert "chunk-new" not in await chunk_ids(lexical_rag, "naive", True)


@pytest.mark.parametrize(
    "texts",
    [
        {
            "chunk-a": "APT pinning priority set. " + " ".join(FILLER * 4),
            "chunk-b": "APT pinning priority set.",
        },
        {
            "chunk-a": "APT pinning priority set by river stone ledger.",
            "chunk-b": "APT pinning priority set, pinning, pinning.",
        },
    ],
    ids=["shorter", "more often"],
)
async def test_chunk_lexical_search_ranks_the_chunk_about_the_words_first(
    lexical_rag: LightRAG, texts: dict[str, str]
) -> None:
    """Both chunks have every word of the query; chunk-b has them among fewer other words
    (or repeats them instead of other words): scaled by length, it ranks first (a plain
    sum of word weights ties them)."""
    await store_chunks(lexical_rag, corpus() | texts)
    async with lexical_rag.pool.acquire() as conn:
        rows = await conn.fetch("SELECT id FROM lexical_chunks('How is the APT pinning priority set?', 2)")
    assert [r["id"] for r in rows] == ["chunk-b", "chunk-a"]


REPEATED = {
    "chunk-a": "APT pinning priority set river stone",
    "chunk-b": "APT pinning priority set pinning pinning",
}


async def test_chunk_lexical_search_counts_how_often_a_word_occurs(lexical_rag: LightRAG) -> None:
    """Same length, same query words; chunk-b says "pinning" three times: it ranks first
    (counting each word once per chunk ties them, and the tie goes to chunk-a)."""
    await store_chunks(lexical_rag, corpus() | REPEATED)
    async with lexical_rag.pool.acquire() as conn:
        rows = await conn.fetch("SELECT id FROM lexical_chunks('How is the APT pinning priority set?', 2)")
    assert [r["id"] for r in rows] == ["chunk-b", "chunk-a"]


async def test_chunk_lexical_search_gives_the_same_first_k_whatever_k(lexical_rag: LightRAG) -> None:
    """Term counts are read only for chunks that can still reach the first k: the first k
    are still the first k of the whole ranking."""
    texts = {
        f"chunk-r{i:02d}": " ".join(["pinning"] * (i % 4 + 1) + FILLER[: i % 7] + ["set"]) for i in range(30)
    }
    await store_chunks(lexical_rag, corpus() | REPEATED | texts)
    query = "How is the APT pinning priority set on a river machine?"
    async with lexical_rag.pool.acquire() as conn:
        whole = [r["id"] for r in await conn.fetch("SELECT id FROM lexical_chunks($1, 1000)", query)]
        assert len(whole) > 40
        for k in (1, 2, 5, 10, 20):
            rows = await conn.fetch("SELECT id FROM lexical_chunks($1, $2)", query, k)
            assert [r["id"] for r in rows] == whole[:k]


async def seed_code_entity(rag: LightRAG) -> None:
    """An entity named by the question's code word, extracted from chunk-needle only."""
    entity = EntityRow("XK7Q", "artifact", "A configuration code", source_ids=["chunk-needle"])
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([entity])
        await uow.vectors.upsert_entities(["XK7Q"], ["XK7Q"], hashed_vectors([CODE], DIM))


@pytest.mark.slow
async def test_mix_ranks_first_a_chunk_that_lexical_and_graph_evidence_both_support(
    lexical_rag: LightRAG,
) -> None:
    """With fusion, mix ranks its chunks by reciprocal rank over the vector search, the
    lexical search and the picks behind the kept entities and relations: chunk-needle
    (first lexical match, first entity pick) outranks the nearest chunk by vector. Without
    it, the lists are merged round-robin (vector, entity, relation) as before."""
    await store_chunks(lexical_rag, corpus())
    await seed_code_entity(lexical_rag)
    keywords = {"hl_keywords": ["network"], "ll_keywords": [CODE]}
    vector_first = (await chunk_ids(lexical_rag, "naive", False))[0]
    assert vector_first != "chunk-needle"
    assert (await chunk_ids(lexical_rag, "mix", True, bridge=False, **keywords))[0] == "chunk-needle"
    assert (await chunk_ids(lexical_rag, "mix", False, **keywords))[:2] == [vector_first, "chunk-needle"]


SHARED_QUESTION = "alpha beta gamma delta"
SHARED_CHUNKS = {
    "chunk-local": "alpha beta gamma delta",
    "chunk-shared": "alpha beta gamma zeta",
    "chunk-global": "alpha beta eta theta",
    "chunk-b": "river stone",
    "chunk-c": "meadow lantern",
}


FAR_CHUNKS = {
    "chunk-local": "alpha beta gamma delta",
    "chunk-near": "alpha beta gamma zeta",
    "chunk-far": "river stone",
}


async def seed_shared_chunk(rag: LightRAG) -> None:
    """Local finds Ares (chunk-local, chunk-shared), global the relation Boreas–Chione
    (chunk-global, chunk-shared); by similarity to the question chunk-shared is second
    behind the entity and first behind the relation."""
    entities = [
        EntityRow("Ares", "person", "A god of war", source_ids=["chunk-local", "chunk-shared"]),
        EntityRow("Boreas", "person", "The north wind", source_ids=["chunk-b"]),
        EntityRow("Chione", "person", "A nymph of snow", source_ids=["chunk-c"]),
    ]
    relation = RelationRow("Boreas", "Chione", "family", "Chione is a daughter of Boreas",
                           source_ids=["chunk-global", "chunk-shared"])  # fmt: skip
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged([relation])
        names = [e.name for e in entities]
        vectors = hashed_vectors(["ares war", "north wind", "snow"], DIM)
        await uow.vectors.upsert_entities(names, names, vectors)
        await uow.vectors.upsert_relations([relation.pair], ["winds"], hashed_vectors(["boreas family"], DIM))


async def test_hybrid_ranks_first_a_chunk_that_both_local_and_global_pick(lexical_rag: LightRAG) -> None:
    """With fusion, hybrid fuses the picks behind the kept entities and those behind the
    kept relations by reciprocal rank: chunk-shared, picked on both sides, comes first.
    Upstream's round-robin (without fusion) has the relation side skip the chunks the
    entity side picked, so chunk-global takes second place and chunk-shared waits for
    the entity side's turn. Local mode finds no relation here: its entity picks alone."""
    await store_chunks(lexical_rag, SHARED_CHUNKS)
    await seed_shared_chunk(lexical_rag)
    keywords = {"ll_keywords": ["ares war"], "hl_keywords": ["boreas family"], "top_k": 1}
    for mode, lexical in (("hybrid", True), ("hybrid", False), ("local", True)):
        param = QueryParam(mode=mode, chunk_top_k=5, lexical=lexical, **keywords)  # type: ignore[arg-type]
        data = await lexical_rag.aquery_data(SHARED_QUESTION, param)
        found = [c["file_path"].removesuffix(".txt") for c in data["data"]["chunks"]]
        if mode == "hybrid" and lexical:
            assert found[:3] == ["chunk-shared", "chunk-local", "chunk-global"]
        elif mode == "hybrid":
            assert found[:3] == ["chunk-local", "chunk-global", "chunk-shared"]
        else:
            assert found == ["chunk-local", "chunk-shared"]


async def seed_far_relation_chunk(rag: LightRAG) -> None:
    """Ares is in chunk-local, chunk-near and chunk-far (in that order of similarity to
    the question); his edge to Boreas was read from chunk-far."""
    entities = [
        EntityRow("Ares", "person", "A god of war", source_ids=["chunk-local", "chunk-near", "chunk-far"]),
        EntityRow("Boreas", "person", "The north wind", source_ids=["chunk-far"]),
    ]
    relation = RelationRow("Ares", "Boreas", "rivals", "Ares and Boreas are rivals", source_ids=["chunk-far"])
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged([relation])
        names = [e.name for e in entities]
        await uow.vectors.upsert_entities(names, names, hashed_vectors(["ares war", "north wind"], DIM))
        await uow.vectors.upsert_relations([relation.pair], ["rivals"], hashed_vectors(["rivals"], DIM))


@pytest.mark.parametrize(
    ("mode", "keywords"),
    [
        ("local", {"ll_keywords": ["ares war"]}),
        ("global", {"hl_keywords": ["rivals"], "max_entity_tokens": 20}),
    ],
)
async def test_a_far_relation_chunk_no_longer_takes_second_place_in_one_sided_modes(
    lexical_rag: LightRAG, mode: str, keywords: dict[str, object]
) -> None:
    """Local's relations are the edges of its found entities, global's entities the
    endpoints of its found relations: one search, so the chunks picked behind the
    relations are those the entity side left out (local: its quota of two picks for one
    entity; global: Boreas cut by the entity budget). With fusion, both sides' picks are
    ordered by similarity to the question, so the far chunk behind the edge comes after
    chunk-near; upstream's round-robin (without fusion) gave it second place."""
    await store_chunks(lexical_rag, FAR_CHUNKS)
    await seed_far_relation_chunk(lexical_rag)
    for lexical, expected in ((True, ["local", "near", "far"]), (False, ["local", "far", "near"])):
        param = QueryParam(mode=mode, chunk_top_k=5, lexical=lexical, top_k=1, **keywords)  # type: ignore[arg-type]
        data = await lexical_rag.aquery_data(SHARED_QUESTION, param)
        assert [e["entity_name"] for e in data["data"]["entities"]] == ["Ares"]
        found = [c["file_path"].removesuffix(".txt") for c in data["data"]["chunks"]]
        assert found == [f"chunk-{name}" for name in expected], lexical


async def seed_entities(rag: LightRAG) -> None:
    """Forty entities whose vectors are nearer the keyword than Nordic Freight's."""
    entities = [EntityRow(f"Port {i}", "location", f"A shipping company port number {i}") for i in range(40)]
    entities.append(EntityRow("Nordic Freight", "organization", "Runs lorries between warehouses"))
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        names = [e.name for e in entities]
        vectors = hashed_vectors(["shipping company"] * 40 + ["lorries warehouses"], DIM)
        await uow.vectors.upsert_entities(names, names, vectors)


async def local_names(rag: LightRAG, question: str, lexical: bool) -> list[str]:
    param = QueryParam(mode="local", top_k=3, ll_keywords=["shipping company"], lexical=lexical)
    data = await rag.aquery_data(question, param)
    return [e["entity_name"] for e in data["data"]["entities"]]


@pytest.mark.parametrize(
    "question",
    ["Which routes does Nordic Freight serve?", "Which routes do the nordic freights serve?"],
    ids=["exactly", "nearly"],
)
async def test_an_entity_the_question_names_is_always_a_local_candidate(
    lexical_rag: LightRAG, question: str
) -> None:
    await seed_entities(lexical_rag)
    assert "Nordic Freight" not in await local_names(lexical_rag, question, False)
    assert (await local_names(lexical_rag, question, True))[0] == "Nordic Freight"


async def test_a_renamed_entity_is_found_by_its_new_name(lexical_rag: LightRAG) -> None:
    await seed_entities(lexical_rag)
    await lexical_rag.aedit_entity("Nordic Freight", {"entity_name": "Baltic Haulage"})
    assert (await local_names(lexical_rag, "Does Baltic Haulage run lorries?", True))[0] == "Baltic Haulage"
    assert "Nordic Freight" not in await local_names(lexical_rag, "Does Nordic Freight run lorries?", True)


async def test_entity_lexical_search_ranks_names_and_descriptions(lexical_rag: LightRAG) -> None:
    await seed_entities(lexical_rag)
    async with lexical_rag.pool.acquire() as conn:
        rows = await conn.fetch("SELECT name FROM lexical_entities('lorries', 5)")
    assert [r["name"] for r in rows] == ["Nordic Freight"]


async def test_entity_lexical_search_ranks_the_shorter_description_first(lexical_rag: LightRAG) -> None:
    """Both descriptions have the query's word once; BM25 weighs it more in the shorter one
    (a sum of word weights ties them)."""
    entities = [
        EntityRow("Alpha Yard", "location", "Lorries park here among " + " ".join(FILLER * 4)),
        EntityRow("Beta Yard", "location", "Lorries park here."),
        *(EntityRow(f"Port {i}", "location", f"A shipping company port number {i}") for i in range(10)),
    ]
    async with lexical_rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
    async with lexical_rag.pool.acquire() as conn:
        rows = await conn.fetch("SELECT name FROM lexical_entities('Where do lorries park?', 5)")
    assert [r["name"] for r in rows] == ["Beta Yard", "Alpha Yard"]


@pytest.mark.slow
@pytest.mark.parametrize("text", [None, "", "   ", "the of and", "?!", "東京 naïve", "x" * 3000])
async def test_lexical_functions_take_any_query_text(lexical_rag: LightRAG, text: str | None) -> None:
    await store_chunks(lexical_rag, corpus())
    await seed_entities(lexical_rag)
    async with lexical_rag.pool.acquire() as conn:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        try:
            for _ in range(2):
                assert await conn.fetch("SELECT * FROM lexical_chunks($1, 5)", text) == []
                assert await conn.fetch("SELECT * FROM lexical_entities($1, 5)", text) == []
        finally:
            await conn.execute("RESET plan_cache_mode")


@pytest.mark.parametrize("lexical", [False, True])
async def test_lexical_fusion_adds_no_statement(lexical_rag: LightRAG, lexical: bool) -> None:
    await store_chunks(lexical_rag, corpus())
    await seed_entities(lexical_rag)
    for mode in ("naive", "local", "mix"):
        param = QueryParam(mode=mode, hl_keywords=["network"], ll_keywords=["machine"], lexical=lexical)  # type: ignore[arg-type]
        with StatementCounter() as counter:
            await lexical_rag.aquery_data(QUESTION, param)
        assert counter.total == 1, (mode, counter.by_method)


@pytest.mark.slow
async def test_a_workspace_from_before_lexical_search_upgrades_and_is_searchable(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    ws = workspace_name
    await upgrade(dsn, MigrationTarget(ws, DIM), "0007")
    try:
        info = await read_info(conn, ws)
        assert info is not None and info.revision == "0007" and info.lexical_backend is None
        vector = hashed_vectors([needle()], DIM)[0]
        await conn.execute(f"INSERT INTO {ws}.full_docs (id, content) VALUES ('doc-1', 'x')")
        await conn.execute(
            f"INSERT INTO {ws}.text_chunks (id, doc_id, chunk_order_index, tokens, content) "
            "VALUES ('chunk-needle', 'doc-1', 0, 10, $1)",
            needle(),
        )
        await conn.execute(
            f"INSERT INTO {ws}.chunk_vectors (chunk_id, embedding) "
            "VALUES ('chunk-needle', $1::float4[]::vector)",
            vector.tolist(),
        )
        await conn.execute(
            f"INSERT INTO {ws}.entities (name, entity_type, description) "
            "VALUES ('Nordic Freight', 'org', 'lorries')"
        )
        rag = LightRAG(dsn=dsn, workspace=ws, embedding_func=hashed_embedding_func(DIM))
        await rag.initialize()
        try:
            assert rag.info is not None and rag.info.revision == head_revision()
            assert rag.info.lexical_backend == "tsvector"
            data = await rag.aquery_data(f"what is {CODE}", QueryParam(mode="naive", cosine_threshold=0.99))
            assert [c["content"] for c in data["data"]["chunks"]] == [needle()]
            async with rag.pool.acquire() as c:
                assert await c.fetchval("SELECT name FROM lexical_entities('lorries', 5)") == "Nordic Freight"
        finally:
            await rag.finalize()
        await alembic(dsn, ws, "downgrade", "0007")
        assert (
            await conn.fetchval(f"SELECT to_jsonb(i) ? 'lexical_backend' FROM {ws}.workspace_info i") is False
        )
        await alembic(dsn, ws, "-x", "lexical=bm25", "upgrade", "head")
        info = await read_info(conn, ws)
        assert info is not None and info.lexical_backend == "bm25"
    finally:
        await drop_workspace(conn, ws)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_workspace_from_before_term_counts_upgrades_and_counts_terms(
    dsn: str, workspace_name: str, conn: asyncpg.Connection, backend: str
) -> None:
    """0009 gives a tsvector workspace's existing chunks their stored lexemes, searched by
    term counts; the downgrade restores 0008's index and once-per-chunk ranking. A bm25
    workspace (pg_textsearch counts terms already) is left as it was."""
    ws = workspace_name
    await upgrade(dsn, MigrationTarget(ws, DIM, lexical=backend), "0008")

    async def ranked() -> list[str]:
        rows = await conn.fetch(f"SELECT id FROM {ws}.lexical_chunks('APT pinning priority set', 2)")
        return [r["id"] for r in rows]

    async def indexes() -> set[str]:
        rows = await conn.fetch("SELECT indexname FROM pg_indexes WHERE schemaname = $1", ws)
        return {r["indexname"] for r in rows}

    async def has_lexemes() -> bool:
        sql = "SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'lexemes')"
        return bool(await conn.fetchval(sql, f"{ws}.text_chunks"))

    try:
        await conn.execute(f"INSERT INTO {ws}.full_docs (id, content) VALUES ('doc-1', 'x')")
        for i, (cid, text) in enumerate({**REPEATED, "chunk-c": "river stone ledger meadow"}.items()):
            await conn.execute(
                f"INSERT INTO {ws}.text_chunks (id, doc_id, chunk_order_index, tokens, content) "
                "VALUES ($1, 'doc-1', $2, 6, $3)",
                cid, i, text,
            )  # fmt: skip
        await conn.execute(f"SET search_path = {ws}, public")
        counted = ["chunk-b", "chunk-a"]
        assert await ranked() == (counted if backend == "bm25" else ["chunk-a", "chunk-b"])
        rag = LightRAG(dsn=dsn, workspace=ws, embedding_func=hashed_embedding_func(DIM))
        await rag.initialize()
        assert rag.info is not None and rag.info.revision == head_revision()
        await rag.finalize()
        assert await ranked() == counted
        assert await has_lexemes() == (backend == "tsvector")
        if backend == "tsvector":
            assert "chunk_terms_pkey" in await indexes()
            assert not {"text_chunks_lexemes_fts", "text_chunks_content_fts"} & await indexes()
            assert (
                await conn.fetchval(
                    f"SELECT count(*) FROM {ws}.text_chunks WHERE lexemes = to_tsvector('english', content)"
                )
                == 3
            )
        await alembic(dsn, ws, "downgrade", "0008")
        assert not await has_lexemes()
        assert await ranked() == (counted if backend == "bm25" else ["chunk-a", "chunk-b"])
        if backend == "tsvector":
            assert "text_chunks_content_fts" in await indexes()
        await alembic(dsn, ws, "upgrade", "head")
        assert await ranked() == counted
    finally:
        await conn.execute("RESET search_path")
        await drop_workspace(conn, ws)


async def alembic(dsn: str, ws: str, *args: str) -> None:
    """Run the alembic command line on workspace ``ws`` (``-x`` options first)."""
    command = ["-x", f"workspace={ws}", *args]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "alembic", *command,
        cwd=ROOT, env={**os.environ, "LIGHTRAG_PG_DSN": dsn},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()


def test_an_unknown_backend_is_refused() -> None:
    from lightrag_pg.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="lexical must be one of"):
        MigrationTarget("ws_x", 8, lexical="trigram")
