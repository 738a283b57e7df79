"""Context token counts include the newline that joins a line to the next

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 10:00:00

``context_tokens`` was the count of a row's context line alone, on the grounds that
the joining newline merges into the closing brace's token. It does not always
(``... :)"}`` then a newline is one token more), so a budget summed from those counts
could keep more rows than upstream 1.5.7, which counts the lines joined. Every row is
counted again with its newline, in Python with the default tokenizer
(``Settings().tokenizer_name``), as migration 0005 backfilled: one read and one batched
update per table. The downgrade counts the lines alone again.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.config import Settings
from lightrag_pg.db.migrate import migration_queries, run
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.store.rows import entity_context_line, relation_context_line

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def _recount(newline: str) -> None:
    bind = op.get_bind()
    count = get_tokenizer(Settings().tokenizer_name).count
    entities = bind.exec_driver_sql(SQL["entity_lines"]).all()
    if entities:
        run(
            bind,
            SQL["set_entity_tokens"],
            [name for name, _, _ in entities],
            [count(entity_context_line(n, t, d) + newline) for n, t, d in entities],
        )
    relations = bind.exec_driver_sql(SQL["relation_lines"]).all()
    if relations:
        run(
            bind,
            SQL["set_relation_tokens"],
            [src for src, _, _ in relations],
            [tgt for _, tgt, _ in relations],
            [count(relation_context_line(s, t, d) + newline) for s, t, d in relations],
        )


def upgrade() -> None:
    _recount("\n")


def downgrade() -> None:
    _recount("")
