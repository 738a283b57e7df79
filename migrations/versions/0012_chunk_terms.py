"""Term counts of chunk text in an inverted table: ``chunk_terms`` (tsvector backend)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29 10:00:00

``lexical_chunks`` (0009) found a query word's chunks through the GIN index on
``text_chunks.lexemes``, a heap fetch per word and chunk, and read their counts by
detoasting each candidate's tsvector. A workspace on the ``tsvector`` backend now keeps
one row per lexeme of every chunk in ``chunk_terms`` (its count and the chunk's token
count included in the key), so a word's document frequency and its chunks' counts are
index-only range scans. Statement-level triggers on ``text_chunks`` keep it with
transition tables, set-based (never a statement per chunk): inserts add the chunks'
lexemes, updates replace those of chunks whose lexemes or token count changed, deletes
(cascades included) remove them by key, read from the deleted chunks' lexemes; the
back-fill is one ``INSERT``.
There is no foreign key: its check would run once per term row on every insert, and its
cascade would need a second index by chunk. The GIN index on ``lexemes`` is dropped (no
reader is left); the column stays, as the triggers' source. ``lexical_chunks`` keeps its
results (same words, frequencies, constants and order). The ``bm25`` backend
(pg_textsearch) is left as it is. The downgrade restores 0009's index and function and
drops what this revision added.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lightrag_pg.db.identifiers import schema_of
from lightrag_pg.db.migrate import migration_queries, recorded_lexical, run, running_target
from lightrag_pg.db.sqlfile import render

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
SQL_0009 = migration_queries(str(Path(__file__).with_name("0009_chunk_term_counts.py")))
UPGRADE = (
    "create_table",
    "comment_table",
    "comment_lexeme",
    "comment_chunk_id",
    "comment_tf",
    "comment_tokens",
    "fill_table",
    "insert_function",
    "update_function",
    "delete_function",
    "truncate_function",
    "insert_trigger",
    "update_trigger",
    "delete_trigger",
    "truncate_trigger",
    "drop_lexemes_index",
)
DOWNGRADE = (
    "drop_insert_trigger",
    "drop_update_trigger",
    "drop_delete_trigger",
    "drop_truncate_trigger",
    "drop_functions",
    "drop_table",
)


def upgrade() -> None:
    bind, workspace = op.get_bind(), running_target().workspace
    if recorded_lexical(bind, workspace) != "tsvector":
        return
    schema = schema_of(workspace)
    for block in UPGRADE:
        run(bind, render(SQL[block], schema=schema))
    run(bind, SQL["fts_chunks"])


def downgrade() -> None:
    bind = op.get_bind()
    if recorded_lexical(bind, running_target().workspace) != "tsvector":
        return
    for block in DOWNGRADE:
        run(bind, SQL[block])
    run(bind, SQL_0009["lexemes_index"])
    run(bind, SQL_0009["fts_chunks"])
