"""Lexical search: BM25 (pg_textsearch) or full text indexes on chunks and entities

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 10:00:00

Retrieval fuses vector search with lexical search, which finds exact names,
codes and rare words that embeddings miss. The backend is chosen here, once:
``tsvector`` (GIN full text indexes on ``text_chunks.content`` and on entity
names and descriptions, ranked by BM25 counting each word once per text) unless the
caller asks for ``bm25`` (``MigrationTarget.lexical``, ``alembic -x
lexical=bm25``): pg_textsearch's BM25 indexes on ``text_chunks.content``,
``entities.name`` and ``entities.description``, which keep corpus-wide statistics but, in
pg_textsearch 1.0, serialise a workspace's writing transactions (see
``lightrag_pg.db.migrate.lexical_backend``). It is recorded in
``workspace_info.lexical_backend``. Both backends define the functions
``lexical_chunks(query, k)`` and ``lexical_entities(query, k)``, so retrieval
runs the same statement on either. ``entities_name_key_idx`` finds the
entities a phrase of the question names (see ``lexical_name_key``).

The indexes cover the existing columns, so PostgreSQL keeps them right on
every insert, update (re-index, graph edit, rename) and delete; a workspace
upgraded from 0007 has its existing rows indexed by the upgrade. Everything is
created only when missing and a recorded backend is kept, so a workspace whose
recorded revision was rewound upgrades again.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.migrate import lexical_backend, migration_queries, recorded_lexical, run, running_target

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)

BACKEND_BLOCKS: dict[str, tuple[str, ...]] = {
    "bm25": (
        "bm25_chunk_index",
        "bm25_entity_name_index",
        "bm25_entity_description_index",
        "bm25_chunks",
        "bm25_entities",
    ),
    "tsvector": ("fts_word", "fts_chunk_index", "fts_entity_index", "fts_chunks", "fts_entities"),
}


def upgrade() -> None:
    bind = op.get_bind()
    target = running_target()
    backend = recorded_lexical(bind, target.workspace) or lexical_backend(bind, target.lexical)
    for block in ("add_backend", "comment_backend"):
        run(bind, SQL[block])
    run(bind, SQL["record_backend"], backend)
    run(bind, SQL["drop_backend_default"])
    for block in ("name_key", "name_key_index", *BACKEND_BLOCKS[backend]):
        run(bind, SQL[block])


def downgrade() -> None:
    bind = op.get_bind()
    for block in ("drop_functions", "drop_indexes", "drop_name_key", "drop_backend"):
        run(bind, SQL[block])
