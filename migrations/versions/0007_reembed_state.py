"""Re-embedding: the model a re-embed in progress stages vectors for

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 10:00:00

``reembed_state`` holds one row while ``lightrag-pg reembed`` (or
``LightRAG.areembed``) stages vectors of a new embedding model in shadow
tables (``entity_vectors_next``, ``relation_vectors_next``,
``chunk_vectors_next``, created by the re-embed itself since their width is
the new model's); the row and the shadow tables go in the transaction that
swaps them in. ``workspace_info`` now records the model of the stored
vectors, which a re-embed changes: its comments say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lightrag_pg.db.migrate import migration_queries, run

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def upgrade() -> None:
    op.create_table(
        "reembed_state",
        sa.Column(
            "id",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="Always 1: at most one re-embed per workspace",
        ),
        sa.Column(
            "embedding_model", sa.Text(), nullable=False, comment="Model the vectors are re-embedded with"
        ),
        sa.Column("embedding_dim", sa.Integer(), nullable=False, comment="Dimension of that model's vectors"),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the re-embed began",
        ),
        sa.CheckConstraint("id = 1", name="reembed_state_single_row"),
        sa.PrimaryKeyConstraint("id", name="reembed_state_pkey"),
        comment="The re-embed in progress, if any (its vectors are staged in the *_vectors_next tables)",
        if_not_exists=True,
    )
    for block in ("comment_info", "comment_info_model"):
        run(op.get_bind(), SQL[block])


def downgrade() -> None:
    run(op.get_bind(), SQL["drop_shadow_tables"])
    op.drop_table("reembed_state")
    for block in ("uncomment_info", "uncomment_info_model"):
        run(op.get_bind(), SQL[block])
