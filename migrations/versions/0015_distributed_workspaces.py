"""Distributed workspaces: recorded in workspace_info; chunk_terms triggers read arrays

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 10:00:00

A workspace can be a Citus distributed schema (``lightrag_pg.db.citus``): every table on
one worker, its triggers firing on the shards. ``workspace_info.distributed`` records it.
Citus cannot plan a statement that joins a trigger's transition table to a distributed
table, so the ``chunk_terms`` triggers (revision 0012, ``tsvector`` backend) now gather
the changed chunks' lexemes into arrays from the transition tables first, then insert or
delete those keys in one statement each: the same rows as before, in the same
transaction, on a single node as on a cluster. (The degree triggers of revision 0010
already pass arrays.) ``lexical_chunks`` reads the number of chunks from
``lexical_chunk_total()``: text_chunks' statistics, on a distributed workspace those of its
shard (the coordinator's table is an empty shell, whose estimate would weigh every word
as if the workspace had one chunk). The downgrade restores 0012's functions and drops the
column.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lightrag_pg.db.citus import is_distributed
from lightrag_pg.db.identifiers import schema_of
from lightrag_pg.db.migrate import migration_queries, recorded_lexical, run, running_target
from lightrag_pg.db.sqlfile import render

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)
SQL_0012 = migration_queries(str(Path(__file__).with_name("0012_chunk_terms.py")))
TERM_FUNCTIONS = ("insert_function", "update_function", "delete_function")


def upgrade() -> None:
    bind, workspace = op.get_bind(), running_target().workspace
    for block in ("add_distributed", "comment_distributed"):
        run(bind, SQL[block])
    run(bind, SQL["record_distributed"], is_distributed(bind, workspace))
    if recorded_lexical(bind, workspace) == "tsvector":
        schema = schema_of(workspace)
        total = "distributed_chunk_total" if is_distributed(bind, workspace) else "chunk_total"
        for block in (*TERM_FUNCTIONS, total, "fts_chunks"):
            run(bind, render(SQL[block], schema=schema))


def downgrade() -> None:
    bind, workspace = op.get_bind(), running_target().workspace
    if recorded_lexical(bind, workspace) == "tsvector":
        for block in (*TERM_FUNCTIONS, "fts_chunks"):
            run(bind, render(SQL_0012[block], schema=schema_of(workspace)))
        run(bind, SQL["drop_chunk_total"])
    run(bind, SQL["drop_distributed"])
