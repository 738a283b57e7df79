-- SQL of migration 0007: re-embedding state, and workspace_info comments.

-- name: comment_info
-- workspace_info now changes when the vectors are re-embedded.
COMMENT ON TABLE workspace_info IS
    'Facts about the workspace; the embedding model and dimension change only by a re-embed';

-- name: comment_info_model
-- The model of the stored vectors, not only the first one.
COMMENT ON COLUMN workspace_info.embedding_model IS 'Name of the embedding model of the stored vectors';

-- name: drop_shadow_tables
-- Downgrade: drop the vectors a re-embed in progress had staged.
DROP TABLE IF EXISTS entity_vectors_next, relation_vectors_next, chunk_vectors_next;

-- name: uncomment_info
-- Downgrade: the comment of revision 0001.
COMMENT ON TABLE workspace_info IS 'Facts fixed when the workspace was created';

-- name: uncomment_info_model
-- Downgrade: the comment of revision 0001.
COMMENT ON COLUMN workspace_info.embedding_model IS 'Name of the embedding model first used';
