"""The graph-editing routes: upstream's bodies and shapes, 4xx for bad requests, and nothing written then."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from lightrag_pg.server import ServerSettings

from .server_support import TEXT, Served, serving

DELETED_KEYS = {"status", "doc_id", "message", "status_code", "file_path"}


@pytest_asyncio.fixture
async def indexed(dsn: str, workspace_name: str, tmp_path: Path) -> AsyncIterator[Served]:
    """A server whose default workspace holds :data:`TEXT` (Alice, Bob, Acme, ...), indexed."""
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path)
    async with serving(settings) as server:
        inserted = await server.client.post("/documents/text", json={"text": TEXT, "file_source": "t.txt"})
        await server.track(inserted.json()["track_id"])
        yield server


async def _graph(served: Served) -> dict[str, Any]:
    """The whole graph as node ids and sorted edge pairs, to show that a refused request wrote nothing."""
    body = (await served.client.get("/graphs", params={"label": "*"})).json()
    nodes = sorted(n["id"] for n in body["nodes"])
    edges = sorted(sorted((e["source"], e["target"])) for e in body["edges"])
    return {"nodes": nodes, "edges": edges}


async def _exists(served: Served, name: str) -> bool:
    return bool((await served.client.get("/graph/entity/exists", params={"name": name})).json()["exists"])


async def _age_entity_ids(dsn: str, workspace: str) -> set[str]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "ag_catalog, public"})
    try:
        await conn.execute("LOAD 'age'")
        rows = await conn.fetch(
            f"SELECT * FROM cypher('{workspace}_kg', $$ MATCH (a:entity) RETURN a.entity_id $$) "
            "AS (name agtype)"
        )
    finally:
        await conn.close()
    return {r["name"].strip('"') for r in rows}


def _success(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success" and body["message"]
    return dict(body)


async def test_edit_entity_updates_and_reports_upstreams_shape(indexed: Served) -> None:
    response = await indexed.client.post(
        "/graph/entity/edit",
        json={"entity_name": "Alice", "updated_data": {"description": "Founder of Acme."}},
    )
    body = _success(response)
    assert body["message"] == "Entity updated successfully"
    assert body["data"]["entity_name"] == "Alice"
    assert body["data"]["graph_data"]["description"] == "Founder of Acme."
    assert body["operation_summary"] == {
        "merged": False,
        "merge_status": "not_attempted",
        "merge_error": None,
        "operation_status": "success",
        "target_entity": None,
        "final_entity": "Alice",
        "renamed": False,
    }


async def test_rename_reaches_the_entity_table_and_the_age_mirror(
    indexed: Served, dsn: str, workspace_name: str
) -> None:
    response = await indexed.client.post(
        "/graph/entity/edit",
        json={"entity_name": "Alice", "updated_data": {"entity_name": "Alice Smith"}, "allow_rename": True},
    )
    body = _success(response)
    assert body["data"]["entity_name"] == "Alice Smith"
    assert body["operation_summary"]["renamed"] is True
    assert body["operation_summary"]["final_entity"] == "Alice Smith"
    assert await _exists(indexed, "Alice Smith") and not await _exists(indexed, "Alice")
    ids = await _age_entity_ids(dsn, workspace_name)
    assert "Alice Smith" in ids and "Alice" not in ids
    graph = await _graph(indexed)
    assert ["Acme", "Alice Smith"] in graph["edges"]


async def test_rename_onto_an_existing_entity_merges_only_when_allowed(indexed: Served) -> None:
    before = await _graph(indexed)
    rename = {"entity_name": "Bob", "updated_data": {"entity_name": "Alice"}, "allow_rename": True}
    refused = await indexed.client.post("/graph/entity/edit", json=rename)
    assert refused.status_code == 400 and "Alice" in refused.json()["detail"]
    assert await _graph(indexed) == before
    merged = _success(await indexed.client.post("/graph/entity/edit", json={**rename, "allow_merge": True}))
    assert merged["message"] == "Entity merged successfully into 'Alice'"
    assert merged["operation_summary"]["merged"] is True
    assert merged["operation_summary"]["merge_status"] == "success"
    assert not await _exists(indexed, "Bob")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"entity_name": "Nobody", "updated_data": {"description": "x"}}, 400),  # upstream: 400
        ({"entity_name": "Alice", "updated_data": {"entity_name": "Al"}}, 400),
        ({"entity_name": "Alice", "updated_data": {"colour": "red"}}, 400),
        ({"entity_name": "Alice", "updated_data": {"description": " "}}, 400),
        ({"entity_name": " ", "updated_data": {}}, 422),
        ({"entity_name": "Alice"}, 422),
    ],
)
async def test_edit_entity_refusals_write_nothing(indexed: Served, body: dict[str, Any], status: int) -> None:
    before = await _graph(indexed)
    response = await indexed.client.post("/graph/entity/edit", json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before


async def test_edit_relation(indexed: Served) -> None:
    body = _success(
        await indexed.client.post(
            "/graph/relation/edit",
            json={"source_id": "Acme", "target_id": "Alice", "updated_data": {"weight": 5.0}},
        )
    )
    assert body["message"] == "Relation updated successfully"
    assert {body["data"]["src_entity"], body["data"]["tgt_entity"]} == {"Acme", "Alice"}
    assert float(body["data"]["graph_data"]["weight"]) == 5.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"source_id": "Alice", "target_id": "Nobody", "updated_data": {"weight": 2}}, 400),
        ({"source_id": "Alice", "target_id": "Acme", "updated_data": {}}, 400),
        ({"source_id": "Alice", "updated_data": {"weight": 2}}, 422),
    ],
)
async def test_edit_relation_refusals_write_nothing(
    indexed: Served, body: dict[str, Any], status: int
) -> None:
    before = await _graph(indexed)
    response = await indexed.client.post("/graph/relation/edit", json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before


async def test_create_entity(indexed: Served) -> None:
    response = await indexed.client.post(
        "/graph/entity/create",
        json={"entity_name": "Tesla", "entity_data": {"description": "A carmaker.", "entity_type": "ORG"}},
    )
    body = _success(response)
    assert body["message"] == "Entity 'Tesla' created successfully"
    assert body["data"]["entity_name"] == "Tesla"
    assert body["data"]["graph_data"]["description"] == "A carmaker."
    assert await _exists(indexed, "Tesla")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"entity_name": "Alice", "entity_data": {"description": "again"}}, 400),  # exists: upstream 400
        ({"entity_name": "Tesla", "entity_data": {}}, 400),
        ({"entity_name": "Tesla"}, 422),
    ],
)
async def test_create_entity_refusals_write_nothing(
    indexed: Served, body: dict[str, Any], status: int
) -> None:
    before = await _graph(indexed)
    response = await indexed.client.post("/graph/entity/create", json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before


async def test_create_relation(indexed: Served) -> None:
    response = await indexed.client.post(
        "/graph/relation/create",
        json={
            "source_entity": "Bob",
            "target_entity": "Alice",
            "relation_data": {"description": "Colleagues."},
        },
    )
    body = _success(response)
    assert body["message"] == "Relation created successfully between 'Bob' and 'Alice'"
    assert body["data"]["graph_data"]["description"] == "Colleagues."
    assert ["Alice", "Bob"] in (await _graph(indexed))["edges"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"source_entity": "Bob", "target_entity": "Nobody", "relation_data": {"description": "x"}}, 400),
        ({"source_entity": "Bob", "target_entity": "Alice", "relation_data": {}}, 400),
        ({"source_entity": "Bob", "target_entity": "Bob", "relation_data": {"description": "x"}}, 400),
        ({"source_entity": "Bob", "relation_data": {"description": "x"}}, 422),
    ],
)
async def test_create_relation_refusals_write_nothing(
    indexed: Served, body: dict[str, Any], status: int
) -> None:
    before = await _graph(indexed)
    response = await indexed.client.post("/graph/relation/create", json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before


async def test_merge_entities(indexed: Served) -> None:
    response = await indexed.client.post(
        "/graph/entities/merge", json={"entities_to_change": ["Bob"], "entity_to_change_into": "Alice"}
    )
    body = _success(response)
    assert body["message"] == "Successfully merged 1 entities into 'Alice'"
    assert body["data"]["entity_name"] == "Alice"
    assert not await _exists(indexed, "Bob") and await _exists(indexed, "Alice")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"entities_to_change": ["Alice"], "entity_to_change_into": "Alice"}, 400),
        ({"entities_to_change": [], "entity_to_change_into": "Alice"}, 422),
        ({"entities_to_change": ["Bob"]}, 422),
    ],
)
async def test_merge_entities_refusals_write_nothing(
    indexed: Served, body: dict[str, Any], status: int
) -> None:
    before = await _graph(indexed)
    response = await indexed.client.post("/graph/entities/merge", json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before


@pytest.mark.slow
async def test_delete_entity(indexed: Served) -> None:
    response = await indexed.client.request("DELETE", "/graph/entity/delete", json={"entity_name": "Bob"})
    body = _success(response)
    assert set(body) == DELETED_KEYS and body["doc_id"] == "" and body["status_code"] == 200
    assert not await _exists(indexed, "Bob")


@pytest.mark.slow
async def test_delete_relation(indexed: Served) -> None:
    response = await indexed.client.request(
        "DELETE", "/graph/relation/delete", json={"source_entity": "Acme", "target_entity": "Alice"}
    )
    body = _success(response)
    assert set(body) == DELETED_KEYS and body["doc_id"] == ""
    assert ["Acme", "Alice"] not in (await _graph(indexed))["edges"]
    assert await _exists(indexed, "Alice")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/graph/entity/delete", {"entity_name": "Nobody"}, 404),
        ("/graph/entity/delete", {"entity_name": " "}, 422),
        ("/graph/relation/delete", {"source_entity": "Bob", "target_entity": "Alice"}, 404),
        ("/graph/relation/delete", {"source_entity": "Alice"}, 422),
    ],
)
async def test_delete_refusals_write_nothing(
    indexed: Served, path: str, body: dict[str, Any], status: int
) -> None:
    before = await _graph(indexed)
    response = await indexed.client.request("DELETE", path, json=body)
    assert response.status_code == status and response.json()["detail"]
    assert await _graph(indexed) == before
