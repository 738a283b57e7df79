"""Degree function and analyst views over entities and relations

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 17:10:00

``node_degree(name)`` counts the relations touching an entity with two index
look-ups; ``entity_overview`` and ``relation_overview`` show the graph tables
with node and edge degrees as plain columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.migrate import migration_queries, run, running_schema
from lightrag_pg.db.sqlfile import render

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
UPGRADE = (
    "node_degree_function",
    "node_degree_comment",
    "entity_overview",
    "entity_overview_comment",
    "relation_overview",
    "relation_overview_comment",
)
DOWNGRADE = ("drop_relation_overview", "drop_entity_overview", "drop_node_degree")


def upgrade() -> None:
    schema = running_schema()
    for block in UPGRADE:
        run(op.get_bind(), render(SQL[block], schema=schema))


def downgrade() -> None:
    for block in DOWNGRADE:
        run(op.get_bind(), SQL[block])
