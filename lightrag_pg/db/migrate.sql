-- Statements run around the Alembic migrations of one workspace
-- (on a SQLAlchemy connection; parameters are positional, $1...).

-- name: create_vector
-- pgvector is required by every workspace.
CREATE EXTENSION IF NOT EXISTS vector;

-- name: age_available
-- Whether the AGE extension can be installed on this server (0 or 1).
SELECT count(*) FROM pg_available_extensions WHERE name = 'age';

-- name: create_age
-- Install AGE; run inside a savepoint, since a role may not be allowed to.
CREATE EXTENSION IF NOT EXISTS age;

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

-- name: foreign_tables
-- Tables of other schemas, which autogenerate must not mistake for ours ($1: schema name).
SELECT tablename FROM pg_tables WHERE schemaname <> $1;
