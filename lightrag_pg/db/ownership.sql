-- Which schemas and graphs belong to lightrag_pg. A workspace schema carries the
-- comment 'lightrag_pg workspace' and its graph schema 'lightrag_pg workspace graph'
-- (set by mark_schema / mark_graph when the workspace is created or upgraded).

-- name: ownership
-- Facts about the schema $1 and the graph schema $2 of one workspace, from the catalog only
-- (works with or without AGE installed).
SELECT s.oid IS NOT NULL AS schema_exists,
       coalesce(obj_description(s.oid, 'pg_namespace') = 'lightrag_pg workspace', false)
           AS schema_marked,
       EXISTS (SELECT 1 FROM pg_class c
               WHERE c.relnamespace = s.oid AND c.relkind = 'r' AND c.relname = 'workspace_info')
       AND EXISTS (SELECT 1 FROM pg_class c
                   WHERE c.relnamespace = s.oid AND c.relkind = 'r' AND c.relname = 'alembic_version')
           AS legacy_shape,
       EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = s.oid AND c.relname = '_ag_label_vertex')
           AS schema_is_graph,
       g.oid IS NOT NULL AS graph_exists,
       coalesce(obj_description(g.oid, 'pg_namespace') = 'lightrag_pg workspace graph', false)
           AS graph_marked,
       EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
               WHERE c.relnamespace = s.oid AND c.relname = 'entities'
                 AND t.tgname = 'entities_mirror_to_graph')
           AS mirrored
FROM (SELECT $1::text AS schema_name, $2::text AS graph_name) p
LEFT JOIN pg_namespace s ON s.nspname = p.schema_name
LEFT JOIN pg_namespace g ON g.nspname = p.graph_name;

-- name: mark_schema
-- Mark a schema as a lightrag_pg workspace.
COMMENT ON SCHEMA {schema} IS 'lightrag_pg workspace';

-- name: mark_graph
-- Mark a graph schema as the graph of the lightrag_pg workspace named like it.
COMMENT ON SCHEMA {graph} IS 'lightrag_pg workspace graph';
