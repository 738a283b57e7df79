-- SQL of the usage store: one row per LLM or embedding call.

-- name: insert_usage
-- Record calls (parallel arrays: end time, kind, model, document, query, cache hit,
-- input, output and cached input tokens, how they were counted, milliseconds).
INSERT INTO usage (created_at, kind, model, doc_id, query_id, cache_hit, input_tokens, output_tokens,
                   cached_input_tokens, counted_by, duration_ms)
SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[],
                     $7::int[], $8::int[], $9::int[], $10::text[], $11::float8[]);

-- name: usage_by_kind
-- Calls and tokens since $1, by kind. Tokens of LLM calls count the calls that reached
-- the model (a cache hit costs nothing); embedding tokens are apart.
SELECT u.kind AS key, NULL::text AS label,
    count(*) FILTER (WHERE NOT u.cache_hit) AS calls,
    count(*) FILTER (WHERE u.cache_hit) AS cache_hits,
    coalesce(sum(u.input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS input_tokens,
    coalesce(sum(u.output_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS output_tokens,
    coalesce(sum(u.cached_input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS cached_input_tokens
FROM usage u
WHERE u.created_at >= $1
GROUP BY u.kind
ORDER BY array_position(ARRAY['extract', 'glean', 'summary', 'keywords', 'answer', 'embed'], u.kind);

-- name: usage_by_day
-- Calls and tokens since $1, by UTC day (embedding calls and tokens included: see
-- the kind column of usage_by_kind to tell them apart).
SELECT to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS key, NULL::text AS label,
    count(*) FILTER (WHERE NOT u.cache_hit) AS calls,
    count(*) FILTER (WHERE u.cache_hit) AS cache_hits,
    coalesce(sum(u.input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS input_tokens,
    coalesce(sum(u.output_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS output_tokens,
    coalesce(sum(u.cached_input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS cached_input_tokens
FROM usage u
WHERE u.created_at >= $1
GROUP BY 1
ORDER BY 1;

-- name: usage_by_doc
-- Calls and tokens since $1, by document (with its file path; key NULL: the calls of
-- queries, deletions and edits), the costliest first.
SELECT u.doc_id AS key, min(s.file_path) AS label,
    count(*) FILTER (WHERE NOT u.cache_hit) AS calls,
    count(*) FILTER (WHERE u.cache_hit) AS cache_hits,
    coalesce(sum(u.input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS input_tokens,
    coalesce(sum(u.output_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS output_tokens,
    coalesce(sum(u.cached_input_tokens) FILTER (WHERE NOT u.cache_hit), 0) AS cached_input_tokens
FROM usage u
LEFT JOIN doc_status s ON s.id = u.doc_id
WHERE u.created_at >= $1
GROUP BY u.doc_id
ORDER BY sum(u.input_tokens + u.output_tokens) FILTER (WHERE NOT u.cache_hit) DESC NULLS LAST, u.doc_id;
