"""bench/scale.py at its --quick size: the bulk-loaded workspace is the migrated one, exactly."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from bench import scale
from lightrag_pg.config import Settings
from lightrag_pg.db.identifiers import graph_name
from lightrag_pg.db.workspace import create_workspace, drop_workspace
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.store.rows import entity_context_line, relation_context_line

pytestmark = pytest.mark.slow


def _schema_shape(rows: list[asyncpg.Record], workspace: str) -> list[tuple[str, str, str]]:
    return [(r["kind"], r["name"], r["create_ddl"].replace(workspace, "<ws>")) for r in rows]


async def _inspect(dsn: str, loaded: str, fresh: str) -> dict[str, object]:
    conn = await asyncpg.connect(dsn)
    try:
        await create_workspace(conn, dsn, fresh, 384, "synthetic")
        shapes = (
            _schema_shape(await scale.deferrable(conn, loaded), loaded),
            _schema_shape(await scale.deferrable(conn, fresh), fresh),
        )
        disabled = await conn.fetchval(
            "SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = $1 AND NOT g.tgisinternal AND g.tgenabled = 'D'",
            loaded,
        )
        await conn.execute(f"SET search_path = {loaded}, ag_catalog, public")
        chunks = await conn.fetch("SELECT content, tokens FROM text_chunks")
        entities = await conn.fetch("SELECT name, entity_type, description, context_tokens FROM entities")
        relations = await conn.fetch("SELECT src, tgt, description, context_tokens FROM relations")
        degrees = await conn.fetch(
            "SELECT count(*) AS degree FROM (SELECT src AS name FROM relations UNION ALL "
            "SELECT tgt FROM relations) ends GROUP BY name"
        )
        wrong_degrees = await conn.fetchval(
            "SELECT count(*) FROM entities e LEFT JOIN (SELECT name, count(*) AS n FROM (SELECT src AS name "
            "FROM relations UNION ALL SELECT tgt FROM relations) ends GROUP BY name) d USING (name) "
            "WHERE e.degree <> coalesce(d.n, 0)"
        )
        derived = (
            "SELECT t.lexeme, c.id, cardinality(t.positions), c.tokens "
            "FROM text_chunks c CROSS JOIN LATERAL unnest(c.lexemes) t"
        )
        terms = "SELECT lexeme, chunk_id, tf, tokens FROM chunk_terms"
        terms_out_of_sync = await conn.fetchval(
            f"SELECT (SELECT count(*) FROM ({derived} EXCEPT ALL {terms}) a) "
            f"+ (SELECT count(*) FROM ({terms} EXCEPT ALL {derived}) b)"
        )
        terms_rows = await conn.fetchval("SELECT count(*) FROM chunk_terms")
        counts_exact = await conn.fetchval(
            "SELECT (SELECT sum(chunks) FROM corpus_counts) = (SELECT count(*) FROM text_chunks) "
            "AND (SELECT sum(entities) FROM corpus_counts) = (SELECT count(*) FROM entities)"
        )
        graph = graph_name(loaded)
        vertices = await conn.fetchval(f'SELECT count(*) FROM "{graph}"."entity"')
        edges = await conn.fetchval(f'SELECT count(*) FROM "{graph}"."DIRECTED"')
        vertex_sql = f'SELECT properties::text FROM "{graph}"."entity" ORDER BY id LIMIT 1'
        edge_sql = (
            f'SELECT start_id::text, end_id::text, properties::text FROM "{graph}"."DIRECTED" '
            "ORDER BY id LIMIT 1"
        )
        bulk = (await conn.fetchval(vertex_sql), tuple(await conn.fetchrow(edge_sql)))
        # the mirror triggers rewrite the first vertex and edge from their rows
        await conn.execute(
            "UPDATE entities SET description = description WHERE id = (SELECT min(id) FROM entities)"
        )
        await conn.execute(
            "UPDATE relations SET version = version WHERE id = (SELECT min(id) FROM relations)"
        )
        by_trigger = (await conn.fetchval(vertex_sql), tuple(await conn.fetchrow(edge_sql)))
        await conn.execute("RESET search_path")
        await drop_workspace(conn, fresh)
        await drop_workspace(conn, loaded)
    finally:
        await conn.close()
    return {
        "shapes": shapes,
        "disabled": disabled,
        "chunks": chunks,
        "entities": entities,
        "relations": relations,
        "degrees": [r["degree"] for r in degrees],
        "wrong_degrees": wrong_degrees,
        "terms": (terms_rows, terms_out_of_sync),
        "counts_exact": counts_exact,
        "graph": (vertices, edges),
        "mirror": (bulk, by_trigger),
    }


@pytest.fixture
def scale_names(workspace_name: str) -> tuple[str, str]:
    return f"{workspace_name}_scale", f"{workspace_name}_fresh"


def test_quick_scale_bench_builds_the_migrated_workspace_and_times_every_mode(
    dsn: str, scale_names: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    loaded, fresh = scale_names
    args = scale.parse_args(["--quick", "--dsn", dsn, "--workspace", loaded])
    args.data_dir_used = None
    results = scale.run(args, dsn)
    out = capsys.readouterr().out
    seen = asyncio.run(_inspect(dsn, loaded, fresh))

    assert [r.mode for r in results] == list(scale.MODES)
    for r in results:
        assert len(r.latencies) == args.queries
        assert min(r.chunks) > 0
        if r.mode != "naive":
            assert min(r.entities) > 0 and min(r.relations) > 0
    assert "index build total" in out and "hnsw entity_vectors_embedding_hnsw" in out

    loaded_shape, fresh_shape = seen["shapes"]
    assert loaded_shape == fresh_shape
    assert any(kind == "hnsw" for kind, _, _ in loaded_shape)
    assert seen["disabled"] == 0

    count = get_tokenizer(Settings().tokenizer_name).count
    assert len(seen["chunks"]) == scale.QUICK["chunks"]
    assert all(r["tokens"] == count(r["content"]) for r in seen["chunks"])
    assert all(0.8 * args.chunk_tokens <= r["tokens"] <= 1.2 * args.chunk_tokens for r in seen["chunks"])
    assert len(seen["entities"]) == scale.QUICK["entities"]
    assert all(
        r["context_tokens"] == count(entity_context_line(r["name"], r["entity_type"], r["description"]))
        for r in seen["entities"]
    )
    assert len(seen["relations"]) == scale.QUICK["relations"]
    assert all(
        r["context_tokens"] == count(relation_context_line(r["src"], r["tgt"], r["description"]))
        for r in seen["relations"]
    )
    degrees = sorted(seen["degrees"])
    assert degrees[-1] > 10 * sum(degrees) / len(degrees)  # a power-law tail: hubs
    assert seen["wrong_degrees"] == 0  # the loaded entities.degree is the counted one
    terms_rows, terms_out_of_sync = seen["terms"]  # type: ignore[misc]
    assert terms_rows > 0 and terms_out_of_sync == 0  # chunk_terms as the text_chunks triggers write it
    assert seen["counts_exact"]  # corpus_counts as the triggers would have written it

    assert seen["graph"] == (scale.QUICK["entities"], scale.QUICK["relations"])
    bulk, by_trigger = seen["mirror"]
    assert bulk == by_trigger
