"""An index of entities by degree, for the hubs' edges in retrieval

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30 10:00:00

Retrieval ranks every edge touching the entities a query found by the sum of its
endpoints' degrees. Around a hub that meant a degree look-up for each of its thousands
of neighbours. ``entities (degree) INCLUDE (name)`` lists the entities of highest
degree by an index-only scan: the statement keeps only a hub's edges to those once
enough of them outrank the rest. The downgrade drops it.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.migrate import migration_queries, run, running_schema
from lightrag_pg.db.sqlfile import render

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def upgrade() -> None:
    run(op.get_bind(), render(SQL["degree_index"], schema=running_schema()))


def downgrade() -> None:
    run(op.get_bind(), render(SQL["drop_degree_index"], schema=running_schema()))
