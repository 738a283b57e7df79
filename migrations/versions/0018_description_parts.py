"""The analyst views show a joined description's parts

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 10:00:00

A description that joins its fragments (too few for a summary) holds them separated by
``<SEP>``, upstream LightRAG's separator, which every reader of the table had to split.
``entity_overview`` and ``relation_overview`` gain a last column, ``description_parts``:
the parts as a ``text[]`` (a summary is one part). The downgrade puts back 0003's views.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lightrag_pg.db.migrate import migration_queries, run, running_schema
from lightrag_pg.db.sqlfile import render

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
SQL_0003 = migration_queries(str(Path(__file__).with_name("0003_degree_function_and_views.py")))
UPGRADE = ("entity_overview", "relation_overview", "comment_entity_parts", "comment_relation_parts")


def upgrade() -> None:
    schema = running_schema()
    for block in UPGRADE:
        run(op.get_bind(), render(SQL[block], schema=schema))


def downgrade() -> None:
    schema = running_schema()
    for block in ("drop_relation_overview", "drop_entity_overview"):
        run(op.get_bind(), SQL[block])
    for block in (
        "entity_overview",
        "entity_overview_comment",
        "relation_overview",
        "relation_overview_comment",
    ):
        run(op.get_bind(), render(SQL_0003[block], schema=schema))
