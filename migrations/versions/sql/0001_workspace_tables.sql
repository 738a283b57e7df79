-- SQL of migration 0001 (the workspace tables are created by Alembic operations).

-- name: record_workspace
-- The one workspace_info row: $1 embedding dimension, $2 embedding model (or NULL).
INSERT INTO workspace_info (id, embedding_dim, embedding_model, graph_enabled)
VALUES (1, $1, $2, false);
