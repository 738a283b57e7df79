-- SQL of the pipeline state: documents by status, paginated and sorted; by track
-- id; status counts; clearing the LLM cache by type.

-- name: page
-- One page of doc_status rows with a status among $1 (NULL: every status), sorted by $2
-- (created_at, updated_at, id or file_path) in direction $3 (asc or desc), ties by
-- id; $4 rows from row $5. Every row also carries `total` (rows with those statuses)
-- and `counts` (rows per status, as JSON); when the page is empty one row comes
-- back with only those two, so the totals are known whatever the page. Each document
-- row also carries `entities_count` and `relations_count`: how many entities and
-- relations it contributed (doc_entities, doc_relations), counted for the page's rows only.
WITH summary AS (
    SELECT
        (SELECT count(*) FROM doc_status WHERE $1::text[] IS NULL OR status = ANY($1::text[])) AS total,
        (SELECT coalesce(jsonb_object_agg(c.status, c.n), '{}'::jsonb)
         FROM (SELECT status, count(*) AS n FROM doc_status GROUP BY status) c) AS counts
)
SELECT s.total, s.counts, p.*, e.n AS entities_count, r.n AS relations_count
FROM summary s
LEFT JOIN LATERAL (
    SELECT d.*, row_number() OVER (
        ORDER BY
            CASE WHEN $2::text = 'created_at' AND $3::text = 'asc' THEN d.created_at END ASC,
            CASE WHEN $2::text = 'created_at' AND $3::text = 'desc' THEN d.created_at END DESC,
            CASE WHEN $2::text = 'updated_at' AND $3::text = 'asc' THEN d.updated_at END ASC,
            CASE WHEN $2::text = 'updated_at' AND $3::text = 'desc' THEN d.updated_at END DESC,
            CASE WHEN $2::text = 'file_path' AND $3::text = 'asc' THEN d.file_path COLLATE "C" END ASC,
            CASE WHEN $2::text = 'file_path' AND $3::text = 'desc' THEN d.file_path COLLATE "C" END DESC,
            CASE WHEN $2::text = 'id' AND $3::text = 'desc' THEN d.id COLLATE "C" END DESC,
            d.id COLLATE "C" ASC
    ) AS position
    FROM doc_status d
    WHERE $1::text[] IS NULL OR d.status = ANY($1::text[])
    ORDER BY position
    LIMIT $4 OFFSET $5
) p ON true
LEFT JOIN LATERAL (SELECT count(*) AS n FROM doc_entities de WHERE de.doc_id = p.id) e ON p.id IS NOT NULL
LEFT JOIN LATERAL (SELECT count(*) AS n FROM doc_relations dr WHERE dr.doc_id = p.id) r ON p.id IS NOT NULL
ORDER BY p.position;

-- name: by_track
-- Every doc_status row enqueued by the insert call with track id $1, oldest first.
SELECT * FROM doc_status WHERE track_id = $1 ORDER BY created_at, id COLLATE "C";

-- name: status_counts
-- Number of documents in each status.
SELECT status, count(*) AS n FROM doc_status GROUP BY status;

-- name: clear_cache
-- Delete the cached LLM answers whose type is in $1 (NULL: all); returns how many.
WITH gone AS (
    DELETE FROM llm_cache WHERE $1::text[] IS NULL OR cache_type = ANY($1::text[]) RETURNING 1
)
SELECT count(*) FROM gone;
