-- SQL of re-embedding: vectors of a new embedding model are staged in shadow
-- tables (<table>_next, same columns, the new width) while queries use the
-- live tables; one transaction swaps them in. A staged row is current when
-- the text it was computed from equals the live row's text: entity and
-- relation vectors keep that text in `content`; chunk vectors are staged with
-- the MD5 of the chunk's content (column content_md5, dropped at the swap).

-- name: read_state
-- The re-embed in progress: its model and dimension (no row: none).
SELECT embedding_model, embedding_dim, started_at FROM reembed_state;

-- name: insert_state
-- Record the re-embed being started ($1 model, $2 dimension).
INSERT INTO reembed_state (id, embedding_model, embedding_dim) VALUES (1, $1, $2);

-- name: create_shadows
-- The three shadow tables, empty, with the live tables' columns, defaults and
-- comments, vectors of {dim} dimensions, keys and cascading foreign keys (so
-- a row deleted from the graph or the chunks leaves the shadow too). The foreign keys
-- have the live tables' names already (a constraint name is the table's own); one
-- ALTER per change, as Citus forwards each to the workers.
CREATE TABLE entity_vectors_next (LIKE entity_vectors INCLUDING DEFAULTS INCLUDING COMMENTS);
ALTER TABLE entity_vectors_next ALTER COLUMN embedding TYPE vector({dim});
ALTER TABLE entity_vectors_next ADD CONSTRAINT entity_vectors_next_pkey PRIMARY KEY (name);
ALTER TABLE entity_vectors_next ADD CONSTRAINT entity_vectors_name_fkey FOREIGN KEY (name)
    REFERENCES entities (name) ON DELETE CASCADE;
CREATE TABLE relation_vectors_next (LIKE relation_vectors INCLUDING DEFAULTS INCLUDING COMMENTS);
ALTER TABLE relation_vectors_next ALTER COLUMN embedding TYPE vector({dim});
ALTER TABLE relation_vectors_next ADD CONSTRAINT relation_vectors_next_pkey PRIMARY KEY (src, tgt);
ALTER TABLE relation_vectors_next ADD CONSTRAINT relation_vectors_relation_fkey FOREIGN KEY (src, tgt)
    REFERENCES relations (src, tgt) ON DELETE CASCADE;
CREATE TABLE chunk_vectors_next (LIKE chunk_vectors INCLUDING DEFAULTS INCLUDING COMMENTS);
ALTER TABLE chunk_vectors_next ALTER COLUMN embedding TYPE vector({dim});
ALTER TABLE chunk_vectors_next ADD COLUMN content_md5 text NOT NULL;
ALTER TABLE chunk_vectors_next ADD CONSTRAINT chunk_vectors_next_pkey PRIMARY KEY (chunk_id);
ALTER TABLE chunk_vectors_next ADD CONSTRAINT chunk_vectors_chunk_id_fkey FOREIGN KEY (chunk_id)
    REFERENCES text_chunks (id) ON DELETE CASCADE;
COMMENT ON TABLE entity_vectors_next IS 'Entity embeddings of the re-embed in progress (see reembed_state)';
COMMENT ON TABLE relation_vectors_next IS 'Relation embeddings of the re-embed in progress (see reembed_state)';
COMMENT ON TABLE chunk_vectors_next IS 'Chunk embeddings of the re-embed in progress (see reembed_state)';
COMMENT ON COLUMN chunk_vectors_next.content_md5 IS 'MD5 of the chunk text the vector was computed from';

-- name: discard
-- Forget the re-embed in progress and everything it staged.
DROP TABLE IF EXISTS entity_vectors_next, relation_vectors_next, chunk_vectors_next;
DELETE FROM reembed_state;

