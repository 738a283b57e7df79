-- Statements run around the Alembic migrations of one workspace
-- (on a SQLAlchemy connection; parameters are positional, $1...).

-- name: vector_installed
-- Whether pgvector is installed in this database (0 or 1).
SELECT count(*) FROM pg_extension WHERE extname = 'vector';

-- name: create_vector
-- pgvector is required by every workspace; installing it needs a superuser (or the
-- database owner where the extension is trusted).
CREATE EXTENSION IF NOT EXISTS vector;

-- name: age_access
-- What the graph mirror needs from AGE, from the catalog only: the extension, USAGE on
-- schema ag_catalog, and SELECT on ag_catalog.ag_graph and ag_catalog.ag_label.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'age') AS installed,
       EXISTS (SELECT 1 FROM pg_namespace n
               WHERE n.nspname = 'ag_catalog' AND has_schema_privilege(n.oid, 'USAGE')) AS usage,
       (SELECT count(*) = 2 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'ag_catalog' AND c.relname IN ('ag_graph', 'ag_label')
          AND has_table_privilege(c.oid, 'SELECT')) AS catalog_select;

-- name: can_create_schema
-- Whether the current role may create schemas in this database.
SELECT has_database_privilege(current_database(), 'CREATE');

-- name: who
-- The current role and database, for error messages.
SELECT current_user::text, current_database()::text;

-- name: age_available
-- Whether the AGE extension can be installed on this server (0 or 1).
SELECT count(*) FROM pg_available_extensions WHERE name = 'age';

-- name: create_age
-- Install AGE; run inside a savepoint, since a role may not be allowed to.
CREATE EXTENSION IF NOT EXISTS age;

-- name: textsearch_available
-- Whether the pg_textsearch extension (BM25 indexes) can be installed on this server (0 or 1).
SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_textsearch';

-- name: textsearch_installed
-- Whether pg_textsearch is installed in this database.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_textsearch');

-- name: create_textsearch
-- Install pg_textsearch; run inside a savepoint: it fails unless the server preloads its
-- library, and a role may not be allowed to.
CREATE EXTENSION IF NOT EXISTS pg_textsearch;

-- name: create_schema
-- The workspace's schema.
CREATE SCHEMA IF NOT EXISTS {schema};

-- name: set_search_path
-- Point the migration transaction at the workspace (value from identifiers.search_path).
SELECT set_config('search_path', $1, true);

-- name: has_workspace_info
-- Whether the workspace already has its workspace_info table ($1: schema name).
SELECT to_regclass(format('%I.workspace_info', $1::text)) IS NOT NULL;

-- name: recorded_dim
-- The embedding dimension recorded when the workspace was created.
SELECT embedding_dim FROM {schema}.workspace_info;

-- name: recorded_lexical
-- The lexical search backend recorded at creation (NULL before revision 0008).
SELECT to_jsonb(i) ->> 'lexical_backend' FROM {schema}.workspace_info i;

-- name: foreign_tables
-- Tables of other schemas, which autogenerate must not mistake for ours ($1: schema name).
SELECT tablename FROM pg_tables WHERE schemaname <> $1;
