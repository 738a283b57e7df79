-- SQL of migration 0018: the analyst views show a joined description's parts.
-- Placeholder: {schema} the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: entity_overview
-- Entities with their degree as a plain column and, last, the parts of a description
-- that joins its fragments with <SEP> (a summary is one part).
CREATE OR REPLACE VIEW {schema}.entity_overview AS
SELECT e.name, e.entity_type, e.description, {schema}.node_degree(e.name) AS degree,
       cardinality(e.source_ids) AS chunk_count, e.source_ids, e.file_paths,
       e.created_at, e.updated_at,
       string_to_array(e.description, '<SEP>') AS description_parts
FROM {schema}.entities e;

-- name: relation_overview
-- Relations with their edge degree as a plain column and, last, their description's parts.
CREATE OR REPLACE VIEW {schema}.relation_overview AS
SELECT r.src, r.tgt, r.keywords, r.description, r.weight,
       {schema}.node_degree(r.src) + {schema}.node_degree(r.tgt) AS edge_degree,
       r.source_ids, r.file_paths, r.created_at, r.updated_at,
       string_to_array(r.description, '<SEP>') AS description_parts
FROM {schema}.relations r;

-- name: comment_entity_parts
-- Documents the new column for analysts.
COMMENT ON COLUMN {schema}.entity_overview.description_parts IS
    'The description''s parts: the fragments it joins with <SEP>, or the one summary';

-- name: comment_relation_parts
-- Documents the new column for analysts.
COMMENT ON COLUMN {schema}.relation_overview.description_parts IS
    'The description''s parts: the fragments it joins with <SEP>, or the one summary';

-- name: drop_relation_overview
-- Downgrade: 0003's view has no parts column (CREATE OR REPLACE cannot drop one).
DROP VIEW IF EXISTS relation_overview;

-- name: drop_entity_overview
-- Downgrade: as for relation_overview.
DROP VIEW IF EXISTS entity_overview;
