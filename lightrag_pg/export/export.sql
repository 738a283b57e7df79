-- SQL of the workspace export. Each statement is read through a server-side
-- cursor, in byte order of its key, inside one read-only repeatable-read
-- transaction so the sections agree with each other. $1: whether to include
-- each row's embedding (as pgvector text, '[x,y,...]'); NULL otherwise.

-- name: entities
-- Every entity, with its vector when $1.
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.created_at, e.updated_at,
       CASE WHEN $1::bool THEN v.embedding::text END AS vector
FROM entities e LEFT JOIN entity_vectors v ON $1::bool AND v.name = e.name
ORDER BY e.name COLLATE "C";

-- name: relations
-- Every relation, with its vector when $1.
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.created_at, r.updated_at,
       CASE WHEN $1::bool THEN v.embedding::text END AS vector
FROM relations r LEFT JOIN relation_vectors v ON $1::bool AND v.src = r.src AND v.tgt = r.tgt
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C";

-- name: chunks
-- Every chunk, with its vector when $1.
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       CASE WHEN $1::bool THEN v.embedding::text END AS vector
FROM text_chunks c LEFT JOIN chunk_vectors v ON $1::bool AND v.chunk_id = c.id
ORDER BY c.doc_id COLLATE "C", c.chunk_order_index, c.id COLLATE "C";
