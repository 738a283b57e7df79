"""Term counts for full text search over chunks: a stored tsvector of chunk text

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 10:00:00

Revision 0008's ``tsvector`` backend counted each query word once per chunk, since
counting its occurrences meant parsing every matching chunk's text per query. A
workspace on that backend now keeps the chunk text's lexemes with their positions in
``text_chunks.lexemes``, a column PostgreSQL generates from ``content`` on every
insert and update, indexed by GIN in place of the expression index; ``lexical_chunks``
becomes BM25 with term counts read from it (see its SQL). The ``bm25`` backend
(pg_textsearch) already counts terms and is left as it is. The upgrade rewrites
``text_chunks`` once to fill the column; the downgrade restores 0008's index and
function.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lightrag_pg.db.migrate import migration_queries, recorded_lexical, run, running_target

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
SQL_0008 = migration_queries(str(Path(__file__).with_name("0008_lexical_search.py")))


def _backend() -> str | None:
    return recorded_lexical(op.get_bind(), running_target().workspace)


def upgrade() -> None:
    if _backend() != "tsvector":
        return
    for block in ("add_lexemes", "comment_lexemes", "lexemes_index", "drop_expression_index", "fts_chunks"):
        run(op.get_bind(), SQL[block])


def downgrade() -> None:
    if _backend() != "tsvector":
        return
    for sql in (SQL_0008["fts_chunk_index"], SQL_0008["fts_chunks"], SQL["drop_lexemes"]):
        run(op.get_bind(), sql)
