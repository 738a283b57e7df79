"""Things declared once: the query parameters the server accepts, and rows that cannot change."""

from __future__ import annotations

import dataclasses

import pytest

from lightrag_pg.errors import InvalidInput
from lightrag_pg.query.param import QueryParam
from lightrag_pg.server.query import QueryRequest
from lightrag_pg.store.rows import EntityRow, RelationRow


def test_every_query_param_field_can_be_set_in_a_query_body() -> None:
    # the body used to re-declare 16 of the fields by hand: the others were silently dropped
    names = [f.name for f in dataclasses.fields(QueryParam)]
    assert set(names) <= set(QueryRequest.model_fields)
    body = QueryRequest.model_validate(
        {"query": "Who?", "cosine_threshold": 0.5, "kg_chunk_pick_method": "WEIGHT", "top_k": 7}
    )
    param = body.param()
    assert (param.cosine_threshold, param.kg_chunk_pick_method, param.top_k) == (0.5, "WEIGHT", 7)
    assert body.param() == QueryParam(cosine_threshold=0.5, kg_chunk_pick_method="WEIGHT", top_k=7)


def test_a_query_body_leaves_unset_fields_to_the_library() -> None:
    assert QueryRequest(query="Who?").param() == QueryParam()
    with pytest.raises(InvalidInput, match="role"):
        body = {"query": "Who?", "conversation_history": [{"role": "robot", "content": "x"}]}
        QueryRequest.model_validate(body).param()


def test_graph_rows_are_frozen() -> None:
    entity = EntityRow("Alice", description="old")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entity.description = "new"  # type: ignore[misc]
    relation = RelationRow("Bob", "Alice")
    with pytest.raises(dataclasses.FrozenInstanceError):
        relation.weight = 2.0  # type: ignore[misc]
    assert relation.pair == ("Alice", "Bob")
    assert dataclasses.replace(relation, description="d").pair == ("Alice", "Bob")
