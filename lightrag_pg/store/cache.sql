-- SQL of the LLM response cache.

-- name: get
-- A cached answer by key.
SELECT response FROM llm_cache WHERE id = $1;

-- name: put
-- Store an answer (the newest wins).
INSERT INTO llm_cache (id, cache_type, mode, chunk_id, prompt, response)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO UPDATE SET response = EXCLUDED.response, created_at = EXCLUDED.created_at;

-- name: get_many
-- Cached answers by key, for any of the keys given (unknown keys are skipped).
SELECT id, response FROM llm_cache WHERE id = ANY($1::text[]);

-- name: put_many
-- Store answers (parallel arrays, distinct keys; the newest wins).
INSERT INTO llm_cache (id, cache_type, mode, chunk_id, prompt, response)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
ORDER BY 1
ON CONFLICT (id) DO UPDATE SET response = EXCLUDED.response, created_at = EXCLUDED.created_at;
