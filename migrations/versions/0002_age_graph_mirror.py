"""AGE graph of the workspace, kept in step with entities and relations by triggers

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 17:40:00

Every insert, update and delete of ``entities`` and ``relations`` is mirrored,
in the same transaction, into the vertex label ``entity`` and the edge label
``DIRECTED`` of the workspace's graph ``<workspace>_kg``. Vertex and edge entry
ids are the rows' ``id`` columns, so no lookup table is needed. Without the AGE
extension the migration records ``graph_enabled = false`` and does nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lightrag_pg.db.identifiers import quote_ident
from lightrag_pg.db.migrate import TARGET_KEY

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MIRROR_SQL = """
CREATE FUNCTION {ws}.mirror_entity() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM {g}."entity" WHERE id = ag_catalog._graphid({vlabel}, OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO {g}."entity" (id, properties)
    VALUES (
        ag_catalog._graphid({vlabel}, NEW.id),
        jsonb_build_object(
            'entity_id', NEW.name,
            'entity_type', NEW.entity_type,
            'description', NEW.description,
            'source_id', array_to_string(NEW.source_ids, '<SEP>'),
            'file_path', array_to_string(NEW.file_paths, '<SEP>'),
            'created_at', extract(epoch FROM NEW.created_at)::bigint
        )::text::ag_catalog.agtype
    )
    ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties;
    RETURN NEW;
END
$fn$;

CREATE FUNCTION {ws}.mirror_relation() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM {g}."DIRECTED" WHERE id = ag_catalog._graphid({elabel}, OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO {g}."DIRECTED" (id, start_id, end_id, properties)
    SELECT
        ag_catalog._graphid({elabel}, NEW.id),
        ag_catalog._graphid({vlabel}, s.id),
        ag_catalog._graphid({vlabel}, t.id),
        jsonb_build_object(
            'weight', NEW.weight,
            'keywords', NEW.keywords,
            'description', NEW.description,
            'source_id', array_to_string(NEW.source_ids, '<SEP>'),
            'file_path', array_to_string(NEW.file_paths, '<SEP>'),
            'created_at', extract(epoch FROM NEW.created_at)::bigint
        )::text::ag_catalog.agtype
    FROM {ws}.entities s, {ws}.entities t
    WHERE s.name = NEW.src AND t.name = NEW.tgt
    ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER entities_mirror_to_graph
    AFTER INSERT OR UPDATE OR DELETE ON {ws}.entities
    FOR EACH ROW EXECUTE FUNCTION {ws}.mirror_entity();

CREATE TRIGGER relations_mirror_to_graph
    AFTER INSERT OR UPDATE OR DELETE ON {ws}.relations
    FOR EACH ROW EXECUTE FUNCTION {ws}.mirror_relation();
"""


def upgrade() -> None:
    target = op.get_context().config.attributes[TARGET_KEY]
    bind = op.get_bind()
    has_age = bind.execute(sa.text("SELECT count(*) FROM pg_extension WHERE extname = 'age'")).scalar()
    if not has_age:
        return
    graph = target.graph
    exists = bind.execute(
        sa.text("SELECT count(*) FROM ag_catalog.ag_graph WHERE name = CAST(:g AS name)"),
        {"g": graph},
    ).scalar()
    if not exists:
        bind.execute(sa.text("SELECT ag_catalog.create_graph(:g)"), {"g": graph})
    label_sql = sa.text(
        "SELECT l.name, l.id FROM ag_catalog.ag_label l JOIN ag_catalog.ag_graph g "
        "ON g.graphid = l.graph WHERE g.name = CAST(:g AS name)"
    )
    label_ids = dict(bind.execute(label_sql, {"g": graph}).all())
    for kind, label in (("vlabel", "entity"), ("elabel", "DIRECTED")):
        if label not in label_ids:
            bind.execute(sa.text(f"SELECT ag_catalog.create_{kind}(:g, :l)"), {"g": graph, "l": label})
    label_ids = dict(bind.execute(label_sql, {"g": graph}).all())
    g = quote_ident(graph)
    op.execute(f'CREATE UNIQUE INDEX IF NOT EXISTS "DIRECTED_id_key" ON {g}."DIRECTED" (id)')
    mirror = MIRROR_SQL.format(
        ws=quote_ident(target.workspace),
        g=g,
        vlabel=int(label_ids["entity"]),
        elabel=int(label_ids["DIRECTED"]),
    )
    for statement in mirror.split(";\n\n"):
        op.execute(statement)
    op.execute("UPDATE workspace_info SET graph_enabled = true")


def downgrade() -> None:
    target = op.get_context().config.attributes[TARGET_KEY]
    op.execute("DROP TRIGGER IF EXISTS relations_mirror_to_graph ON relations")
    op.execute("DROP TRIGGER IF EXISTS entities_mirror_to_graph ON entities")
    op.execute("DROP FUNCTION IF EXISTS mirror_relation()")
    op.execute("DROP FUNCTION IF EXISTS mirror_entity()")
    bind = op.get_bind()
    graph_exists = bind.execute(
        sa.text(
            "SELECT count(*) FROM pg_namespace n JOIN pg_extension e ON e.extname = 'age' "
            "WHERE n.nspname = :g"
        ),
        {"g": target.graph},
    ).scalar()
    if graph_exists:
        bind.execute(sa.text("SELECT ag_catalog.drop_graph(:g, true)"), {"g": target.graph})
    op.execute("UPDATE workspace_info SET graph_enabled = false")
