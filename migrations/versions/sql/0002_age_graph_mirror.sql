-- SQL of migration 0002: the AGE graph of a workspace and the triggers that
-- mirror entities and relations into it. Placeholders: {schema} the workspace,
-- {graph} its graph, {vlabel} and {elabel} the AGE label ids of "entity" and
-- "DIRECTED" (filled by lightrag_pg.db.sqlfile.render).

-- name: graph_exists
-- Whether the AGE graph $1 exists (0 or 1).
SELECT count(*) FROM ag_catalog.ag_graph WHERE name = CAST($1 AS name);

-- name: create_graph
-- Create the AGE graph $1.
SELECT ag_catalog.create_graph($1);

-- name: label_ids
-- Name and id of every label of graph $1.
SELECT l.name, l.id
FROM ag_catalog.ag_label l
JOIN ag_catalog.ag_graph g ON g.graphid = l.graph
WHERE g.name = CAST($1 AS name);

-- name: create_vlabel
-- Create vertex label $2 in graph $1.
SELECT ag_catalog.create_vlabel($1, $2);

-- name: create_elabel
-- Create edge label $2 in graph $1.
SELECT ag_catalog.create_elabel($1, $2);

-- name: edge_id_index
-- Edge ids must be unique for the relation trigger's ON CONFLICT (id).
CREATE UNIQUE INDEX IF NOT EXISTS "DIRECTED_id_key" ON {graph}."DIRECTED" (id);

-- name: mirror_entity_function
-- Mirror one entities row into the vertex label "entity" (vertex id = entities.id).
CREATE FUNCTION {schema}.mirror_entity() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM {graph}."entity" WHERE id = ag_catalog._graphid({vlabel}, OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO {graph}."entity" (id, properties)
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

-- name: mirror_relation_function
-- Mirror one relations row into the edge label "DIRECTED" (edge id = relations.id).
CREATE FUNCTION {schema}.mirror_relation() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM {graph}."DIRECTED" WHERE id = ag_catalog._graphid({elabel}, OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO {graph}."DIRECTED" (id, start_id, end_id, properties)
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
    FROM {schema}.entities s, {schema}.entities t
    WHERE s.name = NEW.src AND t.name = NEW.tgt
    ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties;
    RETURN NEW;
END
$fn$;

-- name: entities_trigger
-- Every change of an entity reaches the graph in the same transaction.
CREATE TRIGGER entities_mirror_to_graph
    AFTER INSERT OR UPDATE OR DELETE ON {schema}.entities
    FOR EACH ROW EXECUTE FUNCTION {schema}.mirror_entity();

-- name: relations_trigger
-- Every change of a relation reaches the graph in the same transaction.
CREATE TRIGGER relations_mirror_to_graph
    AFTER INSERT OR UPDATE OR DELETE ON {schema}.relations
    FOR EACH ROW EXECUTE FUNCTION {schema}.mirror_relation();

-- name: graph_enabled
-- Record that the workspace has its graph mirror.
UPDATE workspace_info SET graph_enabled = true;

-- name: drop_relation_trigger
-- Downgrade: stop mirroring relations.
DROP TRIGGER IF EXISTS relations_mirror_to_graph ON relations;

-- name: drop_entity_trigger
-- Downgrade: stop mirroring entities.
DROP TRIGGER IF EXISTS entities_mirror_to_graph ON entities;

-- name: drop_relation_function
-- Downgrade: the relation mirror function.
DROP FUNCTION IF EXISTS mirror_relation();

-- name: drop_entity_function
-- Downgrade: the entity mirror function.
DROP FUNCTION IF EXISTS mirror_entity();

-- name: graph_schema_exists
-- Downgrade: whether AGE is installed and the graph's schema $1 exists (0 or 1).
SELECT count(*) FROM pg_namespace n JOIN pg_extension e ON e.extname = 'age' WHERE n.nspname = $1;

-- name: drop_graph
-- Downgrade: drop the graph $1 with its schema.
SELECT ag_catalog.drop_graph($1, true);

-- name: graph_disabled
-- Downgrade: record that the workspace has no graph mirror.
UPDATE workspace_info SET graph_enabled = false;
