-- SQL of migration 0014: every entity and relation context line counted again.

-- name: entity_lines
-- What an entity's context line is made of.
SELECT name, entity_type, description FROM entities;

-- name: relation_lines
-- What a relation's context line is made of.
SELECT src, tgt, description FROM relations;

-- name: set_entity_tokens
-- One statement for every counted entity (parallel arrays).
UPDATE entities e SET context_tokens = u.tokens
FROM unnest($1::text[], $2::int[]) AS u(name, tokens)
WHERE e.name = u.name AND e.context_tokens IS DISTINCT FROM u.tokens;

-- name: set_relation_tokens
-- One statement for every counted relation (parallel arrays).
UPDATE relations r SET context_tokens = u.tokens
FROM unnest($1::text[], $2::text[], $3::int[]) AS u(src, tgt, tokens)
WHERE r.src = u.src AND r.tgt = u.tgt AND r.context_tokens IS DISTINCT FROM u.tokens;
