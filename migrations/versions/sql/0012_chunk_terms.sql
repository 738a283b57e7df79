-- SQL of migration 0012: the term counts of chunk text in an inverted table (tsvector backend).
-- lexical_chunks (0009) found a query word's chunks through the GIN index on
-- text_chunks.lexemes, one heap fetch per word and chunk, then detoasted and filtered
-- each candidate's tsvector for its counts. chunk_terms holds one row per lexeme of
-- every chunk, with its count and the chunk's token count, keyed by (lexeme,
-- chunk_id) and including the rest: a word's document frequency and its chunks' counts
-- are one index-only range each. Statement-level triggers on text_chunks keep it, one
-- set-based statement per writing statement (transition tables). Placeholder: {schema}
-- the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: create_table
-- The inverted table; its key includes the count and the token count, so a search
-- reads the index alone.
CREATE TABLE IF NOT EXISTS {schema}.chunk_terms (
    lexeme text NOT NULL,
    chunk_id text NOT NULL,
    tf integer NOT NULL,
    tokens integer NOT NULL,
    CONSTRAINT chunk_terms_pkey PRIMARY KEY (lexeme, chunk_id) INCLUDE (tf, tokens)
);

-- name: comment_table
-- What the table holds.
COMMENT ON TABLE {schema}.chunk_terms IS
    'Lexemes of every chunk with their counts (full text search term counts), kept by triggers on text_chunks';

-- name: comment_lexeme
-- Documents the column.
COMMENT ON COLUMN {schema}.chunk_terms.lexeme IS 'English lexeme of the chunk text';

-- name: comment_chunk_id
-- Documents the column.
COMMENT ON COLUMN {schema}.chunk_terms.chunk_id IS 'Chunk id (text_chunks.id)';

-- name: comment_tf
-- Documents the column.
COMMENT ON COLUMN {schema}.chunk_terms.tf IS 'Occurrences of the lexeme in the chunk (its positions)';

-- name: comment_tokens
-- Documents the column.
COMMENT ON COLUMN {schema}.chunk_terms.tokens IS 'Number of tokens in the chunk (text_chunks.tokens)';

-- name: fill_table
-- Back-fill: every lexeme of every chunk, in one statement, in key order (rows the
-- triggers already keep, on a repeated upgrade, are left as they are).
INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
SELECT t.lexeme, c.id, cardinality(t.positions), c.tokens
FROM {schema}.text_chunks c CROSS JOIN LATERAL unnest(c.lexemes) t
ORDER BY 1, 2
ON CONFLICT DO NOTHING;

-- name: insert_function
-- Statement-level trigger of text_chunks (INSERT): the lexemes of every inserted chunk.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
    SELECT t.lexeme, n.id, cardinality(t.positions), n.tokens
    FROM new_rows n CROSS JOIN LATERAL unnest(n.lexemes) t;
    RETURN NULL;
END
$fn$;

-- name: update_function
-- Statement-level trigger of text_chunks (UPDATE, upserts included): the rows of every
-- chunk whose lexemes or token count changed are replaced (its old lexemes name the
-- keys to delete); the others are left alone.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM {schema}.chunk_terms t
    USING old_rows o CROSS JOIN LATERAL unnest(o.lexemes) l
    WHERE t.lexeme = l.lexeme AND t.chunk_id = o.id
      AND NOT EXISTS (
          SELECT 1 FROM new_rows n WHERE n.id = o.id AND n.tokens = o.tokens AND n.lexemes = o.lexemes
      );
    INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
    SELECT t.lexeme, n.id, cardinality(t.positions), n.tokens
    FROM new_rows n CROSS JOIN LATERAL unnest(n.lexemes) t
    WHERE NOT EXISTS (
        SELECT 1 FROM old_rows o WHERE o.id = n.id AND o.tokens = n.tokens AND o.lexemes = n.lexemes
    );
    RETURN NULL;
END
$fn$;

-- name: delete_function
-- Statement-level trigger of text_chunks (DELETE, cascades included): the rows of every
-- deleted chunk, found by key from its lexemes.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM {schema}.chunk_terms t
    USING old_rows o CROSS JOIN LATERAL unnest(o.lexemes) l
    WHERE t.lexeme = l.lexeme AND t.chunk_id = o.id;
    RETURN NULL;
END
$fn$;

