-- SQL of migration 0001 (the workspace tables are created by Alembic operations).

-- name: record_workspace
-- The one workspace_info row: $1 embedding dimension, $2 embedding model (or NULL).
INSERT INTO workspace_info (id, embedding_dim, embedding_model, graph_enabled)
VALUES (1, $1, $2, false);

-- name: halfvec_hnsw
-- Cosine HNSW index of a vector table whose embeddings have more than 2,000
-- dimensions (pgvector's HNSW limit for vector): the column stays vector({dim}),
-- the index is on its cast to halfvec({dim}) (HNSW takes halfvec up to 4,000).
-- Placeholders: {index} and {table} identifiers, {dim} the dimension.
CREATE INDEX {index} ON {table} USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops)
WITH (m = 16, ef_construction = 64);
