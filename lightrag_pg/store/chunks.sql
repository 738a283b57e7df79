-- SQL of the chunk store: text_chunks and chunk_vectors.

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
        updated_at = now()
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

-- name: search_chunks
-- Nearest chunks to a query vector above a cosine threshold, best first.
WITH hits AS MATERIALIZED (
    SELECT chunk_id, embedding <=> $1::vector AS distance
    FROM chunk_vectors
    WHERE embedding <=> $1::vector <= 1 - $2::float8
    ORDER BY embedding <=> $1::vector
    LIMIT $3
)
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       1 - h.distance AS similarity
FROM hits h JOIN text_chunks c ON c.id = h.chunk_id
ORDER BY h.distance, c.id;

-- name: chunks_with_similarity
-- Chunks by id with their cosine similarity to a query vector (NULL without a vector).
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       1 - (v.embedding <=> $2::vector) AS similarity
FROM text_chunks c
LEFT JOIN chunk_vectors v ON v.chunk_id = c.id
WHERE c.id = ANY($1::text[]);

-- name: picked_chunks
-- The chunks of a query, in one statement: the chunks nearest to $1 (at most $3,
-- similarity >= $2), then the VECTOR pick of the chunks behind the kept entities
-- ($4 item ranks, $5 chunk ids: each entity's source ids in order) and relations
-- ($6, $7), merged round-robin (vector, entity, relation; the first occurrence
-- wins) and cut to the first $9 (NULL: all). Each side's candidates: blank ids
-- dropped, a chunk kept under the first item listing it, ordered by item, then
-- by how many items list it (desc), then position; relations skip the chunks
-- picked for entities and count only items left with a chunk. Of the candidates
-- that exist and have a vector, the floor($8 * items / 2) most similar to $1 are
-- picked (ties in candidate order). One row per chunk, or a single row of NULLs
-- when there are none; needs_weight is true when a side had candidates but the
-- VECTOR pick chose none (the caller then picks by WEIGHT).
WITH vector_hits AS MATERIALIZED (
    SELECT chunk_id, embedding <=> $1::vector AS distance
    FROM chunk_vectors
    WHERE embedding <=> $1::vector <= 1 - $2::float8
    ORDER BY embedding <=> $1::vector
    LIMIT $3
),
vector_chunks AS (
    SELECT row_number() OVER (ORDER BY h.distance, c.id) AS idx, c.id, 1 - h.distance AS similarity
    FROM vector_hits h JOIN text_chunks c ON c.id = h.chunk_id
),
entity_listed AS (
    SELECT u.item, u.id, u.pos,
           count(*) OVER (PARTITION BY u.id) AS listed,
           row_number() OVER (PARTITION BY u.id ORDER BY u.pos) AS occurrence
    FROM unnest($4::int[], $5::text[]) WITH ORDINALITY AS u(item, id, pos)
    WHERE btrim(u.id, E' \t\n\r\f\v') <> ''
),
entity_candidates AS (
    SELECT l.item, l.id, l.pos, l.listed, 1 - (v.embedding <=> $1::vector) AS similarity
    FROM entity_listed l
    JOIN text_chunks c ON c.id = l.id
    LEFT JOIN chunk_vectors v ON v.chunk_id = l.id
    WHERE l.occurrence = 1
),
entity_picks AS (
    SELECT id, idx FROM (
        SELECT id, row_number() OVER (ORDER BY similarity DESC, item, listed DESC, pos) AS idx
        FROM entity_candidates WHERE similarity IS NOT NULL
    ) ranked
    WHERE idx <= ($8 * (SELECT count(DISTINCT item) FROM entity_listed)) / 2
),
relation_listed AS (
    SELECT u.item, u.id, u.pos,
           count(*) OVER (PARTITION BY u.id) AS listed,
           row_number() OVER (PARTITION BY u.id ORDER BY u.pos) AS occurrence
    FROM unnest($6::int[], $7::text[]) WITH ORDINALITY AS u(item, id, pos)
    WHERE btrim(u.id, E' \t\n\r\f\v') <> '' AND u.id NOT IN (SELECT id FROM entity_picks)
),
relation_candidates AS (
    SELECT l.item, l.id, l.pos, l.listed, 1 - (v.embedding <=> $1::vector) AS similarity
    FROM relation_listed l
    JOIN text_chunks c ON c.id = l.id
    LEFT JOIN chunk_vectors v ON v.chunk_id = l.id
    WHERE l.occurrence = 1
),
relation_picks AS (
    SELECT id, idx FROM (
        SELECT id, row_number() OVER (ORDER BY similarity DESC, item, listed DESC, pos) AS idx
        FROM relation_candidates WHERE similarity IS NOT NULL
    ) ranked
    WHERE idx <= ($8 * (SELECT count(DISTINCT item) FROM relation_listed WHERE occurrence = 1)) / 2
),
merged AS (
    SELECT DISTINCT ON (id) id, idx, side
    FROM (
        SELECT id, idx, 0 AS side FROM vector_chunks
        UNION ALL
        SELECT id, idx, 1 FROM entity_picks
        UNION ALL
        SELECT id, idx, 2 FROM relation_picks
    ) lists
    ORDER BY id, idx, side
),
ranked AS (
    SELECT id, row_number() OVER (ORDER BY idx, side) AS rank, count(*) OVER () AS merged_count
    FROM merged
    ORDER BY idx, side
    LIMIT $9
),
flags AS (
    SELECT (EXISTS (SELECT 1 FROM entity_candidates) AND NOT EXISTS (SELECT 1 FROM entity_picks))
        OR (EXISTS (SELECT 1 FROM relation_candidates) AND NOT EXISTS (SELECT 1 FROM relation_picks))
        AS needs_weight
)
SELECT f.needs_weight, r.merged_count, c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content,
       c.file_path, c.created_at, 1 - (v.embedding <=> $1::vector) AS similarity
FROM flags f
LEFT JOIN ranked r ON true
LEFT JOIN text_chunks c ON c.id = r.id
LEFT JOIN chunk_vectors v ON v.chunk_id = r.id
ORDER BY r.rank;
