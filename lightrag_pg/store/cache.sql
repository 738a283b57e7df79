-- SQL of the LLM response cache.

-- name: get
-- A cached answer by key.
SELECT response FROM llm_cache WHERE id = $1;

-- name: put
-- Store an answer (the newest wins).
INSERT INTO llm_cache (id, cache_type, mode, chunk_id, prompt, response)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO UPDATE SET response = EXCLUDED.response, created_at = now();