-- name: truncate_function
-- Statement-level trigger of text_chunks (TRUNCATE): no chunk, no term.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_truncate() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    TRUNCATE {schema}.chunk_terms;
    RETURN NULL;
END
$fn$;

-- name: insert_trigger
-- Chunks inserted: their terms, once per statement.
CREATE OR REPLACE TRIGGER text_chunks_terms_insert
    AFTER INSERT ON {schema}.text_chunks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.chunk_terms_insert();

-- name: update_trigger
-- Chunks updated: the terms of those whose text or size changed, once per statement
-- (PostgreSQL has no transition tables for a trigger with a column list).
CREATE OR REPLACE TRIGGER text_chunks_terms_update
    AFTER UPDATE ON {schema}.text_chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.chunk_terms_update();

-- name: delete_trigger
-- Chunks deleted: their terms, once per statement.
CREATE OR REPLACE TRIGGER text_chunks_terms_delete
    AFTER DELETE ON {schema}.text_chunks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.chunk_terms_delete();

-- name: truncate_trigger
-- Chunks truncated: every term.
CREATE OR REPLACE TRIGGER text_chunks_terms_truncate
    AFTER TRUNCATE ON {schema}.text_chunks
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.chunk_terms_truncate();

-- name: drop_lexemes_index
-- The GIN index on the stored lexemes: lexical_chunks no longer reads it, and
-- chunk_terms' key answers whether a chunk holds a word.
DROP INDEX IF EXISTS {schema}.text_chunks_lexemes_fts;

-- name: fts_chunks
-- The k chunks of highest BM25 score over the query's words (English stems, stop
-- words dropped), as in 0009: a word weighs ln(1 + (chunks - df + 0.5) / (df + 0.5)),
-- times tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens / mean tokens)), tf its count
-- in the chunk, k1 = 1.2, b = 0.75, the mean over the chunks matching any used word.
-- Document frequencies are counted up to 10,000 and the table size read from
-- text_chunks' statistics; words at that cap are left out when the query has rarer
-- ones. Everything comes from chunk_terms' key: a word's frequency is the length of
-- its range, its chunks with their counts and token counts the range itself.
CREATE OR REPLACE FUNCTION lexical_chunks(query text, k bigint) RETURNS TABLE (id text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
DECLARE
    total float8 := (SELECT greatest(c.reltuples, 1) FROM pg_class c WHERE c.oid = 'text_chunks'::regclass);
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH words AS MATERIALIZED (
        SELECT w.lexeme, (
            SELECT count(*) FROM (SELECT 1 FROM chunk_terms t WHERE t.lexeme = w.lexeme LIMIT 10000) m
        ) AS df
        FROM (
            SELECT DISTINCT l AS lexeme
            FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, query))) AS l
        ) w
    ),
    used AS MATERIALIZED (
        SELECT lexeme,
               ln(1 + (greatest(total, (SELECT max(df) FROM words)) - df + 0.5) / (df + 0.5)) AS weight
        FROM words
        WHERE df > 0 AND (df < 10000 OR NOT EXISTS (SELECT 1 FROM words WHERE df BETWEEN 1 AND 9999))
    ),
    hits AS MATERIALIZED (
        SELECT t.chunk_id, t.tf, t.tokens, u.weight
        FROM used u JOIN chunk_terms t ON t.lexeme = u.lexeme
    ),
    mean AS (
        SELECT greatest(avg(tokens), 1)::float8 AS tokens FROM (SELECT DISTINCT chunk_id, tokens FROM hits) c
    )
    SELECT h.chunk_id, sum(h.weight * h.tf * 2.2 / (h.tf + 1.2 * (0.25 + 0.75 * (h.tokens / a.tokens))))
    FROM hits h CROSS JOIN mean a
    GROUP BY h.chunk_id
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: drop_insert_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS text_chunks_terms_insert ON text_chunks;

-- name: drop_update_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS text_chunks_terms_update ON text_chunks;

-- name: drop_delete_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS text_chunks_terms_delete ON text_chunks;

-- name: drop_truncate_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS text_chunks_terms_truncate ON text_chunks;

-- name: drop_functions
-- Downgrade.
DROP FUNCTION IF EXISTS chunk_terms_insert(), chunk_terms_update(), chunk_terms_delete(), chunk_terms_truncate();

-- name: drop_table
-- Downgrade.
DROP TABLE IF EXISTS chunk_terms;
