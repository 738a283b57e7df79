-- SQL of migration 0004: relation weights reach the AGE mirror as agtype floats
-- (through jsonb, 1.0 became the integer 1 and 9.3e18 overflowed AGE's integer).
-- Placeholders: {schema} the workspace, {graph} its graph, {vlabel} and {elabel}
-- the label ids of "entity" and "DIRECTED" (filled by lightrag_pg.db.sqlfile.render).

-- name: graph_enabled
-- Whether the workspace mirrors into an AGE graph.
SELECT graph_enabled FROM workspace_info;

-- name: label_ids
-- Name and id of every label of graph $1.
SELECT l.name, l.id
FROM ag_catalog.ag_label l
JOIN ag_catalog.ag_graph g ON g.graphid = l.graph
WHERE g.name = CAST($1 AS name);

-- name: mirror_relation_function
-- Mirror one relations row into the edge label "DIRECTED"; properties are built as
-- agtype directly, so the weight stays a float over the whole float8 range.
CREATE OR REPLACE FUNCTION {schema}.mirror_relation() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
        ag_catalog.agtype_build_map(
            'weight', NEW.weight::float8,
            'keywords', NEW.keywords,
            'description', NEW.description,
            'source_id', array_to_string(NEW.source_ids, '<SEP>'),
            'file_path', array_to_string(NEW.file_paths, '<SEP>'),
            'created_at', extract(epoch FROM NEW.created_at)::bigint
        )
    FROM {schema}.entities s, {schema}.entities t
    WHERE s.name = NEW.src AND t.name = NEW.tgt
    ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties;
    RETURN NEW;
END
$fn$;

-- name: rewrite_edges
-- Rewrite the properties of every mirrored edge in the new form, in one statement.
UPDATE {graph}."DIRECTED" d
SET properties = ag_catalog.agtype_build_map(
        'weight', r.weight::float8,
        'keywords', r.keywords,
        'description', r.description,
        'source_id', array_to_string(r.source_ids, '<SEP>'),
        'file_path', array_to_string(r.file_paths, '<SEP>'),
        'created_at', extract(epoch FROM r.created_at)::bigint
    )
FROM {schema}.relations r
WHERE d.id = ag_catalog._graphid({elabel}, r.id);

-- name: previous_mirror_relation_function
-- Downgrade: the 0002 function, which builds properties through jsonb.
CREATE OR REPLACE FUNCTION {schema}.mirror_relation() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
