"""Named SQL blocks: a fragment written once and included where it is used."""

from __future__ import annotations

from importlib import resources

import pytest

from lightrag_pg.db.sqlfile import bind, load_queries, parse_queries, positional
from lightrag_pg.store.retrieval import PICK_RRF_K, RRF_K, with_limits

TEXT = """\
-- fragment: hits
-- The {side} search.
{side}_hits AS (SELECT {keys} FROM {table} WHERE {on} LIMIT {top_k}),

-- name: both
WITH
-- include: hits side=left keys="a, b" table=t1 on="$1 IS NOT NULL"
  -- include: hits side=right keys=c table=t2 on=true
done AS (SELECT 1)
SELECT * FROM left_hits, right_hits
"""


def test_an_include_becomes_the_fragment_with_its_values() -> None:
    queries = parse_queries(TEXT, "test.sql")
    assert list(queries) == ["both"]  # a fragment is no query of its own
    sql = queries["both"]
    assert "left_hits AS (SELECT a, b FROM t1 WHERE $1 IS NOT NULL LIMIT {top_k})," in sql
    assert "right_hits AS (SELECT c FROM t2 WHERE true LIMIT {top_k})," in sql  # {top_k}: for render
    assert "include" not in sql and "{side}" not in sql


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("-- include: nothing side=x", "unknown fragment 'nothing'"),
        ("-- include: hits sides=x", "no placeholder"),
    ],
)
def test_a_bad_include_is_refused(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_queries(TEXT.replace("-- include: hits side=right keys=c table=t2 on=true", line), "test.sql")


def test_the_vector_searches_of_retrieval_are_written_once() -> None:
    # the two-step HNSW search was written out four times in retrieval.sql
    queries = load_queries("lightrag_pg.store", "retrieval.sql")
    for name, sides in {"context": ("local", "global", "vector"), "naive": ("vector",)}.items():
        for side in sides:
            assert f"{side}_nearest AS MATERIALIZED" in queries[name]
            assert f"{side}_hits AS MATERIALIZED" in queries[name]
    text = resources.files("lightrag_pg.store").joinpath("retrieval.sql").read_text(encoding="utf-8")
    assert text.count("ORDER BY embedding{halfvec} <=>") == 2  # both steps, once


def test_the_rrf_constant_of_retrieval_is_named_once() -> None:
    # 1.0 / (60 + rank) was written in four places
    text = resources.files("lightrag_pg.store").joinpath("retrieval.sql").read_text(encoding="utf-8")
    assert "(60 +" not in text and text.count("1.0 / ({rrf_k} + ranks.rank)") == 3
    assert text.count("1.0 / ((SELECT rrf_k FROM fusing) + ranks.rank)") == 1  # mix and hybrid
    naive = with_limits(load_queries("lightrag_pg.store", "retrieval.sql")["naive"], 5)
    assert f"1.0 / ({RRF_K} + ranks.rank)" in naive
    context = with_limits(load_queries("lightrag_pg.store", "retrieval.sql")["context"], 5)
    assert f"THEN {PICK_RRF_K} ELSE {RRF_K} END AS rrf_k" in context


def test_named_parameters_become_numbered_ones_in_order_of_first_use() -> None:
    sql = (
        "SELECT :b::vector, :a, :b -- :c in a comment\n"
        "FROM t WHERE x ~ '[[:alpha:]]' AND y = E'it\\'s :d' AND z::int > 0 AND $q$ :e $q$ <> \"col:f\""
    )
    converted, names = positional(sql)
    assert names == ("b", "a")
    assert converted.startswith("SELECT $1::vector, $2, $1 -- :c in a comment\n")
    assert "'[[:alpha:]]'" in converted and "E'it\\'s :d'" in converted and "$q$ :e $q$" in converted
    assert positional("SELECT $1, '[[:alpha:]]'") == ("SELECT $1, '[[:alpha:]]'", ())


def test_named_and_numbered_parameters_do_not_mix() -> None:
    with pytest.raises(ValueError, match="not both"):
        positional("SELECT :a, $1")


@pytest.mark.parametrize(
    ("values", "error"), [({"a": 1}, r"missing \['b'\]"), ({"a": 1, "b": 2, "c": 3}, r"unknown \['c'\]")]
)
def test_bind_refuses_a_missing_or_unknown_name(values: dict[str, object], error: str) -> None:
    assert bind(("a", "b"), {"b": 2, "a": 1}) == (1, 2)
    with pytest.raises(ValueError, match=error):
        bind(("a", "b"), values)


def test_the_retrieval_statement_names_its_parameters() -> None:
    sql, names = positional(with_limits(load_queries("lightrag_pg.store", "retrieval.sql")["context"], 5))
    assert len(names) == 19 and "question" in names and "bridge_keep" in names
    assert f"${len(names)}" in sql and f"${len(names) + 1}" not in sql


def test_a_fragment_may_include_another_but_not_itself() -> None:
    text = (
        TEXT
        + "\n-- fragment: twice\n-- include: hits side=inner keys=x table=t3 on=true\n"
        + "\n-- name: nested\nWITH\n-- include: twice\nSELECT 1\n"
    )
    assert (
        "inner_hits AS (SELECT x FROM t3 WHERE true LIMIT {top_k}),"
        in parse_queries(text, "test.sql")["nested"]
    )
    looped = "-- fragment: loop\n-- include: loop\n\n-- name: q\n-- include: loop\nSELECT 1\n"
    with pytest.raises(ValueError, match="includes itself"):
        parse_queries(looped, "test.sql")
