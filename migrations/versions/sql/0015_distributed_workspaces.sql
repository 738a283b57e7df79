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

-- name: chunk_total
-- The number of chunks lexical_chunks weighs words by: text_chunks' row estimate from
-- its statistics (at least 1).
CREATE OR REPLACE FUNCTION {schema}.lexical_chunk_total() RETURNS float8
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT greatest(c.reltuples, 1)::float8 FROM pg_class c WHERE c.oid = '{schema}.text_chunks'::regclass
$fn$;

-- name: distributed_chunk_total
-- The same on a distributed workspace: the statistics are those of text_chunks' shard,
-- on the worker that runs the query (the coordinator's table is an empty shell); the
-- shell's when the shard is not on this node.
CREATE OR REPLACE FUNCTION {schema}.lexical_chunk_total() RETURNS float8
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT greatest(coalesce(
        (SELECT max(c.reltuples)
         FROM pg_catalog.pg_dist_shard s
         JOIN pg_class t ON t.oid = s.logicalrelid
         JOIN pg_class c ON c.relnamespace = t.relnamespace AND c.relname = 'text_chunks_' || s.shardid
         WHERE s.logicalrelid = '{schema}.text_chunks'::regclass),
        (SELECT c.reltuples FROM pg_class c WHERE c.oid = '{schema}.text_chunks'::regclass)
    ), 1)::float8
$fn$;

-- name: fts_chunks
-- As in 0012, the table size now read from lexical_chunk_total() (the shard's on a
-- distributed workspace).
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
    total float8 := lexical_chunk_total();
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

-- name: drop_chunk_total
-- Downgrade (after 0012's lexical_chunks is back).
DROP FUNCTION IF EXISTS lexical_chunk_total();

-- name: drop_distributed
-- Downgrade.
ALTER TABLE workspace_info DROP COLUMN IF EXISTS distributed;
