-- SQL of the chunk store: text_chunks and chunk_vectors.
-- {halfvec}: the cast that matches the HNSW index (empty up to 2,000 dimensions,
-- ::halfvec(dim) above), filled per workspace by sqlfile.load_vector_queries.

-- name: upsert_chunks
-- Insert or replace chunks with their vectors; the arrays are parallel.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::vector[])
        AS u(id, doc_id, chunk_order_index, tokens, content, file_path, embedding)
), chunks AS (
    INSERT INTO text_chunks AS c (id, doc_id, chunk_order_index, tokens, content, file_path)
    SELECT id, doc_id, chunk_order_index, tokens, content, file_path FROM rows ORDER BY id
    ON CONFLICT (id) DO UPDATE SET
        doc_id = EXCLUDED.doc_id, chunk_order_index = EXCLUDED.chunk_order_index,
        tokens = EXCLUDED.tokens, content = EXCLUDED.content, file_path = EXCLUDED.file_path,
        updated_at = EXCLUDED.updated_at
    RETURNING c.id
)
INSERT INTO chunk_vectors AS v (chunk_id, embedding)
SELECT r.id, r.embedding FROM rows r JOIN chunks c USING (id) ORDER BY r.id
ON CONFLICT (chunk_id) DO UPDATE SET embedding = EXCLUDED.embedding;

-- name: chunks_by_ids
-- Chunks in the order of the ids given; unknown ids are skipped.
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at
FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)
JOIN text_chunks c ON c.id = i.id
ORDER BY i.ord;

-- name: chunk_vectors_by_ids
-- The stored vectors of the chunk ids given; unknown ids are skipped.
SELECT v.chunk_id, v.embedding::real[] AS embedding
FROM chunk_vectors v
WHERE v.chunk_id = ANY($1::text[]);

-- name: search_chunks
-- Nearest chunks to a query vector above a cosine threshold, best first; of equidistant
-- chunks at the cut, the first by id (twice $3 read, as retrieval's nearest_hits).
WITH hits AS MATERIALIZED (
    SELECT chunk_id, distance FROM (
        SELECT chunk_id, embedding{halfvec} <=> $1::vector{halfvec} AS distance
        FROM chunk_vectors
        WHERE embedding{halfvec} <=> $1::vector{halfvec} < 1 - $2::float8
        ORDER BY embedding{halfvec} <=> $1::vector{halfvec}
        LIMIT 2 * $3
    ) nearest
    ORDER BY distance, chunk_id
    LIMIT $3
)
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       1 - h.distance AS similarity
FROM hits h JOIN text_chunks c ON c.id = h.chunk_id
ORDER BY h.distance, c.id;

-- name: chunks_with_similarity
-- Chunks by id with their cosine similarity to a query vector (NULL without a vector).
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       1 - (v.embedding{halfvec} <=> $2::vector{halfvec}) AS similarity
FROM text_chunks c
LEFT JOIN chunk_vectors v ON v.chunk_id = c.id
WHERE c.id = ANY($1::text[]);

-- name: any_chunk
-- Whether the workspace holds any chunk (false: no document was processed yet).
SELECT EXISTS (SELECT 1 FROM text_chunks);
