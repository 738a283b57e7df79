"""The context's JSON lines are exactly upstream's ``json.dumps(..., ensure_ascii=False)``."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from lightrag_pg.jsonline import json_line
from lightrag_pg.store.rows import entity_context_line, relation_context_line

TEXT = st.text(st.characters(codec=None), max_size=200)


@given(st.dictionaries(TEXT, TEXT, max_size=5))
def test_a_json_line_is_json_dumps_of_the_same_object(fields: dict[str, str]) -> None:
    assert json_line(fields) == json.dumps(fields, ensure_ascii=False)


@given(TEXT, st.one_of(st.none(), TEXT), st.one_of(st.none(), TEXT))
def test_context_lines_are_json_dumps_of_upstream_s_fields(
    name: str, kind: str | None, text: str | None
) -> None:
    entity = {"entity": name, "type": kind or "UNKNOWN", "description": text or "UNKNOWN"}
    relation = {"entity1": name, "entity2": kind or "", "description": text or "UNKNOWN"}
    assert entity_context_line(name, kind, text) == json.dumps(entity, ensure_ascii=False)
    assert relation_context_line(name, kind or "", text) == json.dumps(relation, ensure_ascii=False)
