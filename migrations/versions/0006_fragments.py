"""Provenance: what each chunk contributed to each entity and relation

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 10:00:00

``entity_fragments`` and ``relation_fragments`` keep, per chunk, the type,
description, keywords and weight an extractor gave each entity and relation.
Merged rows are a function of their fragments, so deleting or replacing a
document rebuilds exactly what the remaining documents say. Workspaces
indexed before this revision get empty tables: their earlier contributions
have no fragments, and deleting a document whose entities or relations hold
such contributions is refused (re-index the documents into a new workspace
to get provenance for them). Tables and indexes are created only when
missing, so a workspace whose recorded revision was rewound upgrades again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _created() -> sa.Column:
    return sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        server_default=sa.text("now()"),
        nullable=False,
        comment="When the fragment was merged",
    )


def upgrade() -> None:
    op.create_table(
        "entity_fragments",
        sa.Column(
            "entity_name", sa.Text(), nullable=False, comment="Entity the chunk describes (entities.name)"
        ),
        sa.Column("chunk_id", sa.Text(), nullable=False, comment="Chunk the description was extracted from"),
        sa.Column(
            "seq", sa.Integer(), nullable=False, comment="Number of the mention within the chunk, from 0"
        ),
        sa.Column("doc_id", sa.Text(), nullable=False, comment="Document of the chunk"),
        sa.Column(
            "entity_type",
            sa.Text(),
            nullable=False,
            comment="Type the chunk gives the entity (UNKNOWN: only named by a relation)",
        ),
        sa.Column("description", sa.Text(), nullable=False, comment="What the chunk says about the entity"),
        sa.Column("file_path", sa.Text(), nullable=False, comment="Source file path of the document"),
        _created(),
        sa.ForeignKeyConstraint(["entity_name"], ["entities.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["doc_id"], ["full_docs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entity_name", "chunk_id", "seq", name="entity_fragments_pkey"),
        comment="What each chunk contributed to each entity; entities are rebuilt from these",
        if_not_exists=True,
    )
    op.create_index("entity_fragments_doc_idx", "entity_fragments", ["doc_id"], if_not_exists=True)
    op.create_table(
        "relation_fragments",
        sa.Column("src", sa.Text(), nullable=False, comment="First endpoint (relations.src)"),
        sa.Column("tgt", sa.Text(), nullable=False, comment="Second endpoint (relations.tgt)"),
        sa.Column("chunk_id", sa.Text(), nullable=False, comment="Chunk the relation was extracted from"),
        sa.Column(
            "seq", sa.Integer(), nullable=False, comment="Number of the mention within the chunk, from 0"
        ),
        sa.Column("doc_id", sa.Text(), nullable=False, comment="Document of the chunk"),
        sa.Column("keywords", sa.Text(), nullable=False, comment="Comma-separated keywords the chunk gives"),
        sa.Column("description", sa.Text(), nullable=False, comment="What the chunk says about the relation"),
        sa.Column("weight", sa.Float(), nullable=False, comment="Strength the chunk gives the relation"),
        sa.Column("file_path", sa.Text(), nullable=False, comment="Source file path of the document"),
        _created(),
        sa.ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            name="relation_fragments_relation_fkey",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["doc_id"], ["full_docs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("src", "tgt", "chunk_id", "seq", name="relation_fragments_pkey"),
        comment="What each chunk contributed to each relation; relations are rebuilt from these",
        if_not_exists=True,
    )
    op.create_index("relation_fragments_doc_idx", "relation_fragments", ["doc_id"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("relation_fragments_doc_idx", table_name="relation_fragments")
    op.drop_table("relation_fragments")
    op.drop_index("entity_fragments_doc_idx", table_name="entity_fragments")
    op.drop_table("entity_fragments")
