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

-- name: ranked_context
-- The entities and relations of a query, ranked and cut to their token budgets in
-- one statement. Local side: entities nearest to $1 (the low-level keywords) and
-- every edge touching them, edges ranked by (edge degree, weight) desc, then
-- (src, tgt). Global side: relations nearest to $2 (the high-level keywords) and
-- their endpoints in order of first appearance. Each side's lists are merged
-- round-robin (local first, the first occurrence wins), then a running sum of the
-- stored context_tokens keeps the longest prefix within $5 (entities) and $6
-- (relations) tokens. A NULL vector switches its side off. Rows: kind ('entity'
-- or 'relation'), their rank, and found, the number of merged rows before the cut.
-- Cost: each relations row around the query is read once (edges by one scan of
-- both indexes); degrees are counted inline in one grouped pass over the two
-- relation indexes for all endpoints at once (index-only where the visibility
-- map allows); full rows are fetched only for what is kept.
WITH local_hits AS MATERIALIZED (
    SELECT name, embedding <=> $1::vector AS distance
    FROM entity_vectors
    WHERE embedding <=> $1::vector <= 1 - $3::float8
    ORDER BY embedding <=> $1::vector
    LIMIT $4
),
local_entities AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY h.distance, h.name) AS idx, h.name, 1 - h.distance AS similarity
    FROM local_hits h JOIN entities e ON e.name = h.name
),
local_names AS MATERIALIZED (
    SELECT ARRAY(SELECT name FROM local_entities) AS names
),
local_edges AS MATERIALIZED (
    SELECT r.src, r.tgt, r.weight,
           coalesce(r.context_tokens,
                    (octet_length(r.src) + octet_length(r.tgt) + octet_length(r.description)) / 4 + 12)
               AS tokens
    FROM relations r, local_names l
    WHERE r.src = ANY (l.names) OR r.tgt = ANY (l.names)
),
global_hits AS MATERIALIZED (
    SELECT src, tgt, embedding <=> $2::vector AS distance
    FROM relation_vectors
    WHERE embedding <=> $2::vector <= 1 - $3::float8
    ORDER BY embedding <=> $2::vector
    LIMIT $4
),
global_relations AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY h.distance, h.src, h.tgt) AS idx, h.src, h.tgt,
           1 - h.distance AS similarity,
           coalesce(r.context_tokens,
                    (octet_length(r.src) + octet_length(r.tgt) + octet_length(r.description)) / 4 + 12)
               AS tokens
    FROM global_hits h JOIN relations r USING (src, tgt)
),
global_entities AS (
    SELECT row_number() OVER (ORDER BY min(ends.pos)) AS idx, ends.name
    FROM (
        SELECT src AS name, 2 * idx AS pos FROM global_relations
        UNION ALL
        SELECT tgt, 2 * idx + 1 FROM global_relations
    ) ends
    JOIN entities e ON e.name = ends.name
    GROUP BY ends.name
),
ends AS MATERIALIZED (
    SELECT ARRAY(
        SELECT src FROM local_edges UNION SELECT tgt FROM local_edges
        UNION SELECT src FROM global_relations UNION SELECT tgt FROM global_relations
    ) AS names
),
degrees AS MATERIALIZED (
    SELECT name, count(*) AS degree
    FROM (
        SELECT r.src AS name FROM relations r, ends WHERE r.src = ANY (ends.names)
        UNION ALL
        SELECT r.tgt FROM relations r, ends WHERE r.tgt = ANY (ends.names)
    ) touching
    GROUP BY name
),
local_relations AS MATERIALIZED (
    SELECT row_number() OVER (
               ORDER BY ds.degree + dt.degree DESC, l.weight DESC, l.src, l.tgt
           ) AS idx, l.src, l.tgt, l.tokens, ds.degree + dt.degree AS degree
    FROM local_edges l
    JOIN degrees ds ON ds.name = l.src
    JOIN degrees dt ON dt.name = l.tgt
),
entity_merged AS (
    SELECT DISTINCT ON (name) name, idx, side, similarity
    FROM (
        SELECT name, idx, 0 AS side, similarity FROM local_entities
        UNION ALL
        SELECT name, idx, 1, NULL::float8 FROM global_entities
    ) both_sides
    ORDER BY name, idx, side
),
relation_merged AS (
    SELECT l.src, l.tgt, l.idx, 0 AS side, NULL::float8 AS similarity, l.tokens, l.degree
    FROM local_relations l
    WHERE NOT EXISTS (
        SELECT 1 FROM global_relations g WHERE g.src = l.src AND g.tgt = l.tgt AND g.idx < l.idx
    )
    UNION ALL
    SELECT g.src, g.tgt, g.idx, 1, g.similarity, g.tokens, ds.degree + dt.degree
    FROM global_relations g
    JOIN degrees ds ON ds.name = g.src
    JOIN degrees dt ON dt.name = g.tgt
    WHERE NOT EXISTS (
        SELECT 1 FROM local_relations l WHERE l.src = g.src AND l.tgt = g.tgt AND l.idx <= g.idx
    )
),
entity_cut AS (
    SELECT m.idx, m.side, m.similarity, e.*, coalesce(d.degree, 0) AS degree,
           sum(coalesce(e.context_tokens,
                        (octet_length(e.name) + octet_length(e.entity_type)
                         + octet_length(e.description)) / 4 + 12))
               OVER (ORDER BY m.idx, m.side ROWS UNBOUNDED PRECEDING) AS used,
           row_number() OVER (ORDER BY m.idx, m.side) AS rank,
           count(*) OVER () AS found
    FROM entity_merged m
    JOIN entities e ON e.name = m.name
    LEFT JOIN degrees d ON d.name = m.name
),
relation_cut AS (
    SELECT src, tgt, similarity, degree,
           sum(tokens) OVER (ORDER BY idx, side ROWS UNBOUNDED PRECEDING) AS used,
           row_number() OVER (ORDER BY idx, side) AS rank,
           count(*) OVER () AS found
    FROM relation_merged
)
SELECT 'entity' AS kind, rank, found, name, NULL::text AS tgt, entity_type, NULL::text AS keywords,
       description, NULL::float8 AS weight, source_ids, file_paths, version, created_at, updated_at,
       degree, similarity, context_tokens
FROM entity_cut
WHERE used <= $5 AND $5 > 0
UNION ALL
SELECT 'relation', c.rank, c.found, r.src, r.tgt, NULL, r.keywords, r.description, r.weight,
       r.source_ids, r.file_paths, r.version, r.created_at, r.updated_at, c.degree, c.similarity,
       r.context_tokens
FROM relation_cut c
JOIN relations r ON r.src = c.src AND r.tgt = c.tgt
WHERE c.used <= $6 AND $6 > 0
ORDER BY kind, rank;
