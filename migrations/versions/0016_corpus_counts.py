"""Exact corpus counts for lexical ranking: ``corpus_counts``, kept by the term triggers

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 10:00:00

On the ``tsvector`` backend ``lexical_chunks`` weighed a word by the number of chunks and
``lexical_entities`` by the number of entities, both read from the planner's statistics
(``pg_class.reltuples``; on a Citus worker, its shard's). ANALYZE, VACUUM, autovacuum and a
``workspace move`` change those, so the same data ranked differently over time and between
a single node and a cluster. ``corpus_counts`` now holds the exact counts as deltas: the
``text_chunks`` triggers that keep ``chunk_terms`` add one per writing statement, and new
statement-level triggers on ``entities`` do the same, in the writing transaction. Every
transaction writes rows of its own (no writer waits on another's counter row) and folds
the rows no one else holds into them, so the table stays a few rows long.
``lexical_chunk_total()`` and the new ``lexical_entity_total()`` read the sums, and both
ranking functions sum each candidate's score exactly (as integers of 1e-12), so the order
of the rows a plan delivers no longer decides a tie. The back-fill counts the existing rows once the
triggers are in place. A ``bm25`` workspace (pg_textsearch keeps its own corpus
statistics) gets none of it. The downgrade restores 0015's trigger functions and chunk
total, 0008's ``lexical_entities`` and drops what this revision added.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lightrag_pg.db.citus import is_distributed
from lightrag_pg.db.identifiers import schema_of
from lightrag_pg.db.migrate import migration_queries, recorded_lexical, run, running_target
from lightrag_pg.db.sqlfile import render

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
SQL_0008 = migration_queries(str(Path(__file__).with_name("0008_lexical_search.py")))
SQL_0012 = migration_queries(str(Path(__file__).with_name("0012_chunk_terms.py")))
SQL_0015 = migration_queries(str(Path(__file__).with_name("0015_distributed_workspaces.py")))
UPGRADE = (
    "create_table",
    "comment_table",
    "comment_id",
    "comment_chunks",
    "comment_entities",
    "count_function",
    "chunk_insert_function",
    "chunk_delete_function",
    "chunk_truncate_function",
    "entity_count_function",
    "entity_truncate_function",
    "entity_insert_trigger",
    "entity_delete_trigger",
    "entity_truncate_trigger",
    "clear_counts",
    "fill_counts",
    "chunk_total",
    "entity_total",
    "fts_chunks",
    "fts_entities",
)


def upgrade() -> None:
    bind, workspace = op.get_bind(), running_target().workspace
    if recorded_lexical(bind, workspace) != "tsvector":
        return
    schema = schema_of(workspace)
    for block in UPGRADE:
        run(bind, render(SQL[block], schema=schema))


def downgrade() -> None:
    bind, workspace = op.get_bind(), running_target().workspace
    if recorded_lexical(bind, workspace) != "tsvector":
        return
    schema = schema_of(workspace)
    total = "distributed_chunk_total" if is_distributed(bind, workspace) else "chunk_total"
    for block in ("insert_function", "delete_function", total, "fts_chunks"):
        run(bind, render(SQL_0015[block], schema=schema))
    run(bind, render(SQL_0012["truncate_function"], schema=schema))
    run(bind, SQL_0008["fts_entities"])
    for block in ("drop_insert_trigger", "drop_delete_trigger", "drop_truncate_trigger", "drop_functions"):
        run(bind, SQL[block])
    run(bind, SQL["drop_table"])
