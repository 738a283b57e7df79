"""Degree function and analyst views over entities and relations

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 17:10:00

``node_degree(name)`` counts the relations touching an entity with two index
look-ups; ``entity_overview`` and ``relation_overview`` show the graph tables
with node and edge degrees as plain columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from lightrag_pg.db.identifiers import quote_ident
from lightrag_pg.db.migrate import TARGET_KEY

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATEMENTS = (
    """
    CREATE FUNCTION {ws}.node_degree(entity_name text) RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT (SELECT count(*) FROM {ws}.relations WHERE src = entity_name)
             + (SELECT count(*) FROM {ws}.relations WHERE tgt = entity_name)
    $fn$
    """,
    "COMMENT ON FUNCTION {ws}.node_degree(text) IS 'Number of relations touching the entity'",
    """
    CREATE VIEW {ws}.entity_overview AS
    SELECT e.name, e.entity_type, e.description, {ws}.node_degree(e.name) AS degree,
           cardinality(e.source_ids) AS chunk_count, e.source_ids, e.file_paths,
           e.created_at, e.updated_at
    FROM {ws}.entities e
    """,
    "COMMENT ON VIEW {ws}.entity_overview IS 'Entities with their degree'",
    """
    CREATE VIEW {ws}.relation_overview AS
    SELECT r.src, r.tgt, r.keywords, r.description, r.weight,
           {ws}.node_degree(r.src) + {ws}.node_degree(r.tgt) AS edge_degree,
           r.source_ids, r.file_paths, r.created_at, r.updated_at
    FROM {ws}.relations r
    """,
    "COMMENT ON VIEW {ws}.relation_overview IS 'Relations with their edge degree (sum of endpoint degrees)'",
)


def upgrade() -> None:
    ws = quote_ident(op.get_context().config.attributes[TARGET_KEY].workspace)
    for statement in STATEMENTS:
        op.execute(statement.format(ws=ws))


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS relation_overview")
    op.execute("DROP VIEW IF EXISTS entity_overview")
    op.execute("DROP FUNCTION IF EXISTS node_degree(text)")
