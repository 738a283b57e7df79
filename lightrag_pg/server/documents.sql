-- SQL the server runs on a workspace's doc_status table: recording files that
-- could not be converted to text (see doc_status.py for why the library has no
-- such call).

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
