-- Workspaces: listing, reading, describing and dropping them.

-- name: list
-- Every lightrag_pg workspace: a schema with a workspace_info table that is marked as
-- ours, or that also has alembic_version (created before the marker); never a graph schema.
SELECT n.nspname
FROM pg_namespace n
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = 'workspace_info' AND c.relkind = 'r'
WHERE (obj_description(n.oid, 'pg_namespace') = 'lightrag_pg workspace'
       OR EXISTS (SELECT 1 FROM pg_class a
                  WHERE a.relnamespace = n.oid AND a.relkind = 'r' AND a.relname = 'alembic_version'))
  AND NOT EXISTS (SELECT 1 FROM pg_class g WHERE g.relnamespace = n.oid AND g.relname = '_ag_label_vertex')
ORDER BY n.nspname;

-- name: read_info
-- The facts a workspace recorded at creation, and its Alembic revision.
-- The lexical search backend and whether it is distributed are read through to_jsonb, so
-- a workspace older than revision 0008 (0015) reads as NULL (false).
SELECT embedding_dim, embedding_model, graph_enabled, created_at,
       (SELECT version_num FROM {schema}.alembic_version LIMIT 1) AS revision,
       to_jsonb(i) ->> 'lexical_backend' AS lexical_backend,
       coalesce((to_jsonb(i) ->> 'distributed')::boolean, false) AS distributed
FROM {schema}.workspace_info i;

-- name: record_embedding
-- The embedding dimension ($1) and model ($2) of the vectors, after a re-embed.
UPDATE {schema}.workspace_info SET embedding_dim = $1, embedding_model = $2;

-- name: drop_graph
-- Drop an AGE graph with its schema ($1: graph name).
SELECT ag_catalog.drop_graph($1, true);

-- name: drop_schema
-- Drop the workspace's schema with everything in it.
DROP SCHEMA {schema} CASCADE;

-- name: relations_of_schema
-- Each table and view of a schema with its comment ($1: schema name).
SELECT c.relname AS name, c.relkind = 'v' AS is_view, obj_description(c.oid, 'pg_class') AS comment
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'v')
ORDER BY c.relkind, c.relname;

-- name: count_rows
-- Row count of one relation; table_stats joins one such branch per relation
-- with UNION ALL, so all counts come back in one statement.
SELECT {position} AS position, count(*) AS row_count FROM {schema}.{relation};
