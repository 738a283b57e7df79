-- SQL of the graph store (entities and relations). Every statement handles a
-- whole batch, given as parallel arrays, in one round trip. List-valued columns
-- (source_ids, file_paths) come as jsonb[], one JSON list per row.

-- name: entities_by_names
-- Entities with their degree, in the order of the names given; unknown names are skipped.
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, e.degree
FROM unnest($1::text[]) WITH ORDINALITY AS n(name, ord)
JOIN entities e ON e.name = n.name
ORDER BY n.ord;

-- name: edges_of
-- Every relation touching any of the given entities, with its edge degree (the sum
-- of the endpoints' stored degrees).
WITH n AS (SELECT DISTINCT name FROM unnest($1::text[]) AS u(name)),
hit AS (
    SELECT r.src, r.tgt FROM relations r JOIN n ON r.src = n.name
    UNION
    SELECT r.src, r.tgt FROM relations r JOIN n ON r.tgt = n.name
)
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, es.degree + et.degree AS degree
FROM hit
JOIN relations r USING (src, tgt)
JOIN entities es ON es.name = r.src
JOIN entities et ON et.name = r.tgt
ORDER BY r.src, r.tgt;

-- name: write_entities
-- Optimistic merge write of entities, in one statement. Each row ($1-$7) carries the
-- version it was computed from. A row read at version v > 0 is updated only if the
-- newest committed row is still at v: an UPDATE re-checks its condition on the newest
-- row after waiting for a concurrent writer, so a row changed or deleted since the
-- read is left alone (never created again from what was read before the delete). Only
-- rows never seen (version 0) are inserted, and only if nobody created them meanwhile.
-- No locking CTE orders the updates (Citus plans one through intermediate results
-- that break on these parameters); a deadlock between two writers rolls one round
-- back, and the writer runs it again. For the rows written, and only those, it also
-- stores the new vector ($8 its text, $9 its values; NULL: the vector stays), records
-- the fragments ($10-$16) and, unless $17 is NULL, links document $17.
-- Returns the names written; the others must be merged again.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::int[],
                         $7::int[], $8::text[], $9::vector[])
        AS u(name, entity_type, description, source_ids, file_paths, version, context_tokens,
             vector_content, embedding)
), updated AS (
    UPDATE entities e SET
        entity_type = u.entity_type,
        description = u.description,
        context_tokens = u.context_tokens,
        source_ids = ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
        file_paths = ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
        version = u.version + 1,
        updated_at = now()
    FROM rows u
    WHERE e.name = u.name AND u.version > 0 AND e.version = u.version
    RETURNING e.name
), inserted AS (
    INSERT INTO entities (name, entity_type, description, source_ids, file_paths, version, context_tokens)
    SELECT u.name, u.entity_type, u.description,
           ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
           ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
           1, u.context_tokens
    FROM rows u
    WHERE u.version = 0
    ORDER BY u.name COLLATE "C"
    ON CONFLICT (name) DO NOTHING
    RETURNING name
), written AS (
    SELECT name FROM updated UNION ALL SELECT name FROM inserted
), vectors AS (
    INSERT INTO entity_vectors AS v (name, content, embedding)
    SELECT u.name, u.vector_content, u.embedding FROM rows u JOIN written w USING (name)
    WHERE u.embedding IS NOT NULL
    ORDER BY u.name COLLATE "C"
    ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
        updated_at = EXCLUDED.updated_at
), fragments AS (
    INSERT INTO entity_fragments (entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
    SELECT f.* FROM unnest($10::text[], $11::text[], $12::int[], $13::text[], $14::text[], $15::text[],
                           $16::text[])
        AS f(entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
    JOIN written w ON w.name = f.entity_name
    ORDER BY f.entity_name COLLATE "C", f.chunk_id COLLATE "C", f.seq
    ON CONFLICT DO NOTHING
), links AS (
    INSERT INTO doc_entities (doc_id, entity_name)
    SELECT $17::text, w.name FROM written w WHERE $17::text IS NOT NULL
    ORDER BY w.name COLLATE "C"
    ON CONFLICT DO NOTHING
)
SELECT name FROM written;

-- name: write_relations
-- Optimistic merge write of relations, in one statement; see write_entities. First
-- the missing endpoints ($21-$27, with their vectors $28, $29) are created (existing
-- ones are untouched), then the relations ($1-$9) are written under the version check
-- (updated at the version read, or inserted if never seen; both endpoints must exist), with, for the relations written, their new vectors
-- ($10, $11) and fragments ($12-$20); document $30 (unless NULL) is linked to the
-- relations written and the endpoints created. Endpoints come first because the
-- result reads the endpoints created before the relations written, and a reader
-- drives a data-modifying WITH query: every writer takes entity rows before relation
-- rows, so concurrent merges cannot deadlock.
-- Returns the endpoints created (kind 'entity', tgt NULL) and the pairs written
-- (kind 'relation').
WITH ends AS (
    SELECT * FROM unnest($21::text[], $22::text[], $23::text[], $24::jsonb[], $25::jsonb[], $26::int[],
                         $27::int[], $28::text[], $29::vector[])
        AS u(name, entity_type, description, source_ids, file_paths, version, context_tokens,
             vector_content, embedding)
), created AS (
    INSERT INTO entities (name, entity_type, description, source_ids, file_paths, version, context_tokens)
    SELECT u.name, u.entity_type, u.description,
           ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
           ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
           1, u.context_tokens
    FROM ends u
    ORDER BY u.name COLLATE "C"
    ON CONFLICT (name) DO NOTHING
    RETURNING name
), end_vectors AS (
    INSERT INTO entity_vectors AS v (name, content, embedding)
    SELECT u.name, u.vector_content, u.embedding FROM ends u JOIN created c USING (name)
    WHERE u.embedding IS NOT NULL
    ORDER BY u.name COLLATE "C"
    ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
        updated_at = EXCLUDED.updated_at
), end_links AS (
    INSERT INTO doc_entities (doc_id, entity_name)
    SELECT $30::text, c.name FROM created c WHERE $30::text IS NOT NULL
    ORDER BY c.name COLLATE "C"
    ON CONFLICT DO NOTHING
), rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::jsonb[],
                         $7::jsonb[], $8::int[], $9::int[], $10::text[], $11::vector[])
        AS u(src, tgt, keywords, description, weight, source_ids, file_paths, version, context_tokens,
             vector_content, embedding)
), updated AS (
    UPDATE relations r SET
        keywords = u.keywords,
        description = u.description,
        context_tokens = u.context_tokens,
        weight = u.weight,
        source_ids = ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
        file_paths = ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
        version = u.version + 1,
        updated_at = now()
    FROM rows u
    WHERE r.src = u.src AND r.tgt = u.tgt AND u.version > 0 AND r.version = u.version
    RETURNING r.src, r.tgt
), inserted AS (
    INSERT INTO relations (src, tgt, keywords, description, weight, source_ids, file_paths, version,
                           context_tokens)
    SELECT u.src, u.tgt, u.keywords, u.description, u.weight,
           ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
           ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
           1, u.context_tokens
    FROM rows u
    WHERE u.version = 0
    ORDER BY u.src COLLATE "C", u.tgt COLLATE "C"
    ON CONFLICT (src, tgt) DO NOTHING
    RETURNING src, tgt
), written AS (
    SELECT src, tgt FROM updated UNION ALL SELECT src, tgt FROM inserted
), vectors AS (
    INSERT INTO relation_vectors AS v (src, tgt, content, embedding)
    SELECT u.src, u.tgt, u.vector_content, u.embedding FROM rows u JOIN written w USING (src, tgt)
    WHERE u.embedding IS NOT NULL
    ORDER BY u.src COLLATE "C", u.tgt COLLATE "C"
    ON CONFLICT (src, tgt) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding,
        updated_at = EXCLUDED.updated_at
), fragments AS (
    INSERT INTO relation_fragments (src, tgt, chunk_id, seq, doc_id, keywords, description, weight,
                                    file_path)
    SELECT f.* FROM unnest($12::text[], $13::text[], $14::text[], $15::int[], $16::text[], $17::text[],
                           $18::text[], $19::float8[], $20::text[])
        AS f(src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
    JOIN written w ON w.src = f.src AND w.tgt = f.tgt
    ORDER BY f.src COLLATE "C", f.tgt COLLATE "C", f.chunk_id COLLATE "C", f.seq
    ON CONFLICT DO NOTHING
), links AS (
    INSERT INTO doc_relations (doc_id, src, tgt)
    SELECT $30::text, w.src, w.tgt FROM written w WHERE $30::text IS NOT NULL
    ORDER BY w.src COLLATE "C", w.tgt COLLATE "C"
    ON CONFLICT DO NOTHING
)
SELECT 'entity' AS kind, c.name AS src, NULL::text AS tgt FROM created c
UNION ALL
SELECT 'relation', w.src, w.tgt FROM written w;

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

-- name: entity_states
-- Current state of each name before a merge: the row, whether document $2 already
-- merged into it, the text its stored vector was computed from, and whether it holds
-- contributions merged before fragments were recorded (a link without fragments).
-- When $3, also the stored fragments (a JSON list of entity_fragments rows, in
-- chunk and seq order) of each row a merge rebuilds from them: stored, not linked to
-- $2 and without unrecorded contributions; read in the same snapshot as the version,
-- so a fragment added since makes the versioned write fail.
SELECT n.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, 0::bigint AS degree,
       e.name IS NOT NULL AS present, d.doc_id IS NOT NULL AS linked,
       v.content AS vector_content, u.unrecorded,
       CASE WHEN $3::bool AND e.name IS NOT NULL AND d.doc_id IS NULL AND NOT u.unrecorded THEN (
           SELECT jsonb_agg(to_jsonb(f) ORDER BY f.chunk_id COLLATE "C", f.seq)
           FROM entity_fragments f WHERE f.entity_name = n.name
       ) END AS fragments
FROM unnest($1::text[]) AS n(name)
LEFT JOIN entities e ON e.name = n.name
LEFT JOIN entity_vectors v ON v.name = n.name
LEFT JOIN doc_entities d ON d.doc_id = $2 AND d.entity_name = n.name
CROSS JOIN LATERAL (
    SELECT EXISTS (
        SELECT l.doc_id FROM doc_entities l WHERE l.entity_name = n.name
        EXCEPT
        SELECT f.doc_id FROM entity_fragments f WHERE f.entity_name = n.name
    ) AS unrecorded
) u;

-- name: relation_states
-- Current state of each pair before a merge: the row, whether document $3 already merged
-- into it, the text its stored vector was computed from, whether it holds contributions
-- merged before fragments were recorded, and whether each endpoint exists. When $4,
-- also the stored fragments of the rows a merge rebuilds; see entity_states.
SELECT p.src, p.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, 0::bigint AS degree,
       r.src IS NOT NULL AS present, d.doc_id IS NOT NULL AS linked,
       v.content AS vector_content, u.unrecorded,
       EXISTS (SELECT 1 FROM entities e WHERE e.name = p.src) AS src_exists,
       EXISTS (SELECT 1 FROM entities e WHERE e.name = p.tgt) AS tgt_exists,
       CASE WHEN $4::bool AND r.src IS NOT NULL AND d.doc_id IS NULL AND NOT u.unrecorded THEN (
           SELECT jsonb_agg(to_jsonb(f) ORDER BY f.chunk_id COLLATE "C", f.seq)
           FROM relation_fragments f WHERE f.src = p.src AND f.tgt = p.tgt
       ) END AS fragments
FROM unnest($1::text[], $2::text[]) AS p(src, tgt)
LEFT JOIN relations r ON r.src = p.src AND r.tgt = p.tgt
LEFT JOIN relation_vectors v ON v.src = p.src AND v.tgt = p.tgt
LEFT JOIN doc_relations d ON d.doc_id = $3 AND d.src = p.src AND d.tgt = p.tgt
CROSS JOIN LATERAL (
    SELECT EXISTS (
        SELECT l.doc_id FROM doc_relations l WHERE l.src = p.src AND l.tgt = p.tgt
        EXCEPT
        SELECT f.doc_id FROM relation_fragments f WHERE f.src = p.src AND f.tgt = p.tgt
    ) AS unrecorded
) u;

-- name: unsummarized
-- Rows still described by their fragments joined although they have at least $1
-- distinct ones: their summary is due. An indexing run summarises the rows it merged
-- after all its merges; a run that stopped in between leaves such rows.
SELECT e.name AS src, NULL::text AS tgt FROM entities e
WHERE strpos(e.description, '<SEP>') > 0
  AND (SELECT count(DISTINCT f.description) FROM entity_fragments f WHERE f.entity_name = e.name) >= $1
UNION ALL
SELECT r.src, r.tgt FROM relations r
WHERE strpos(r.description, '<SEP>') > 0
  AND (SELECT count(DISTINCT f.description) FROM relation_fragments f
       WHERE f.src = r.src AND f.tgt = r.tgt) >= $1;

-- name: entity_fragments_of
-- Every fragment of the given entities, except those of the documents in $2.
SELECT f.entity_name, f.chunk_id, f.seq, f.doc_id, f.entity_type, f.description, f.file_path
FROM entity_fragments f
WHERE f.entity_name = ANY($1::text[]) AND f.doc_id <> ALL($2::text[])
ORDER BY f.entity_name COLLATE "C", f.chunk_id COLLATE "C", f.seq;

-- name: relation_fragments_of
-- Every fragment of the given canonical pairs, except those of the documents in $3.
SELECT f.src, f.tgt, f.chunk_id, f.seq, f.doc_id, f.keywords, f.description, f.weight, f.file_path
FROM unnest($1::text[], $2::text[]) AS p(src, tgt)
JOIN relation_fragments f ON f.src = p.src AND f.tgt = p.tgt
WHERE f.doc_id <> ALL($3::text[])
ORDER BY f.src COLLATE "C", f.tgt COLLATE "C", f.chunk_id COLLATE "C", f.seq;

-- name: add_entity_fragments
-- Record what chunks said about entities (parallel arrays); a fragment already recorded is kept.
INSERT INTO entity_fragments (entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
    AS u(entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
ORDER BY u.entity_name COLLATE "C", u.chunk_id COLLATE "C", u.seq
ON CONFLICT DO NOTHING;

-- name: add_relation_fragments
-- Record what chunks said about relations (canonical pairs); a fragment already recorded is kept.
INSERT INTO relation_fragments (src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
                     $8::float8[], $9::text[])
    AS u(src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
ORDER BY u.src COLLATE "C", u.tgt COLLATE "C", u.chunk_id COLLATE "C", u.seq
ON CONFLICT DO NOTHING;

-- name: entities_touched_by_docs
-- The entities the documents in $1 contributed to (by fragment or by link), with
-- their stored vector text and whether they hold contributions of any document
-- merged before fragments were recorded (a link without fragments).
WITH touched AS (
    SELECT entity_name AS name FROM entity_fragments WHERE doc_id = ANY($1::text[])
    UNION
    SELECT entity_name FROM doc_entities WHERE doc_id = ANY($1::text[])
)
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, 0::bigint AS degree, v.content AS vector_content,
       EXISTS (
           SELECT l.doc_id FROM doc_entities l WHERE l.entity_name = e.name
           EXCEPT
           SELECT f.doc_id FROM entity_fragments f WHERE f.entity_name = e.name
       ) AS unrecorded
FROM touched t
JOIN entities e ON e.name = t.name
LEFT JOIN entity_vectors v ON v.name = e.name
ORDER BY e.name COLLATE "C";

-- name: relations_touched_by_docs
-- The relations the documents in $1 contributed to; see entities_touched_by_docs.
WITH touched AS (
    SELECT src, tgt FROM relation_fragments WHERE doc_id = ANY($1::text[])
    UNION
    SELECT src, tgt FROM doc_relations WHERE doc_id = ANY($1::text[])
)
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, 0::bigint AS degree, v.content AS vector_content,
       EXISTS (
           SELECT l.doc_id FROM doc_relations l WHERE l.src = r.src AND l.tgt = r.tgt
           EXCEPT
           SELECT f.doc_id FROM relation_fragments f WHERE f.src = r.src AND f.tgt = r.tgt
       ) AS unrecorded
FROM touched t
JOIN relations r ON r.src = t.src AND r.tgt = t.tgt
LEFT JOIN relation_vectors v ON v.src = r.src AND v.tgt = r.tgt
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C";

-- name: delete_entities_if_unchanged
-- Delete entities whose stored version still equals the one given (their relations,
-- vectors, links and fragments go with them); returns the names deleted.
DELETE FROM entities e
USING unnest($1::text[], $2::int[]) AS u(name, version)
WHERE e.name = u.name AND e.version = u.version
RETURNING e.name;

-- name: delete_relations_if_unchanged
-- Delete relations whose stored version still equals the one given; returns the pairs deleted.
DELETE FROM relations r
USING unnest($1::text[], $2::text[], $3::int[]) AS u(src, tgt, version)
WHERE r.src = u.src AND r.tgt = u.tgt AND r.version = u.version
RETURNING r.src, r.tgt;

-- name: lock_entities_for_edit
-- Lock the existing rows among the given names for a graph edit (FOR UPDATE: the
-- edit may delete them; no relation can be added to them until it commits), in
-- name order; returns their versions.
SELECT e.name, e.version FROM entities e
WHERE e.name = ANY($1::text[])
ORDER BY e.name COLLATE "C"
FOR UPDATE;

-- name: lock_relations_for_edit
-- Lock, in pair order, the relations among the canonical pairs ($1, $2) and every
-- relation touching the names $3; returns their versions, so an edit can check that
-- the set it planned on has not changed.
SELECT r.src, r.tgt, r.version FROM relations r
WHERE (r.src, r.tgt) IN (SELECT * FROM unnest($1::text[], $2::text[]))
   OR r.src = ANY($3::text[]) OR r.tgt = ANY($3::text[])
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C"
FOR UPDATE;

-- name: relations_touching
-- Every relation touching any of the names, with the text its stored vector was
-- computed from and whether it holds contributions merged before fragments were recorded.
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, 0::bigint AS degree, v.content AS vector_content,
       EXISTS (
           SELECT l.doc_id FROM doc_relations l WHERE l.src = r.src AND l.tgt = r.tgt
           EXCEPT
           SELECT f.doc_id FROM relation_fragments f WHERE f.src = r.src AND f.tgt = r.tgt
       ) AS unrecorded
FROM relations r
LEFT JOIN relation_vectors v ON v.src = r.src AND v.tgt = r.tgt
WHERE r.src = ANY($1::text[]) OR r.tgt = ANY($1::text[])
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C";

-- name: prepare_manual_fragments
-- Before recording manual edits: create the reserved document $1 that holds them
-- (no status row, so it is never listed or processed) and delete the manual
-- fragments (chunk id $2) of the entities $3 and the canonical pairs ($4, $5),
-- which the edit replaces.
WITH doc AS (
    INSERT INTO full_docs (id, content, file_path) VALUES ($1, '', $2)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), ents AS (
    DELETE FROM entity_fragments f
    WHERE f.entity_name = ANY($3::text[]) AND f.chunk_id = $2
    RETURNING 1
), rels AS (
    DELETE FROM relation_fragments f
    USING unnest($4::text[], $5::text[]) AS p(src, tgt)
    WHERE f.src = p.src AND f.tgt = p.tgt AND f.chunk_id = $2
    RETURNING 1
)
SELECT (SELECT count(*) FROM doc) + (SELECT count(*) FROM ents) + (SELECT count(*) FROM rels);

-- name: move_links
-- Re-key the documents' links of renamed or merged rows: entity links from $1 to $2,
-- relation links from the canonical pairs ($3, $4) to ($5, $6); the old links go
-- with the old rows (by cascade).
WITH ents AS (
    INSERT INTO doc_entities (doc_id, entity_name)
    SELECT l.doc_id, m.new FROM doc_entities l
    JOIN unnest($1::text[], $2::text[]) AS m(old, new) ON l.entity_name = m.old
    ORDER BY 1, 2
    ON CONFLICT DO NOTHING
    RETURNING 1
), rels AS (
    INSERT INTO doc_relations (doc_id, src, tgt)
    SELECT l.doc_id, m.new_src, m.new_tgt FROM doc_relations l
    JOIN unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS m(src, tgt, new_src, new_tgt)
        ON l.src = m.src AND l.tgt = m.tgt
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM ents) + (SELECT count(*) FROM rels);

-- name: delete_entity
-- Delete one entity (its relations, vectors, links and fragments go by cascade);
-- returns its name and how many relations went with it, or nothing if it is unknown.
WITH gone AS (DELETE FROM entities e WHERE e.name = $1 RETURNING e.name)
SELECT g.name, (SELECT count(*) FROM relations r WHERE r.src = $1 OR r.tgt = $1) AS relations
FROM gone g;

-- name: delete_relation
-- Delete one relation (canonical pair) with its vector, links and fragments;
-- returns the pair, or nothing if it is unknown.
DELETE FROM relations r WHERE r.src = $1 AND r.tgt = $2 RETURNING r.src, r.tgt;

-- name: entity_vector
-- The stored vector of an entity: the text it was computed from and its values.
SELECT v.content, v.embedding::real[] AS embedding FROM entity_vectors v WHERE v.name = $1;

-- name: relation_vector
-- The stored vector of a relation (canonical pair); see entity_vector.
SELECT v.content, v.embedding::real[] AS embedding FROM relation_vectors v
WHERE v.src = $1 AND v.tgt = $2;
