-- SQL the server runs on a workspace's document tables (doc_status, llm_cache):
-- counts, pages and track lookups for the document routes.

-- name: status_counts
-- Number of documents in each status.
SELECT status, count(*)::int AS n FROM doc_status GROUP BY status;

-- name: by_track
-- Status rows of the documents enqueued under one track id, oldest first.
SELECT * FROM doc_status WHERE track_id = $1 ORDER BY created_at, id;

-- name: page
-- One page of status rows, filtered by status ($1, NULL for all), sorted by the
-- column named in $2 ('created_at', 'updated_at', 'id', 'file_path') in the
-- direction $3 ('asc' or 'desc'); $4 rows from offset $5. Each row carries the
-- total count of the filtered rows.
SELECT s.*, count(*) OVER ()::int AS total
FROM doc_status s
WHERE $1::text[] IS NULL OR s.status = ANY($1::text[])
ORDER BY
    CASE WHEN $3 = 'asc' AND $2 = 'created_at' THEN s.created_at END ASC,
    CASE WHEN $3 = 'desc' AND $2 = 'created_at' THEN s.created_at END DESC,
    CASE WHEN $3 = 'asc' AND $2 = 'updated_at' THEN s.updated_at END ASC,
    CASE WHEN $3 = 'desc' AND $2 = 'updated_at' THEN s.updated_at END DESC,
    CASE WHEN $3 = 'asc' AND $2 = 'file_path' THEN s.file_path END ASC,
    CASE WHEN $3 = 'desc' AND $2 = 'file_path' THEN s.file_path END DESC,
    CASE WHEN $3 = 'asc' THEN s.id END ASC,
    CASE WHEN $3 = 'desc' THEN s.id END DESC
LIMIT $4 OFFSET $5;

-- name: known_file_paths
-- Which of the given file paths some document already has.
SELECT DISTINCT file_path FROM doc_status WHERE file_path = ANY($1::text[]);

-- name: file_paths_of
-- The file paths of the given documents.
SELECT id, file_path FROM doc_status WHERE id = ANY($1::text[]);

-- name: record_failed
-- Record files that could not be converted to text as failed documents (parallel
-- arrays: id, file path, track id, reason). No full_docs row: there is no text.
-- Existing ids are left alone. Returns the ids recorded.
INSERT INTO doc_status (id, status, content_summary, content_length, file_path, track_id, error_msg, metadata)
SELECT u.id, 'failed', '', 0, u.file_path, u.track_id, u.reason,
       jsonb_build_object('conversion_error', u.reason)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, file_path, track_id, reason)
ORDER BY u.id
ON CONFLICT (id) DO NOTHING
RETURNING id;

-- name: clear_cache
-- Delete every cached LLM answer of the workspace; returns how many were deleted.
WITH gone AS (DELETE FROM llm_cache RETURNING 1) SELECT count(*)::int FROM gone;

-- name: ping
-- Whether the database answers.
SELECT 1;
