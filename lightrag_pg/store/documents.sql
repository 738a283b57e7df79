-- SQL of the document store: full_docs, doc_status and the per-document
-- entity and relation lists.

-- name: insert_docs
-- Store new documents and their pending status (parallel arrays); existing ids are
-- left alone. Returns the ids inserted.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
        AS u(id, content, file_path, track_id)
), docs AS (
    INSERT INTO full_docs (id, content, file_path)
    SELECT id, content, file_path FROM rows ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
)
INSERT INTO doc_status (id, status, content_summary, content_length, file_path, track_id)
SELECT r.id, 'pending', left(r.content, 100), length(r.content), r.file_path, r.track_id
FROM rows r JOIN docs d USING (id)
ORDER BY r.id
ON CONFLICT (id) DO NOTHING
RETURNING id;

-- name: docs_by_ids
-- Full documents with the track id of their insert, in the order of the ids given.
SELECT d.id, d.content, d.file_path, s.track_id
FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)
JOIN full_docs d ON d.id = i.id
LEFT JOIN doc_status s ON s.id = d.id
ORDER BY i.ord;

-- name: status_by_ids
-- Status rows in the order of the ids given.
SELECT s.* FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)
JOIN doc_status s ON s.id = i.id ORDER BY i.ord;

-- name: ids_by_status
-- Ids of documents in any of the given statuses, oldest first.
SELECT id FROM doc_status WHERE status = ANY($1::text[]) ORDER BY created_at, id;

-- name: unfinished_ids
-- Ids of the documents the pipeline has to (re)process: pending, processing or
-- failed, with a stored text, oldest first. A status row without text (a file that
-- could not be converted, recorded as failed with its reason) has nothing to process.
SELECT s.id FROM doc_status s
WHERE s.status IN ('pending', 'processing', 'failed')
  AND EXISTS (SELECT 1 FROM full_docs d WHERE d.id = s.id)
ORDER BY s.created_at, s.id;

-- name: claim_docs
-- Mark documents processing, skipping rows another process holds; returns the
-- documents claimed (with the track id of their insert), in id order.
WITH claimed AS (
    UPDATE doc_status s SET status = 'processing', error_msg = NULL, metadata = s.metadata - 'progress',
        updated_at = now()
    FROM (
        SELECT id FROM doc_status
        WHERE id = ANY($1::text[]) AND status <> 'processed'
        ORDER BY id
        FOR UPDATE SKIP LOCKED
    ) c
    WHERE s.id = c.id
    RETURNING s.id, s.track_id
)
SELECT d.id, d.content, d.file_path, c.track_id
FROM claimed c JOIN full_docs d ON d.id = c.id
ORDER BY d.id;

-- name: mark_processed
-- Record a document as processed with its chunk list and processing details.
UPDATE doc_status SET status = 'processed', chunks_count = cardinality($2::text[]),
    chunks_list = $2::text[], error_msg = NULL, metadata = metadata || $3::jsonb, updated_at = now()
WHERE id = $1;

-- name: finish_doc
-- Store a document's chunks ($2-$7) with their vectors ($8), replacing older ones, and
-- record the document $1 as processed with the details $9 and its chunk list $10 (these
-- chunks last; a long document's others were stored before, in the same transaction),
-- with the LLM and embedding calls its processing made ($11-$19, the columns of
-- usage.sql's insert_usage but document and query), in one statement (the chunk write is
-- that of chunks.sql's upsert_chunks).
WITH rows AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::text[], $8::vector[])
        AS u(id, doc_id, chunk_order_index, tokens, content, file_path, embedding)
), chunks AS (
    INSERT INTO text_chunks AS c (id, doc_id, chunk_order_index, tokens, content, file_path)
    SELECT id, doc_id, chunk_order_index, tokens, content, file_path FROM rows ORDER BY id
    ON CONFLICT (id) DO UPDATE SET
        doc_id = EXCLUDED.doc_id, chunk_order_index = EXCLUDED.chunk_order_index,
        tokens = EXCLUDED.tokens, content = EXCLUDED.content, file_path = EXCLUDED.file_path,
        updated_at = EXCLUDED.updated_at
    RETURNING c.id
), vectors AS (
    INSERT INTO chunk_vectors AS v (chunk_id, embedding)
    SELECT r.id, r.embedding FROM rows r JOIN chunks c USING (id) ORDER BY r.id
    ON CONFLICT (chunk_id) DO UPDATE SET embedding = EXCLUDED.embedding
), calls AS (
    INSERT INTO usage (created_at, kind, model, doc_id, cache_hit, input_tokens, output_tokens,
                       cached_input_tokens, counted_by, duration_ms)
    SELECT u.created_at, u.kind, u.model, $1, u.cache_hit, u.input_tokens, u.output_tokens,
        u.cached_input_tokens, u.counted_by, u.duration_ms
    FROM unnest($11::timestamptz[], $12::text[], $13::text[], $14::bool[], $15::int[], $16::int[],
                $17::int[], $18::text[], $19::float8[])
        AS u(created_at, kind, model, cache_hit, input_tokens, output_tokens, cached_input_tokens,
             counted_by, duration_ms)
)
UPDATE doc_status SET status = 'processed', chunks_count = cardinality($10::text[]),
    chunks_list = $10::text[], error_msg = NULL, metadata = (metadata - 'progress') || $9::jsonb,
    updated_at = now()
