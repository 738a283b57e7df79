"""Retrieval in SQL gives exactly what the reference Python pipeline gives.

The reference is the stage-by-stage pipeline the SQL replaced: vector searches,
``edges_of`` ranked by (edge degree, weight, first entity found), endpoints in order, round-robin
merges, :func:`truncate_kg` with the query tokenizer, and the Python chunk pick.
Random graphs with tied degrees and weights, duplicate chunk vectors, chunks
without vectors and dangling chunk ids; random budgets, top_k and thresholds.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path

import asyncpg
import numpy as np
import pytest
from pgvector.asyncpg import register_vector

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.dimensions import HalfvecCast
from lightrag_pg.db.identifiers import search_path
from lightrag_pg.db.workspace import create_workspace, drop_workspace, migrate_all
from lightrag_pg.index.merge import with_context_tokens
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.query.keyword_plan import resolve_keywords
from lightrag_pg.query.ranking import (
    endpoint_names,
    interleave_entities,
    interleave_relations,
    truncate_kg,
)
from lightrag_pg.query.retrieve import graph_chunks, retrieve_all
from lightrag_pg.store import retrieval
from lightrag_pg.store.retrieval import RetrievalStore
from lightrag_pg.store.rows import ChunkRow, DocumentRow, EntityRow, RelationRow
from lightrag_pg.store.uow import Stores

from .oracles import rank_local_relations

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "Zürich",
    "東京",
    "naïve",
    "quantum",
    "lab",
    "river",
    "stone",
    "ledger",
    "42",
    "--",
    "{}",
    '"q"',
]


def text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


async def seed_graph(rag: LightRAG, rng: random.Random, n_entities: int, n_relations: int) -> None:
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(rng.randrange(2**32))
    chunk_ids = [f"chunk-{i}" for i in range(40)]
    base = vec.normal(size=(20, dim)).astype(np.float32)
    chunk_vectors = base[[i % 20 for i in range(40)]]  # pairs of identical vectors: similarity ties
    names = [f"E{i:03d}" for i in range(n_entities)]

    def sources() -> list[str]:
        ids = rng.sample(chunk_ids, rng.randint(0, 5))
        if rng.random() < 0.2:
            ids.append("chunk-missing")
        if rng.random() < 0.1:
            ids.append(" ")
        return ids

    entities = [
        EntityRow(name=n, entity_type=rng.choice(["Person", "Place", ""]), description=text(rng, 0, 40),
                  source_ids=sources())
        for n in names
    ]  # fmt: skip
    pairs = {tuple(sorted(rng.sample(names, 2))) for _ in range(n_relations)}
    relations = [
        RelationRow(a, b, keywords="k", description=text(rng, 0, 30), weight=rng.choice([1.0, 2.0]),
                    source_ids=sources())
        for a, b in sorted(pairs)
    ]  # fmt: skip
    entities = with_context_tokens(entities, rag.tokenizer)
    relations = with_context_tokens(relations, rag.tokenizer)
    async with rag.unit_of_work() as uow:
        await uow.docs.insert([DocumentRow("doc-1", "x")])
        await uow.chunks.upsert(
            [ChunkRow(c, "doc-1", i, 5, text(rng, 3, 30), f"f{i % 4}.txt") for i, c in enumerate(chunk_ids)],
            chunk_vectors,
        )
        await uow.conn.execute("DELETE FROM chunk_vectors WHERE chunk_id IN ('chunk-7', 'chunk-8')")
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged(relations)
        await uow.vectors.upsert_entities(names, names, vec.normal(size=(len(names), dim)))
        await uow.vectors.upsert_relations(
            [r.pair for r in relations], [r.src for r in relations], vec.normal(size=(len(relations), dim))
        )


async def reference(
    s: Stores, vectors: np.ndarray, param: QueryParam, local: bool, global_: bool, tokenizer: object
) -> tuple[list[EntityRow], list[RelationRow], int, int, list[ChunkRow], int]:
    threshold = float(param.cosine_threshold)  # type: ignore[arg-type]
    local_e = await s.vectors.search_entities(vectors[0], threshold, param.top_k) if local else []
    local_names = [e.name for e in local_e]
    local_r = rank_local_relations(await s.graph.edges_of(local_names), local_names) if local_e else []
    global_r = await s.vectors.search_relations(vectors[1], threshold, param.top_k) if global_ else []
    global_e = await s.graph.get_entities(endpoint_names(global_r)) if global_r else []
    entities, relations = interleave_entities(local_e, global_e), interleave_relations(local_r, global_r)
    kept_e, kept_r = truncate_kg(entities, relations, tokenizer=tokenizer, param=param)  # type: ignore[arg-type]
    vector_chunks = await s.chunks.search(vectors[2], threshold, param.chunk_top_k)
    chunks = await graph_chunks(s, kept_e, kept_r, vector_chunks, vectors[2], param)
    return kept_e, kept_r, len(entities), len(relations), chunks[: param.chunk_top_k], len(chunks)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_sql_ranking_and_budget_cut_match_the_python_reference(rag: LightRAG, seed: int) -> None:
    rng = random.Random(seed)
    await seed_graph(rag, rng, n_entities=rng.randint(20, 60), n_relations=rng.randint(30, 160))
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(seed)
    cuts = compared_chunks = 0
    for _ in range(25):
        param = QueryParam(
            mode="mix",
            top_k=rng.randint(1, 40),
            chunk_top_k=rng.randint(1, 30),
            max_entity_tokens=rng.choice([1, 5, rng.randint(1, 300), rng.randint(300, 3000)]),
            max_relation_tokens=rng.choice([1, rng.randint(1, 400), rng.randint(400, 4000)]),
            cosine_threshold=rng.choice([-1.0, -0.1, 0.0, 0.1]),
            related_chunk_number=rng.randint(1, 6),
        ).resolved(rag.settings)
        local, global_ = rng.choice([(True, True), (True, False), (False, True)])
        vectors = vec.normal(size=(3, dim)).astype(np.float32)
        async with rag.session() as s:
            want_e, want_r, found_e, found_r, want_c, merged = await reference(
                s, vectors, param, local, global_, rag.tokenizer
            )
            got = await s.retrieval.context(
                vectors[0] if local else None,
                vectors[1] if global_ else None,
                vectors[2],
                threshold=float(param.cosine_threshold),  # type: ignore[arg-type]
                top_k=param.top_k,
                max_entity_tokens=param.max_entity_tokens,
                max_relation_tokens=param.max_relation_tokens,
                vector_top_k=param.chunk_top_k,
                related_chunks=param.related_chunk_number or 5,
                chunk_limit=param.chunk_top_k,
            )
        assert [(e.name, e.degree) for e in got.entities] == [(e.name, e.degree) for e in want_e]
        assert [(r.pair, r.degree) for r in got.relations] == [(r.pair, r.degree) for r in want_r]
        if want_e:
            assert got.found_entities == found_e
        if want_r:
            assert got.found_relations == found_r
        cuts += len(want_e) < found_e or len(want_r) < found_r
        if not got.needs_weight:
            compared_chunks += bool(want_c)
            assert [c.id for c in got.chunks] == [c.id for c in want_c]
            assert [c.similarity for c in got.chunks] == pytest.approx([c.similarity for c in want_c])
            assert got.merged_chunks == merged
    assert cuts >= 5 and compared_chunks >= 15, "the random cases exercise the cuts and the chunk pick"


@pytest.mark.parametrize("case", ["weight method", "no chunk vectors"])
async def test_the_weight_pick_paths_match_the_python_reference(rag: LightRAG, case: str) -> None:
    rng = random.Random(11)
    await seed_graph(rag, rng, n_entities=40, n_relations=120)
    if case == "no chunk vectors":  # the VECTOR pick finds nothing: the WEIGHT pick takes over
        async with rag.session() as s:
            await s.conn.execute("DELETE FROM chunk_vectors")
    method = "WEIGHT" if case == "weight method" else "VECTOR"
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(11)
    plan = resolve_keywords(["hl"], ["ll"], mode="mix", query="q")
    compared = 0
    for _ in range(10):
        param = QueryParam(
            mode="mix", top_k=rng.randint(5, 40), chunk_top_k=rng.randint(1, 20), cosine_threshold=-1.0,
            kg_chunk_pick_method=method, bridge=False,
        ).resolved(rag.settings)  # fmt: skip
        vectors = vec.normal(size=(3, dim)).astype(np.float32)
        async with rag.session() as s:
            want_e, want_r, _, _, want_c, merged = await reference(
                s, vectors, param, True, True, rag.tokenizer
            )
            got = await retrieve_all(s, plan, vectors, param, -1.0)
        assert [e.name for e in got.entities] == [e.name for e in want_e]
        assert [r.pair for r in got.relations] == [r.pair for r in want_r]
        assert [c.id for c in got.chunks] == [c.id for c in want_c]
        assert got.merged_chunks == merged
        compared += bool(want_c)
    assert compared >= 5


async def test_stored_token_counts_are_those_of_the_context_lines(
    rag: LightRAG, conn: asyncpg.Connection
) -> None:
    await seed_graph(rag, random.Random(7), 10, 15)
    rows = await conn.fetch(
        f"SELECT name, entity_type, description, context_tokens FROM {rag.workspace}.entities"
    )
    for r in rows:
        line = EntityRow(r["name"], r["entity_type"], r["description"]).context_line()
        assert r["context_tokens"] == rag.tokenizer.count(line + "\n")


@pytest.mark.slow
async def test_migrate_all_backfills_the_token_counts_of_older_workspaces(
    conn: asyncpg.Connection, dsn: str, workspace_name: str
) -> None:
    ws = workspace_name
    await create_workspace(conn, dsn, ws, 8)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "alembic", "-x", f"workspace={ws}", "downgrade", "0004",
            cwd=ROOT, env={**os.environ, "LIGHTRAG_PG_DSN": dsn},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        insert = f"INSERT INTO {ws}.entities (name, entity_type, description) VALUES ($1, $2, $3)"
        await conn.executemany(insert, [("a", "T", "Zürich è"), ("b", "", "")])
        await conn.execute(
            f"INSERT INTO {ws}.relations (src, tgt, description) VALUES ('a', 'b', 'a knows b')"
        )
        await migrate_all(conn, dsn)
        count = get_tokenizer().count
        entities = await conn.fetch(
            f"SELECT name, entity_type, description, context_tokens FROM {ws}.entities"
        )
        assert {r["name"]: r["context_tokens"] for r in entities} == {
            r["name"]: count(EntityRow(r["name"], r["entity_type"], r["description"]).context_line() + "\n")
            for r in entities
        }
        tokens = await conn.fetchval(f"SELECT context_tokens FROM {ws}.relations")
        assert tokens == count(RelationRow("a", "b", description="a knows b").context_line() + "\n")
    finally:
        await drop_workspace(conn, ws)


def upstream_kept(lines: list[str], budget: int, count: object) -> int:
    """Upstream 1.5.7's rule, written out: the most leading lines whose text, joined by
    newlines, is within ``budget`` tokens."""
    kept = 0
    while kept < len(lines) and count("\n".join(lines[: kept + 1])) <= budget:  # type: ignore[operator]
        kept += 1
    return kept


async def test_a_joining_newline_that_costs_a_token_counts_against_the_relation_budget(
    rag: LightRAG,
) -> None:
    # a line ending in :)"} takes one token more with the newline that joins it to the next;
    # counted without it, the budget kept one relation more per such line than upstream
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    basis = np.eye(dim, dtype=np.float32)
    others = [f"B{i:02d}" for i in range(12)]
    entities = [EntityRow(n, "Thing", f"about {n}") for n in ["A", *others]]
    relations = [RelationRow("A", b, keywords="k", description=f"A met {b} :)") for b in others]
    count = rag.tokenizer.count
    assert all(count(r.context_line() + "\n") == count(r.context_line()) + 1 for r in relations)
    entities = with_context_tokens(entities, rag.tokenizer)
    relations = with_context_tokens(relations, rag.tokenizer)
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged(relations)
        await uow.vectors.upsert_entities(["A"], ["A"], basis[:1])

    async def kept(budget: int) -> list[RelationRow]:
        async with rag.session() as s:
            got = await s.retrieval.context(
                basis[0], None, basis[0], threshold=0.5, top_k=1, max_entity_tokens=10_000,
                max_relation_tokens=budget, vector_top_k=0, related_chunks=5, chunk_limit=None,
            )  # fmt: skip
        return got.relations

    lines = [r.context_line() for r in await kept(100_000)]
    assert len(lines) == len(others)
    for k in range(1, len(lines)):
        # one token short of k + 1 lines joined: upstream keeps k
        budget = count("\n".join(lines[: k + 1])) - 1
        assert upstream_kept(lines, budget, count) == k
        assert len(await kept(budget)) == k


async def test_equal_distances_are_broken_by_name(rag: LightRAG) -> None:
    # deliberate difference: upstream keeps equal distances in the order its vector index
    # returned them; lightrag_pg orders them by name (which of them reach top_k still
    # follows the index, as upstream)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vector = np.random.default_rng(3).normal(size=dim).astype(np.float32)
    names = ["Zeta", "Beta", "Alpha", "Mu"]
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged([EntityRow(n, "Thing", f"about {n}") for n in names])
        await uow.vectors.upsert_entities(names, names, np.stack([vector] * len(names)))
    async with rag.session() as s:
        got = await s.retrieval.context(
            vector, None, vector, threshold=-1.0, top_k=4, max_entity_tokens=1000, max_relation_tokens=1000,
            vector_top_k=0, related_chunks=5, chunk_limit=None,
        )  # fmt: skip
    assert [e.name for e in got.entities] == ["Alpha", "Beta", "Mu", "Zeta"]


async def test_degrees_count_the_edges_on_both_sides_of_every_endpoint(rag: LightRAG) -> None:
    # A is only ever a source and E only ever a target (relations are stored src < tgt):
    # each side's count must still reach the degree, for local and global endpoints alike
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    basis = np.eye(dim, dtype=np.float32)
    names = ["A", "B", "C", "D", "E"]
    pairs = [("A", "B"), ("A", "C"), ("B", "C"), ("C", "D"), ("D", "E")]
    entities = [EntityRow(n, "Thing", f"about {n}") for n in names]
    relations = [RelationRow(s, t, keywords="k", description=f"{s} and {t}") for s, t in pairs]
    entities = with_context_tokens(entities, rag.tokenizer)
    relations = with_context_tokens(relations, rag.tokenizer)
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        await uow.graph.upsert_relations_if_unchanged(relations)
        await uow.vectors.upsert_entities(names, names, basis[: len(names)])
        await uow.vectors.upsert_relations(pairs, [s for s, _ in pairs], basis[5 : 5 + len(pairs)])
    async with rag.session() as s:
        got = await s.retrieval.context(
            basis[0], basis[9], basis[0], threshold=-1.0, top_k=1, max_entity_tokens=10_000,
            max_relation_tokens=10_000, vector_top_k=0, related_chunks=5, chunk_limit=None,
        )  # fmt: skip
    degree = {n: sum(n in p for p in pairs) for n in names}
    assert {e.name: e.degree for e in got.entities} == {n: degree[n] for n in ("A", "D", "E")}
    assert {r.pair: r.degree for r in got.relations} == {
        p: degree[p[0]] + degree[p[1]] for p in [("A", "B"), ("A", "C"), ("D", "E")]
    }


@pytest.mark.parametrize("budget", [1, 200, 900])
async def test_local_edges_past_what_the_budget_can_keep_are_counted_not_ranked(
    rag: LightRAG, budget: int
) -> None:
    # the statement ranks only the first budget / fewest tokens + 1 local edges; with
    # far more edges than that, the kept rows and the found count must still be the
    # reference's, which ranks them all
    rng = random.Random(budget)
    await seed_graph(rag, rng, n_entities=45, n_relations=400)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vectors = np.random.default_rng(budget).normal(size=(3, dim)).astype(np.float32)
    param = QueryParam(
        mode="hybrid", top_k=40, chunk_top_k=5, max_entity_tokens=100_000, max_relation_tokens=budget,
        cosine_threshold=-1.0,
    ).resolved(rag.settings)  # fmt: skip
    async with rag.session() as s:
        fewest = await s.conn.fetchval("SELECT min(context_tokens) FROM relations")
        _, want_r, _, found_r, _, _ = await reference(s, vectors, param, True, True, rag.tokenizer)
        got = await s.retrieval.context(
            vectors[0], vectors[1], vectors[2], threshold=-1.0, top_k=40, max_entity_tokens=100_000,
            max_relation_tokens=budget, vector_top_k=5, related_chunks=5, chunk_limit=5,
        )  # fmt: skip
    assert found_r > budget // fewest + 1, "more local edges than the statement ranks"
    assert [(r.pair, r.degree) for r in got.relations] == [(r.pair, r.degree) for r in want_r]
    if want_r:
        assert got.found_relations == found_r


async def hubs_ranked_on_their_highest_edges(s: Stores, names: list[str], budget: int, high_set: int) -> int:
    """How many of the found entities ``names`` the statement ranks on their edges to the
    entities of highest degree alone (retrieval.sql, pruned_hubs), computed in Python."""
    degree = {r["name"]: r["degree"] for r in await s.conn.fetch("SELECT name, degree FROM entities")}
    edges = await s.conn.fetch(
        "SELECT src, tgt, context_tokens FROM relations WHERE src = ANY ($1) OR tgt = ANY ($1)", names
    )
    if not edges:
        return 0
    lowest = sorted(degree.values(), reverse=True)[min(high_set, len(degree)) - 1]
    high = {n for n, d in degree.items() if d > lowest}
    bound = budget // max(min(e["context_tokens"] for e in edges), 1) + 1

    def into_set(n: str) -> int:
        return sum(
            (e["src"] == n and e["tgt"] in high) or (e["tgt"] == n and e["src"] in high) for e in edges
        )

    return sum(degree[n] > high_set and into_set(n) >= bound for n in names)


@pytest.mark.parametrize("seed", [21, 22])
async def test_hubs_ranked_on_their_edges_to_the_highest_degrees_keep_the_reference_rows(
    rag: LightRAG, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with a set of six highest-degree entities, every found entity with more edges is a
    # hub, and a hub with as many edges into the set as the budget could keep is ranked
    # on those alone; the kept rows, their degrees and the found count must still be the
    # reference's, which ranks every edge
    monkeypatch.setattr(retrieval, "HIGH_DEGREE_SET", 6)
    rng = random.Random(seed)
    await seed_graph(rag, rng, n_entities=30, n_relations=300)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(seed)
    pruned = 0
    for budget in [1, 20, 40, 60, 90, 150, 400, 5000]:
        top_k = rng.randint(2, 12)
        vectors = vec.normal(size=(3, dim)).astype(np.float32)
        param = QueryParam(
            mode="hybrid", top_k=top_k, chunk_top_k=5, max_entity_tokens=100_000, max_relation_tokens=budget,
            cosine_threshold=-1.0,
        ).resolved(rag.settings)  # fmt: skip
        async with rag.session() as s:
            _, want_r, _, found_r, _, _ = await reference(s, vectors, param, True, True, rag.tokenizer)
            got = await s.retrieval.context(
                vectors[0], vectors[1], vectors[2], threshold=-1.0, top_k=top_k, max_entity_tokens=100_000,
                max_relation_tokens=budget, vector_top_k=5, related_chunks=5, chunk_limit=5,
            )  # fmt: skip
            names = [e.name for e in await s.vectors.search_entities(vectors[0], -1.0, top_k)]
            pruned += await hubs_ranked_on_their_highest_edges(s, names, budget, 6)
        assert [(r.pair, r.degree) for r in got.relations] == [(r.pair, r.degree) for r in want_r]
        if want_r:
            assert got.found_relations == found_r
    assert pruned >= 3, "the cases rank some hubs on their edges to the highest degrees alone"


async def test_entities_tied_with_the_last_of_the_highest_degrees_are_left_out_of_them(
    rag: LightRAG, monkeypatch: pytest.MonkeyPatch
) -> None:
    # H's four neighbours all have degree 1; the first three by degree are H and two of
    # them, whichever the index gives. Had those two counted among the highest degrees,
    # H (two edges to them, as many as a one-line budget lets the statement rank) would be
    # ranked on those two alone and lose its heaviest edge, to the first neighbour stored
    monkeypatch.setattr(retrieval, "HIGH_DEGREE_SET", 3)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    basis = np.eye(dim, dtype=np.float32)
    names = ["H", "X1", "X2", "X3", "X4"]
    entities = [EntityRow(n, "Thing", f"about {n}") for n in names]
    relations = [RelationRow("H", x, keywords="k", description="H and X", weight=w)
                 for x, w in [("X1", 3.0), ("X2", 1.0), ("X3", 1.0), ("X4", 1.0)]]  # fmt: skip
    entities = with_context_tokens(entities, rag.tokenizer)
    relations = with_context_tokens(relations, rag.tokenizer)
    async with rag.unit_of_work() as uow:
        await uow.graph.upsert_entities_if_unchanged(entities)
        for r in relations:
            await uow.graph.upsert_relations_if_unchanged([r])
        await uow.vectors.upsert_entities(names, names, basis[: len(names)])
    budget = relations[0].context_tokens
    assert budget is not None and {r.context_tokens for r in relations} == {budget}
    async with rag.session() as s:
        got = await s.retrieval.context(
            basis[0], None, basis[0], threshold=-1.0, top_k=1, max_entity_tokens=10_000,
            max_relation_tokens=budget, vector_top_k=0, related_chunks=5, chunk_limit=None,
        )  # fmt: skip
    assert [(r.pair, r.weight) for r in got.relations] == [(("H", "X1"), 3.0)]
    assert got.found_relations == 4


async def test_a_negative_relation_budget_keeps_no_relation_rather_than_failing(rag: LightRAG) -> None:
    # the store takes any int (QueryParam refuses it earlier); the edge-ranking bound
    # derived from it must not become a negative LIMIT
    await seed_graph(rag, random.Random(4), n_entities=20, n_relations=60)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vectors = np.random.default_rng(4).normal(size=(3, dim)).astype(np.float32)
    async with rag.session() as s:
        got = await s.retrieval.context(
            vectors[0], vectors[1], vectors[2], threshold=-1.0, top_k=10, max_entity_tokens=1000,
            max_relation_tokens=-100_000, vector_top_k=5, related_chunks=5, chunk_limit=5,
        )  # fmt: skip
    assert got.entities and not got.relations


async def test_a_generic_plan_gives_the_rows_of_a_custom_plan(rag: LightRAG, dsn: str) -> None:
    # the plan must not depend on parameter values for its rows: a connection forced to
    # generic plans (no planning per execution) reads the same context
    rng = random.Random(5)
    await seed_graph(rag, rng, n_entities=50, n_relations=140)
    dim = rag.embedding_func.embedding_dim  # type: ignore[union-attr]
    vec = np.random.default_rng(5)
    settings = {"search_path": search_path(rag.workspace), "plan_cache_mode": "force_generic_plan"}
    generic = await asyncpg.connect(dsn, server_settings=settings)
    try:
        await register_vector(generic)
        store = RetrievalStore(generic, HalfvecCast(dim))
        for round_ in range(12):
            vectors = vec.normal(size=(3, dim)).astype(np.float32)
            local = vectors[0] if round_ % 3 != 1 else None
            global_ = vectors[1] if round_ % 3 != 2 else None
            kwargs = dict(
                threshold=rng.choice([-1.0, 0.0]), top_k=rng.randint(1, 40),
                max_entity_tokens=rng.randint(1, 2000), max_relation_tokens=rng.randint(1, 3000),
                vector_top_k=rng.randint(0, 20),
                related_chunks=rng.randint(1, 6), chunk_limit=rng.choice([None, 10]),
            )  # fmt: skip
            async with rag.session() as s:
                custom = await s.retrieval.context(local, global_, vectors[2], **kwargs)  # type: ignore[arg-type]
            assert await store.context(local, global_, vectors[2], **kwargs) == custom  # type: ignore[arg-type]
            assert custom.entities or custom.relations or custom.chunks
    finally:
        await generic.close()
