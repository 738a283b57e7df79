-- SQL of migration 0010: the stored degree of every entity, kept by triggers on relations.
-- Placeholder: {schema} the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: add_degree
-- Number of relations touching the entity (a relation whose two ends are the entity counts twice).
ALTER TABLE entities ADD COLUMN IF NOT EXISTS degree integer NOT NULL DEFAULT 0;

-- name: comment_degree
-- Documents the column.
COMMENT ON COLUMN entities.degree IS
    'Number of relations touching the entity, kept by the relations triggers';

-- name: fill_degree
-- Backfill: every entity's degree counted from relations, in one statement.
UPDATE entities e SET degree = d.n
FROM (
    SELECT name, count(*) AS n
    FROM (SELECT src AS name FROM relations UNION ALL SELECT tgt FROM relations) ends
    GROUP BY name
) d
WHERE e.name = d.name AND e.degree <> d.n;

-- name: add_degrees_function
-- The one place degrees change: one more for every name in plus, one less for every
-- name in minus, in one statement. The entity rows are locked first in name order (as
-- every writer takes them), so concurrent writers cannot deadlock on them; names of
-- entities deleted in the same transaction (a cascade) are simply not found.
CREATE OR REPLACE FUNCTION {schema}.relations_add_degrees(plus text[], minus text[]) RETURNS void
LANGUAGE sql AS $fn$
    WITH delta AS (
        SELECT ends.name, sum(ends.n) AS n
        FROM (SELECT unnest(plus) AS name, 1 AS n UNION ALL SELECT unnest(minus), -1) ends
        GROUP BY ends.name
        HAVING sum(ends.n) <> 0
    ), locked AS MATERIALIZED (
        SELECT e.name, d.n FROM {schema}.entities e JOIN delta d ON d.name = e.name
        ORDER BY e.name COLLATE "C"
        FOR NO KEY UPDATE OF e
    )
    UPDATE {schema}.entities e SET degree = e.degree + l.n FROM locked l WHERE e.name = l.name;
$fn$;

-- name: degree_function
-- Statement-level trigger of relations (INSERT, DELETE): the endpoints of every
-- inserted row (new_rows) gain one, those of every deleted row (old_rows) lose one.
CREATE OR REPLACE FUNCTION {schema}.relations_count_degrees() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM {schema}.relations_add_degrees(
            ARRAY(SELECT src FROM new_rows UNION ALL SELECT tgt FROM new_rows), ARRAY[]::text[]);
    ELSE
        PERFORM {schema}.relations_add_degrees(
            ARRAY[]::text[], ARRAY(SELECT src FROM old_rows UNION ALL SELECT tgt FROM old_rows));
    END IF;
    RETURN NULL;
END
$fn$;

-- name: degree_update_function
-- Row-level trigger of relations for an update that moves an endpoint (no writer does
-- today; renames delete and insert): the old endpoints lose one, the new ones gain one.
CREATE OR REPLACE FUNCTION {schema}.relations_move_degrees() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM {schema}.relations_add_degrees(ARRAY[NEW.src, NEW.tgt], ARRAY[OLD.src, OLD.tgt]);
    RETURN NULL;
END
$fn$;

-- name: insert_trigger
-- Relations inserted: their endpoints' degrees go up, once per statement.
CREATE OR REPLACE TRIGGER relations_degree_insert
    AFTER INSERT ON {schema}.relations
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.relations_count_degrees();

-- name: delete_trigger
-- Relations deleted (cascades included): their endpoints' degrees go down, once per statement.
CREATE OR REPLACE TRIGGER relations_degree_delete
    AFTER DELETE ON {schema}.relations
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.relations_count_degrees();

-- name: update_trigger
-- A relation whose endpoints change moves its degree (PostgreSQL has no transition
-- tables for a trigger with a column list, hence row level, and only when an end moved).
CREATE OR REPLACE TRIGGER relations_degree_update
    AFTER UPDATE OF src, tgt ON {schema}.relations
    FOR EACH ROW
    WHEN (OLD.src IS DISTINCT FROM NEW.src OR OLD.tgt IS DISTINCT FROM NEW.tgt)
    EXECUTE FUNCTION {schema}.relations_move_degrees();

-- name: mirror_trigger_exists
-- Whether the workspace mirrors entities into its AGE graph (0 or 1).
SELECT count(*) FROM pg_trigger
WHERE tgrelid = 'entities'::regclass AND tgname = 'entities_mirror_to_graph';

-- name: mirror_only_copied_columns
-- The AGE mirror of entities fires only when a column it copies is set (mirror_entity,
-- migration 0002), so a degree update never rewrites a vertex.
CREATE OR REPLACE TRIGGER entities_mirror_to_graph
    AFTER INSERT OR DELETE OR UPDATE OF id, name, entity_type, description, source_ids, file_paths, created_at
    ON {schema}.entities
    FOR EACH ROW EXECUTE FUNCTION {schema}.mirror_entity();

-- name: mirror_every_update
-- Downgrade: the AGE mirror of entities fires on every update again (migration 0002).
CREATE OR REPLACE TRIGGER entities_mirror_to_graph
    AFTER INSERT OR UPDATE OR DELETE ON {schema}.entities
    FOR EACH ROW EXECUTE FUNCTION {schema}.mirror_entity();

-- name: drop_update_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS relations_degree_update ON relations;

-- name: drop_delete_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS relations_degree_delete ON relations;

-- name: drop_insert_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS relations_degree_insert ON relations;

-- name: drop_update_function
-- Downgrade.
DROP FUNCTION IF EXISTS relations_move_degrees();

-- name: drop_function
-- Downgrade.
DROP FUNCTION IF EXISTS relations_count_degrees();

-- name: drop_add_degrees_function
-- Downgrade.
DROP FUNCTION IF EXISTS relations_add_degrees(text[], text[]);

-- name: drop_degree
-- Downgrade.
ALTER TABLE entities DROP COLUMN IF EXISTS degree;
