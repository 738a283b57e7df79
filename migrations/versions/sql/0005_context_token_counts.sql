-- SQL of migration 0005: stored token counts of the context lines.

-- name: add_entity_tokens
-- Tokens of the entity's context line, counted by the writer.
ALTER TABLE entities ADD COLUMN IF NOT EXISTS context_tokens integer;

-- name: comment_entity_tokens
-- Documents the column.
COMMENT ON COLUMN entities.context_tokens IS
    'Tokens of the entity''s context line, counted when written (NULL: not counted)';

-- name: add_relation_tokens
-- Tokens of the relation's context line, counted by the writer.
ALTER TABLE relations ADD COLUMN IF NOT EXISTS context_tokens integer;

-- name: comment_relation_tokens
-- Documents the column.
COMMENT ON COLUMN relations.context_tokens IS
    'Tokens of the relation''s context line, counted when written (NULL: not counted)';

-- name: uncounted_entities
-- Entities written before token counts existed.
SELECT name, entity_type, description FROM entities WHERE context_tokens IS NULL;

-- name: uncounted_relations
-- Relations written before token counts existed.
SELECT src, tgt, description FROM relations WHERE context_tokens IS NULL;

-- name: set_entity_tokens
-- Backfill: one statement for every counted entity (parallel arrays).
UPDATE entities e SET context_tokens = u.tokens
FROM unnest($1::text[], $2::int[]) AS u(name, tokens)
WHERE e.name = u.name;

-- name: set_relation_tokens
-- Backfill: one statement for every counted relation (parallel arrays).
UPDATE relations r SET context_tokens = u.tokens
FROM unnest($1::text[], $2::text[], $3::int[]) AS u(src, tgt, tokens)
WHERE r.src = u.src AND r.tgt = u.tgt;

-- name: drop_entity_tokens
-- Downgrade.
ALTER TABLE entities DROP COLUMN IF EXISTS context_tokens;

-- name: drop_relation_tokens
-- Downgrade.
ALTER TABLE relations DROP COLUMN IF EXISTS context_tokens;
