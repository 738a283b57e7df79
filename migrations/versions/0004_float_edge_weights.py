"""Relation weights reach the AGE mirror as floats

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 16:00:00

Through jsonb, a weight of 1.0 became the agtype integer 1 and a weight of
9.3e18 or more overflowed AGE's integer. The relation trigger now builds the
edge properties with ``agtype_build_map``, so weights are agtype floats over
the whole float8 range; existing edges are rewritten in the new form. Both
mirror functions compare graph ids with ``OPERATOR(ag_catalog.=)``, so deleting
an entity or relation works from a session without ag_catalog on its search_path.
Workspaces without a graph only get their revision bumped.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.identifiers import Identifier, graph_of, schema_of
from lightrag_pg.db.migrate import migration_queries, run, running_target
from lightrag_pg.db.sqlfile import render

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def _names() -> dict[str, Identifier | int] | None:
    bind = op.get_bind()
    if not run(bind, SQL["graph_enabled"]):
        return None
    workspace = running_target().workspace
    rows = bind.exec_driver_sql(SQL["label_ids"], (graph_of(workspace).name,)).all()
    labels = {name: int(label_id) for name, label_id in rows}
    return {
        "schema": schema_of(workspace),
        "graph": graph_of(workspace),
        "vlabel": labels["entity"],
        "elabel": labels["DIRECTED"],
    }


def upgrade() -> None:
    names = _names()
    if names is None:
        return
    for block in ("mirror_entity_function", "mirror_relation_function", "rewrite_edges"):
        run(op.get_bind(), render(SQL[block], **names))


def downgrade() -> None:
    names = _names()
    if names is not None:
        for block in ("previous_mirror_entity_function", "previous_mirror_relation_function"):
            run(op.get_bind(), render(SQL[block], **names))
