"""Stored token counts of the entity and relation context lines

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00

Retrieval ranks entities and relations and cuts them to the token budgets in
SQL (running sums over the ranked rows), so each row carries the token count
of the JSON line it contributes to the context (``context_tokens``), counted
by the writer with the workspace tokenizer.

Backfill: existing rows are counted exactly, in Python, with the default
tokenizer (``Settings().tokenizer_name``): one read and one batched update
per table. A workspace configured with another tokenizer gets its counts
corrected as rows are merged again. Retrieval treats a count that is still
NULL as a row to count by its line length (one token per four bytes), so a
row written by an older process is never lost, only approximately budgeted.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.config import Settings
from lightrag_pg.db.migrate import migration_queries, run
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.store.rows import entity_context_line, relation_context_line

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def upgrade() -> None:
    bind = op.get_bind()
    for block in (
        "add_entity_tokens",
        "comment_entity_tokens",
        "add_relation_tokens",
        "comment_relation_tokens",
    ):
        run(bind, SQL[block])
    count = get_tokenizer(Settings().tokenizer_name).count
    entities = bind.exec_driver_sql(SQL["uncounted_entities"]).all()
    if entities:
        run(
            bind,
            SQL["set_entity_tokens"],
            [name for name, _, _ in entities],
            [count(entity_context_line(n, t, d)) for n, t, d in entities],
        )
    relations = bind.exec_driver_sql(SQL["uncounted_relations"]).all()
    if relations:
        run(
            bind,
            SQL["set_relation_tokens"],
            [src for src, _, _ in relations],
            [tgt for _, tgt, _ in relations],
            [count(relation_context_line(s, t, d)) for s, t, d in relations],
        )


def downgrade() -> None:
    run(op.get_bind(), SQL["drop_relation_tokens"])
    run(op.get_bind(), SQL["drop_entity_tokens"])
