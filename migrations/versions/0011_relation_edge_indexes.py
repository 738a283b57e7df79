"""Covering indexes for the edges of an entity and their endpoints' degrees, without heap fetches

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 10:00:00

Retrieval ranks every relation touching the entities a query found by its endpoints'
degrees and weight, and fills the relation budget with their token counts. Two
indexes, ``relations (src)`` and ``relations (tgt)``, each including the other
endpoint, the weight and ``context_tokens``, let it read those edges by an
index-only scan; ``relations_tgt_idx`` is dropped, the second one covering it. A
third, ``entities (name) INCLUDE (degree)``, serves their endpoints' degrees the same
way. The downgrade restores ``relations_tgt_idx`` and drops the three.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.migrate import migration_queries, run, running_schema
from lightrag_pg.db.sqlfile import render

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def upgrade() -> None:
    bind, schema = op.get_bind(), running_schema()
    for block in ("src_edges", "tgt_edges", "name_degree", "drop_tgt_idx"):
        run(bind, render(SQL[block], schema=schema))


def downgrade() -> None:
    bind, schema = op.get_bind(), running_schema()
    for block in ("restore_tgt_idx", "drop_edges"):
        run(bind, render(SQL[block], schema=schema))
