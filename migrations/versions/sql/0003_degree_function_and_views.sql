-- SQL of migration 0003: node_degree() and the analyst views.
-- Placeholder: {schema} the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: node_degree_function
-- Degree of an entity with two index look-ups.
CREATE FUNCTION {schema}.node_degree(entity_name text) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT (SELECT count(*) FROM {schema}.relations WHERE src = entity_name)
         + (SELECT count(*) FROM {schema}.relations WHERE tgt = entity_name)
$fn$;

-- name: node_degree_comment
-- Documents node_degree for analysts.
COMMENT ON FUNCTION {schema}.node_degree(text) IS 'Number of relations touching the entity';

-- name: entity_overview
-- Entities with their degree as a plain column.
CREATE VIEW {schema}.entity_overview AS
SELECT e.name, e.entity_type, e.description, {schema}.node_degree(e.name) AS degree,
       cardinality(e.source_ids) AS chunk_count, e.source_ids, e.file_paths,
       e.created_at, e.updated_at
FROM {schema}.entities e;

-- name: entity_overview_comment
-- Documents entity_overview for analysts.
COMMENT ON VIEW {schema}.entity_overview IS 'Entities with their degree';

-- name: relation_overview
-- Relations with their edge degree as a plain column.
CREATE VIEW {schema}.relation_overview AS
SELECT r.src, r.tgt, r.keywords, r.description, r.weight,
       {schema}.node_degree(r.src) + {schema}.node_degree(r.tgt) AS edge_degree,
       r.source_ids, r.file_paths, r.created_at, r.updated_at
FROM {schema}.relations r;

-- name: relation_overview_comment
-- Documents relation_overview for analysts.
COMMENT ON VIEW {schema}.relation_overview IS 'Relations with their edge degree (sum of endpoint degrees)';

-- name: drop_relation_overview
-- Downgrade.
DROP VIEW IF EXISTS relation_overview;

-- name: drop_entity_overview
-- Downgrade.
DROP VIEW IF EXISTS entity_overview;

-- name: drop_node_degree
-- Downgrade.
DROP FUNCTION IF EXISTS node_degree(text);