-- name: counts
-- Per live vector table: its rows, and those without a current staged vector.
SELECT
    (SELECT count(*) FROM entity_vectors) AS entities_total,
    (SELECT count(*) FROM entity_vectors v WHERE NOT EXISTS (
        SELECT 1 FROM entity_vectors_next n WHERE n.name = v.name AND n.content = v.content
    )) AS entities_pending,
    (SELECT count(*) FROM relation_vectors) AS relations_total,
    (SELECT count(*) FROM relation_vectors v WHERE NOT EXISTS (
        SELECT 1 FROM relation_vectors_next n
        WHERE n.src = v.src AND n.tgt = v.tgt AND n.content = v.content
    )) AS relations_pending,
    (SELECT count(*) FROM chunk_vectors) AS chunks_total,
    (SELECT count(*) FROM chunk_vectors v JOIN text_chunks c ON c.id = v.chunk_id WHERE NOT EXISTS (
        SELECT 1 FROM chunk_vectors_next n WHERE n.chunk_id = v.chunk_id AND n.content_md5 = md5(c.content)
    )) AS chunks_pending;

-- name: pending_entities
-- The next entity vectors after key $1 (in key order) without a current staged
-- vector, at most $2, with the text to embed.
SELECT v.name AS k1, '' AS k2, v.content
FROM entity_vectors v
WHERE v.name > $1 AND NOT EXISTS (
    SELECT 1 FROM entity_vectors_next n WHERE n.name = v.name AND n.content = v.content
)
ORDER BY v.name
LIMIT $2;

-- name: pending_relations
-- The next relation vectors after key ($1, $2) without a current staged
-- vector, at most $3, with the text to embed.
SELECT v.src AS k1, v.tgt AS k2, v.content
FROM relation_vectors v
WHERE (v.src, v.tgt) > ($1, $2) AND NOT EXISTS (
    SELECT 1 FROM relation_vectors_next n WHERE n.src = v.src AND n.tgt = v.tgt AND n.content = v.content
)
ORDER BY v.src, v.tgt
LIMIT $3;

-- name: pending_chunks
-- The next chunk vectors after key $1 without a current staged vector, at
-- most $2, with the chunk text to embed.
SELECT v.chunk_id AS k1, '' AS k2, c.content
FROM chunk_vectors v
JOIN text_chunks c ON c.id = v.chunk_id
WHERE v.chunk_id > $1 AND NOT EXISTS (
    SELECT 1 FROM chunk_vectors_next n WHERE n.chunk_id = v.chunk_id AND n.content_md5 = md5(c.content)
)
ORDER BY v.chunk_id
LIMIT $2;

-- name: stage_entities
-- Stage entity vectors (parallel arrays: name, embedded text, vector); rows
-- whose entity was deleted meanwhile are skipped (the entity row is key-share
-- locked so it cannot vanish before the foreign key check). The lock is taken in a
-- CTE: Citus (14.0) cannot push down the insert of a select that joins the table itself.
WITH locked AS MATERIALIZED (
    SELECT e.name FROM entities e WHERE e.name = ANY($1::text[]) ORDER BY e.name FOR KEY SHARE
)
INSERT INTO entity_vectors_next AS n (name, content, embedding)
SELECT u.name, u.content, u.embedding
FROM unnest($1::text[], $2::text[], $3::vector[]) AS u(name, content, embedding)
JOIN locked e ON e.name = u.name
ORDER BY u.name
ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at;

-- name: stage_relations
-- Stage relation vectors (parallel arrays: src, tgt, embedded text, vector);
-- rows whose relation was deleted meanwhile are skipped (locked as stage_entities does).
WITH locked AS MATERIALIZED (
    SELECT r.src, r.tgt
    FROM relations r JOIN unnest($1::text[], $2::text[]) AS k(src, tgt) ON r.src = k.src AND r.tgt = k.tgt
    ORDER BY r.src, r.tgt
    FOR KEY SHARE OF r
)
INSERT INTO relation_vectors_next AS n (src, tgt, content, embedding)
SELECT u.src, u.tgt, u.content, u.embedding
FROM unnest($1::text[], $2::text[], $3::text[], $4::vector[]) AS u(src, tgt, content, embedding)
JOIN locked r ON r.src = u.src AND r.tgt = u.tgt
ORDER BY u.src, u.tgt
ON CONFLICT (src, tgt) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at;

