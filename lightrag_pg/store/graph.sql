-- SQL of the graph store (entities and relations). Every statement handles a
-- whole batch, given as parallel arrays, in one round trip. List-valued columns
-- (source_ids, file_paths) come as jsonb[], one JSON list per row.

-- name: entities_by_names
-- Entities with their degree, in the order of the names given; unknown names are skipped.
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, node_degree(e.name) AS degree
FROM unnest($1::text[]) WITH ORDINALITY AS n(name, ord)
JOIN entities e ON e.name = n.name
ORDER BY n.ord;

-- name: edges_of
-- Every relation touching any of the given entities, with its edge degree.
-- Endpoint degrees are counted in one grouped pass over the relations that
-- touch any endpoint, not one look-up per edge.
WITH n AS (SELECT DISTINCT name FROM unnest($1::text[]) AS u(name)),
hit AS (
    SELECT r.src, r.tgt FROM relations r JOIN n ON r.src = n.name
    UNION
    SELECT r.src, r.tgt FROM relations r JOIN n ON r.tgt = n.name
),
ends AS (SELECT src AS name FROM hit UNION SELECT tgt FROM hit),
degree AS (
    SELECT name, count(*) AS d FROM (
        SELECT r.src AS name FROM relations r JOIN ends e ON r.src = e.name
        UNION ALL
        SELECT r.tgt AS name FROM relations r JOIN ends e ON r.tgt = e.name
    ) touching
    GROUP BY name
)
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, ds.d + dt.d AS degree
FROM hit
JOIN relations r USING (src, tgt)
JOIN degree ds ON ds.name = r.src
JOIN degree dt ON dt.name = r.tgt
ORDER BY r.src, r.tgt;

-- name: upsert_entities_if_unchanged
-- Optimistic merge write: each row carries the version it was computed from;
-- a row is written only if nobody changed it since (0 means "did not exist").
-- Returns the names written; the others must be merged again.
INSERT INTO entities AS e (name, entity_type, description, source_ids, file_paths, version,
                           context_tokens)
SELECT u.name, u.entity_type, u.description,
       ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
       ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
       u.version + 1, u.context_tokens
FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::int[], $7::int[])
    AS u(name, entity_type, description, source_ids, file_paths, version, context_tokens)
ORDER BY u.name COLLATE "C"
ON CONFLICT (name) DO UPDATE SET
    entity_type = EXCLUDED.entity_type,
    description = EXCLUDED.description,
    context_tokens = EXCLUDED.context_tokens,
    source_ids = EXCLUDED.source_ids,
    file_paths = EXCLUDED.file_paths,
    version = EXCLUDED.version,
    updated_at = now()
WHERE e.version + 1 = EXCLUDED.version
RETURNING e.name;

-- name: ensure_entities
-- Create entities that do not exist yet (relation endpoints); existing ones are untouched.
INSERT INTO entities (name, entity_type, description, source_ids, file_paths, version, context_tokens)
SELECT u.name, u.entity_type, u.description,
       ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
       ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
       1, u.context_tokens
FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::int[], $7::int[])
    AS u(name, entity_type, description, source_ids, file_paths, version, context_tokens)
ORDER BY u.name COLLATE "C"
ON CONFLICT (name) DO NOTHING
RETURNING name;

-- name: upsert_relations_if_unchanged
-- Optimistic merge write for relations; see upsert_entities_if_unchanged.
INSERT INTO relations AS r (src, tgt, keywords, description, weight, source_ids, file_paths, version,
                            context_tokens)
SELECT u.src, u.tgt, u.keywords, u.description, u.weight,
       ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
       ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
       u.version + 1, u.context_tokens
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::jsonb[], $7::jsonb[],
             $8::int[], $9::int[])
    AS u(src, tgt, keywords, description, weight, source_ids, file_paths, version, context_tokens)
ORDER BY u.src COLLATE "C", u.tgt COLLATE "C"
ON CONFLICT (src, tgt) DO UPDATE SET
    keywords = EXCLUDED.keywords,
    description = EXCLUDED.description,
    context_tokens = EXCLUDED.context_tokens,
    weight = EXCLUDED.weight,
    source_ids = EXCLUDED.source_ids,
    file_paths = EXCLUDED.file_paths,
    version = EXCLUDED.version,
    updated_at = now()
WHERE r.version + 1 = EXCLUDED.version
RETURNING r.src, r.tgt;

-- name: lock_entities
-- Lock the existing rows among the given names, in name order (so lockers cannot
-- deadlock), for a merge that must not lose to concurrent writers.
SELECT e.name FROM entities e
WHERE e.name = ANY($1::text[])
ORDER BY e.name COLLATE "C"
FOR NO KEY UPDATE;

-- name: lock_relations
-- Lock the existing rows among the given canonical pairs, in pair order; see lock_entities.
SELECT r.src, r.tgt FROM relations r
JOIN unnest($1::text[], $2::text[]) AS p(src, tgt) ON r.src = p.src AND r.tgt = p.tgt
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C"
FOR NO KEY UPDATE OF r;

-- name: entities_for_merge
-- Current state of each name before a merge: the row, whether document $2 already
-- merged into it, and the text its stored vector was computed from.
SELECT n.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, 0::bigint AS degree,
       e.name IS NOT NULL AS present, d.doc_id IS NOT NULL AS linked,
       v.content AS vector_content
FROM unnest($1::text[]) AS n(name)
LEFT JOIN entities e ON e.name = n.name
LEFT JOIN entity_vectors v ON v.name = n.name
LEFT JOIN doc_entities d ON d.doc_id = $2 AND d.entity_name = n.name;

-- name: relations_for_merge
-- Current state of each pair before a merge: the row, whether document $3 already merged
-- into it, the text its stored vector was computed from, and whether each endpoint exists.
SELECT p.src, p.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, 0::bigint AS degree,
       r.src IS NOT NULL AS present, d.doc_id IS NOT NULL AS linked,
       v.content AS vector_content,
       EXISTS (SELECT 1 FROM entities e WHERE e.name = p.src) AS src_exists,
       EXISTS (SELECT 1 FROM entities e WHERE e.name = p.tgt) AS tgt_exists
FROM unnest($1::text[], $2::text[]) AS p(src, tgt)
LEFT JOIN relations r ON r.src = p.src AND r.tgt = p.tgt
LEFT JOIN relation_vectors v ON v.src = p.src AND v.tgt = p.tgt
LEFT JOIN doc_relations d ON d.doc_id = $3 AND d.src = p.src AND d.tgt = p.tgt;
