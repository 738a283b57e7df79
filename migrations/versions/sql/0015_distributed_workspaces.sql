-- SQL of migration 0015: distributed workspaces recorded; chunk_terms triggers read arrays.
-- Placeholder: {schema} the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: add_distributed
-- Whether the workspace is a Citus distributed schema.
ALTER TABLE workspace_info ADD COLUMN IF NOT EXISTS distributed boolean NOT NULL DEFAULT false;

-- name: comment_distributed
-- Documents the column.
COMMENT ON COLUMN workspace_info.distributed IS
    'Whether the workspace is a Citus distributed schema, placed whole on one worker';

-- name: record_distributed
-- What the catalog says ($1).
UPDATE workspace_info SET distributed = $1;

-- name: insert_function
-- Statement-level trigger of text_chunks (INSERT): the lexemes of every inserted chunk,
-- gathered from the transition table into arrays, then inserted in one statement.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    lexemes text[];
    ids text[];
    tfs integer[];
    sizes integer[];
BEGIN
    SELECT array_agg(t.lexeme), array_agg(n.id), array_agg(cardinality(t.positions)), array_agg(n.tokens)
    INTO lexemes, ids, tfs, sizes
    FROM new_rows n CROSS JOIN LATERAL unnest(n.lexemes) t;
    INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
    SELECT * FROM unnest(lexemes, ids, tfs, sizes);
    RETURN NULL;
END
$fn$;

-- name: update_function
-- Statement-level trigger of text_chunks (UPDATE, upserts included): the rows of every
-- chunk whose lexemes or token count changed are replaced (its old lexemes name the
-- keys to delete); the others are left alone. Keys come from the transition tables as
-- arrays, then one delete and one insert.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    lexemes text[];
    ids text[];
    tfs integer[];
    sizes integer[];
BEGIN
    SELECT array_agg(l.lexeme), array_agg(o.id)
    INTO lexemes, ids
    FROM old_rows o CROSS JOIN LATERAL unnest(o.lexemes) l
    WHERE NOT EXISTS (
        SELECT 1 FROM new_rows n WHERE n.id = o.id AND n.tokens = o.tokens AND n.lexemes = o.lexemes
    );
    DELETE FROM {schema}.chunk_terms t
    USING unnest(lexemes, ids) AS d(lexeme, chunk_id)
    WHERE t.lexeme = d.lexeme AND t.chunk_id = d.chunk_id;
    SELECT array_agg(t.lexeme), array_agg(n.id), array_agg(cardinality(t.positions)), array_agg(n.tokens)
    INTO lexemes, ids, tfs, sizes
    FROM new_rows n CROSS JOIN LATERAL unnest(n.lexemes) t
    WHERE NOT EXISTS (
        SELECT 1 FROM old_rows o WHERE o.id = n.id AND o.tokens = n.tokens AND o.lexemes = n.lexemes
    );
    INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
    SELECT * FROM unnest(lexemes, ids, tfs, sizes);
    RETURN NULL;
END
$fn$;

-- name: delete_function
-- Statement-level trigger of text_chunks (DELETE, cascades included): the rows of every
-- deleted chunk, their keys read from its lexemes into arrays, deleted in one statement.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    lexemes text[];
    ids text[];
BEGIN
    SELECT array_agg(l.lexeme), array_agg(o.id)
    INTO lexemes, ids
    FROM old_rows o CROSS JOIN LATERAL unnest(o.lexemes) l;
    DELETE FROM {schema}.chunk_terms t
    USING unnest(lexemes, ids) AS d(lexeme, chunk_id)
    WHERE t.lexeme = d.lexeme AND t.chunk_id = d.chunk_id;
    RETURN NULL;
END
$fn$;

-- name: drop_distributed
-- Downgrade.
ALTER TABLE workspace_info DROP COLUMN IF EXISTS distributed;
