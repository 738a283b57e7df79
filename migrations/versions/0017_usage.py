"""Token accounting: the usage table

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-05 10:00:00

``usage`` holds one row per LLM or embedding call: its kind (extract, glean,
summary, keywords, answer, embed), model, input and output tokens (the provider's
count, else the workspace tokenizer's), whether the LLM cache answered it, how long
it took, and the document or query that made it. Rows are written in batches: a
document's with the transaction that finishes it, the others within seconds. The
table is created only when missing, so a workspace whose recorded revision was
rewound upgrades again; the downgrade drops it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "usage",
        sa.Column(
            "id",
            sa.BigInteger(),
            sa.Identity(always=False),
            nullable=False,
            comment="Number of the record, in the order the records were written",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the call ended",
        ),
        sa.Column(
            "kind",
            sa.Text(),
            nullable=False,
            comment="extract, glean, summary, keywords, answer (LLM calls) or embed (embedding calls)",
        ),
        sa.Column(
            "model", sa.Text(), nullable=False, comment="Model that answered (the provider's name when given)"
        ),
        sa.Column(
            "doc_id",
            sa.Text(),
            nullable=True,
            comment="Document whose indexing made the call (NULL: a query, a deletion or an edit)",
        ),
        sa.Column(
            "query_id", sa.Text(), nullable=True, comment="Query that made the call (one id per question)"
        ),
        sa.Column(
            "cache_hit",
            sa.Boolean(),
            nullable=False,
            comment="Answered from llm_cache: no model was called, no tokens were used",
        ),
        sa.Column("input_tokens", sa.Integer(), nullable=False, comment="Tokens sent to the model"),
        sa.Column(
            "output_tokens",
            sa.Integer(),
            nullable=False,
            comment="Tokens the model answered (0 for embeddings)",
        ),
        sa.Column(
            "cached_input_tokens",
            sa.Integer(),
            server_default=sa.text("0"),
            nullable=False,
            comment="Of input_tokens, those the provider read from its prompt prefix cache (when it says)",
        ),
        sa.Column(
            "counted_by",
            sa.Text(),
            nullable=False,
            comment="provider (its usage report), tokenizer (counted with the workspace tokenizer) or none (a cache hit)",
        ),
        sa.Column(
            "duration_ms",
            sa.Float(),
            nullable=False,
            comment="Milliseconds the call took (a cache look-up for a hit)",
        ),
        sa.CheckConstraint(
            "kind IN ('extract', 'glean', 'summary', 'keywords', 'answer', 'embed')", name="usage_kind_check"
        ),
        sa.CheckConstraint("counted_by IN ('provider', 'tokenizer', 'none')", name="usage_counted_by_check"),
        sa.PrimaryKeyConstraint("id", name="usage_pkey"),
        comment="Every LLM and embedding call: its kind, model, tokens and duration (sum by document, day or kind)",
        if_not_exists=True,
    )
    op.create_index("usage_created_at_idx", "usage", ["created_at"], if_not_exists=True)
    op.create_index("usage_doc_id_idx", "usage", ["doc_id"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("usage_doc_id_idx", table_name="usage")
    op.drop_index("usage_created_at_idx", table_name="usage")
    op.drop_table("usage")