-- name: stage_chunks
-- Stage chunk vectors (parallel arrays: chunk id, embedded text, vector),
-- recording the MD5 of the text; chunks deleted meanwhile are skipped.
INSERT INTO chunk_vectors_next AS n (chunk_id, content_md5, embedding)
SELECT u.id, md5(u.content), u.embedding
FROM unnest($1::text[], $2::text[], $3::vector[]) AS u(id, content, embedding)
JOIN text_chunks c ON c.id = u.id
ORDER BY u.id
FOR KEY SHARE OF c
ON CONFLICT (chunk_id) DO UPDATE SET content_md5 = EXCLUDED.content_md5, embedding = EXCLUDED.embedding;

-- name: staged_chunk_vectors
-- The staged vectors of the chunk ids given; ids not staged are skipped.
SELECT n.chunk_id, n.embedding::real[] AS embedding
FROM chunk_vectors_next n
WHERE n.chunk_id = ANY($1::text[]);

-- name: hnsw_vector
-- The cosine HNSW index of a shadow table of at most 2,000 dimensions, built
-- once its rows are staged (before the swap, which then only renames it).
CREATE INDEX IF NOT EXISTS {index} ON {table} USING hnsw (embedding vector_cosine_ops)
WITH (m = 16, ef_construction = 64);

-- name: hnsw_halfvec
-- The same above 2,000 dimensions: on the halfvec({dim}) cast of the column.
CREATE INDEX IF NOT EXISTS {index} ON {table} USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops)
WITH (m = 16, ef_construction = 64);

-- name: lock_for_swap
-- Keep writers out of the staged tables and their parents until the swap
-- commits; readers go on with the live vectors.
LOCK TABLE text_chunks, entities, relations, chunk_vectors, entity_vectors, relation_vectors
    IN SHARE ROW EXCLUSIVE MODE;

-- name: swap
-- Replace the live vector tables by the shadows: staged rows whose live row is
-- gone are dropped, the old tables go, the shadows take their names, their
-- keys' (renaming a key's index renames the key: Citus cannot rename constraints)
-- and indexes' names and their comments, and the re-embed is over. Readers wait
-- only for this transaction's commit.
DELETE FROM entity_vectors_next n WHERE NOT EXISTS (SELECT 1 FROM entity_vectors v WHERE v.name = n.name);
DELETE FROM relation_vectors_next n
WHERE NOT EXISTS (SELECT 1 FROM relation_vectors v WHERE v.src = n.src AND v.tgt = n.tgt);
DELETE FROM chunk_vectors_next n WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = n.chunk_id);
DROP TABLE entity_vectors, relation_vectors, chunk_vectors;
ALTER TABLE entity_vectors_next RENAME TO entity_vectors;
ALTER INDEX entity_vectors_next_pkey RENAME TO entity_vectors_pkey;
ALTER INDEX entity_vectors_next_hnsw RENAME TO entity_vectors_embedding_hnsw;
COMMENT ON TABLE entity_vectors IS 'Entity embeddings (HNSW, cosine)';
ALTER TABLE relation_vectors_next RENAME TO relation_vectors;
ALTER INDEX relation_vectors_next_pkey RENAME TO relation_vectors_pkey;
ALTER INDEX relation_vectors_next_hnsw RENAME TO relation_vectors_embedding_hnsw;
COMMENT ON TABLE relation_vectors IS 'Relation embeddings (HNSW, cosine)';
ALTER TABLE chunk_vectors_next RENAME TO chunk_vectors;
ALTER TABLE chunk_vectors DROP COLUMN content_md5;
ALTER INDEX chunk_vectors_next_pkey RENAME TO chunk_vectors_pkey;
ALTER INDEX chunk_vectors_next_hnsw RENAME TO chunk_vectors_embedding_hnsw;
COMMENT ON TABLE chunk_vectors IS 'Chunk embeddings (HNSW, cosine)';
DELETE FROM reembed_state;