WHERE id = $1;

-- name: record_progress
-- Record how far the processing of document $1 has come ($2, kept as metadata.progress
-- until the document is claimed again or finished).
UPDATE doc_status SET metadata = metadata || jsonb_build_object('progress', $2::jsonb)
WHERE id = $1 AND status = 'processing';

-- name: mark_failed
-- Record why a document failed ($2), with the usage totals $3 of its processing and the
-- LLM and embedding calls it made ($4-$12, as finish_doc's $11-$19), in one statement.
WITH calls AS (
    INSERT INTO usage (created_at, kind, model, doc_id, cache_hit, input_tokens, output_tokens,
                       cached_input_tokens, counted_by, duration_ms)
    SELECT u.created_at, u.kind, u.model, $1, u.cache_hit, u.input_tokens, u.output_tokens,
        u.cached_input_tokens, u.counted_by, u.duration_ms
    FROM unnest($4::timestamptz[], $5::text[], $6::text[], $7::bool[], $8::int[], $9::int[],
                $10::int[], $11::text[], $12::float8[])
        AS u(created_at, kind, model, cache_hit, input_tokens, output_tokens, cached_input_tokens,
             counted_by, duration_ms)
)
UPDATE doc_status SET status = 'failed', error_msg = $2,
    metadata = metadata || CASE WHEN $3::jsonb = '{}' THEN '{}' ELSE jsonb_build_object('usage', $3::jsonb) END,
    updated_at = now()
WHERE id = $1;

-- name: link_entities
-- Record that a document contributed to entities.
INSERT INTO doc_entities (doc_id, entity_name)
SELECT $1, n FROM unnest($2::text[]) AS n ORDER BY n COLLATE "C"
ON CONFLICT DO NOTHING;

-- name: link_relations
-- Record that a document contributed to relations (canonical pairs).
INSERT INTO doc_relations (doc_id, src, tgt)
SELECT $1, p.src, p.tgt FROM unnest($2::text[], $3::text[]) AS p(src, tgt)
ORDER BY p.src COLLATE "C", p.tgt COLLATE "C"
ON CONFLICT DO NOTHING;

-- name: docs_by_ids_or_paths
-- Ids and file paths of the documents whose id is in $1 or whose file path is in $2.
SELECT s.id, s.file_path FROM doc_status s
WHERE s.id = ANY($1::text[]) OR s.file_path = ANY($2::text[])
ORDER BY s.id;

-- name: delete_docs
-- Delete documents with their status, chunks, chunk vectors, graph links and fragments
-- (by cascade) and, unless $2 (keep the cache), the cached LLM answers of their chunks.
-- Returns the ids deleted.
WITH chunk_ids AS (
    SELECT c.id FROM text_chunks c WHERE c.doc_id = ANY($1::text[])
    UNION
    SELECT unnest(s.chunks_list) FROM doc_status s WHERE s.id = ANY($1::text[])
), cache AS (
    -- $2 is tested with a column, never alone: Citus (14.0) runs none of a statement
    -- whose modifying CTE has a condition that folds to false.
    DELETE FROM llm_cache l
    WHERE l.chunk_id IN (SELECT id FROM chunk_ids) AND NOT ($2::bool AND l.chunk_id IS NOT NULL)
    RETURNING l.id
), status AS (
    DELETE FROM doc_status s WHERE s.id = ANY($1::text[]) RETURNING s.id
)
DELETE FROM full_docs d WHERE d.id = ANY($1::text[]) RETURNING d.id;

-- name: record_failed
-- Record files that could not be converted to text as failed documents (parallel
-- arrays: id, file path, track id, reason). No full_docs row: there is no text,
-- so the pipeline never picks them up and the reason stays. Existing ids are left
-- alone. Returns the ids recorded.
INSERT INTO doc_status (id, status, content_summary, content_length, file_path, track_id, error_msg)
SELECT u.id, 'failed', '', 0, u.file_path, u.track_id, u.reason
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, file_path, track_id, reason)
ORDER BY u.id
ON CONFLICT (id) DO NOTHING
RETURNING id;
