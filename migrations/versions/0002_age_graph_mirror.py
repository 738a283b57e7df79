"""AGE graph of the workspace, kept in step with entities and relations by triggers

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 17:40:00

Every insert, update and delete of ``entities`` and ``relations`` is mirrored,
in the same transaction, into the vertex label ``entity`` and the edge label
``DIRECTED`` of the workspace's graph ``<workspace>_kg``. Vertex and edge entry
ids are the rows' ``id`` columns, so no lookup table is needed. Without the AGE
extension (or without the grants to use it), and in a Citus distributed workspace
(AGE keeps a graph on one node), the migration leaves ``graph_enabled = false`` and
does nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.citus import is_distributed, log_graph_off
from lightrag_pg.db.identifiers import Identifier, graph_of, schema_of
from lightrag_pg.db.migrate import age_usable, migration_queries, run, running_target
from lightrag_pg.db.sqlfile import render

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
MIRROR = ("mirror_entity_function", "mirror_relation_function", "entities_trigger", "relations_trigger")


def _label_ids(graph: str) -> dict[str, int]:
    rows = op.get_bind().exec_driver_sql(SQL["label_ids"], (graph,)).all()
    return {name: int(label_id) for name, label_id in rows}


def upgrade() -> None:
    target = running_target()
    bind = op.get_bind()
    if is_distributed(bind, target.workspace):
        log_graph_off(target.workspace)
        return
    if not age_usable(bind):
        return
    graph = target.graph
    if not run(bind, SQL["graph_exists"], graph):
        run(bind, SQL["create_graph"], graph)
    label_ids = _label_ids(graph)
    if "entity" not in label_ids:
        run(bind, SQL["create_vlabel"], graph, "entity")
    if "DIRECTED" not in label_ids:
        run(bind, SQL["create_elabel"], graph, "DIRECTED")
    label_ids = _label_ids(graph)
    names: dict[str, Identifier | int] = {
        "schema": schema_of(target.workspace),
        "graph": graph_of(target.workspace),
        "vlabel": label_ids["entity"],
        "elabel": label_ids["DIRECTED"],
    }
    run(bind, render(SQL["edge_id_index"], graph=names["graph"]))
    for block in MIRROR:
        run(bind, render(SQL[block], **names))
    run(bind, SQL["graph_enabled"])


def downgrade() -> None:
    target = running_target()
    bind = op.get_bind()
    for block in (
        "drop_relation_trigger",
        "drop_entity_trigger",
        "drop_relation_function",
        "drop_entity_function",
    ):
        run(bind, SQL[block])
    if run(bind, SQL["graph_schema_exists"], target.graph):
        run(bind, SQL["drop_graph"], target.graph)
    run(bind, SQL["graph_disabled"])
