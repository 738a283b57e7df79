-- SQL of the entity and relation vector tables.
-- {halfvec}: the cast that matches the HNSW index (empty up to 2,000 dimensions,
-- ::halfvec(dim) above), filled per workspace by sqlfile.load_vector_queries.

-- name: upsert_entity_vectors
-- Insert or replace entity vectors (parallel arrays); the entities must exist.
INSERT INTO entity_vectors AS v (name, content, embedding)
SELECT u.name, u.content, u.embedding
FROM unnest($1::text[], $2::text[], $3::vector[]) AS u(name, content, embedding)
ORDER BY u.name COLLATE "C"
ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at;

-- name: upsert_relation_vectors
-- Insert or replace relation vectors (parallel arrays, canonical pairs).
INSERT INTO relation_vectors AS v (src, tgt, content, embedding)
SELECT u.src, u.tgt, u.content, u.embedding
FROM unnest($1::text[], $2::text[], $3::text[], $4::vector[]) AS u(src, tgt, content, embedding)
ORDER BY u.src COLLATE "C", u.tgt COLLATE "C"
ON CONFLICT (src, tgt) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at;

-- name: search_entities
-- Nearest entities to a query vector above a cosine threshold, with degrees, best first; of
-- equidistant entities at the cut, the first by name (twice $3 read, as retrieval's nearest_hits).
WITH hits AS MATERIALIZED (
    SELECT name, distance FROM (
        SELECT name, embedding{halfvec} <=> $1::vector{halfvec} AS distance
        FROM entity_vectors
        WHERE embedding{halfvec} <=> $1::vector{halfvec} < 1 - $2::float8
        ORDER BY embedding{halfvec} <=> $1::vector{halfvec}
        LIMIT 2 * $3
    ) nearest
    ORDER BY distance, name
    LIMIT $3
)
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, e.degree, 1 - h.distance AS similarity
FROM hits h JOIN entities e ON e.name = h.name
ORDER BY h.distance, e.name;

-- name: search_relations
-- Nearest relations to a query vector above a cosine threshold, with edge degrees (sums of
-- the endpoints' stored degrees), best first; of equidistant relations at the cut, the first
-- by pair (twice $3 read, as retrieval's nearest_hits).
WITH hits AS MATERIALIZED (
    SELECT src, tgt, distance FROM (
        SELECT src, tgt, embedding{halfvec} <=> $1::vector{halfvec} AS distance
        FROM relation_vectors
        WHERE embedding{halfvec} <=> $1::vector{halfvec} < 1 - $2::float8
        ORDER BY embedding{halfvec} <=> $1::vector{halfvec}
        LIMIT 2 * $3
    ) nearest
    ORDER BY distance, src, tgt
    LIMIT $3
)
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at,
       es.degree + et.degree AS degree, 1 - h.distance AS similarity
FROM hits h
JOIN relations r USING (src, tgt)
JOIN entities es ON es.name = r.src
JOIN entities et ON et.name = r.tgt
ORDER BY h.distance, r.src, r.tgt;
