"""Stored entity degrees: the number of relations touching each entity

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 10:00:00

Retrieval ranks edges by the degrees of their endpoints. Counting them per query
reads every relation index entry of every endpoint, which around hubs is most of
a query's time; ``entities.degree`` stores the count instead. Triggers on
``relations`` keep it in the transaction that inserts, deletes or moves relations:
one set-based statement per inserting or deleting statement (transition tables),
the entity rows locked in name order first. Every write path (merges, deletes,
graph edits, custom graphs) goes through them, so none has to know.

The AGE mirror of ``entities`` (migration 0002) fired on every update; it now
fires only when a column it copies is set, so a degree change never rewrites a
vertex. The backfill is one ``UPDATE`` from the counted relations. The downgrade
drops the triggers, their functions and the column, and restores the mirror's
trigger.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.migrate import migration_queries, run, running_schema
from lightrag_pg.db.sqlfile import render

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
UPGRADE = (
    "add_degree",
    "comment_degree",
    "fill_degree",
    "add_degrees_function",
    "degree_function",
    "degree_update_function",
    "insert_trigger",
    "delete_trigger",
    "update_trigger",
)
DOWNGRADE = (
    "drop_update_trigger",
    "drop_delete_trigger",
    "drop_insert_trigger",
    "drop_update_function",
    "drop_function",
    "drop_add_degrees_function",
    "drop_degree",
)


def upgrade() -> None:
    bind = op.get_bind()
    schema = running_schema()
    for block in UPGRADE:
        run(bind, render(SQL[block], schema=schema))
    if run(bind, SQL["mirror_trigger_exists"]):
        run(bind, render(SQL["mirror_only_copied_columns"], schema=schema))


def downgrade() -> None:
    bind = op.get_bind()
    if run(bind, SQL["mirror_trigger_exists"]):
        run(bind, render(SQL["mirror_every_update"], schema=running_schema()))
    for block in DOWNGRADE:
        run(bind, SQL[block])
