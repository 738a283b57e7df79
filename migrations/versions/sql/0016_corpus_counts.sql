-- SQL of migration 0016: exact corpus counts for lexical ranking (tsvector backend).
-- lexical_chunks and lexical_entities weighed words by the number of chunks (entities)
-- read from the planner's statistics (pg_class.reltuples), which ANALYZE, VACUUM and
-- autovacuum move, and which a Citus worker keeps for its shard: the same data could
-- rank differently from one hour to the next, and on a cluster than on one node.
-- corpus_counts holds the exact counts as rows of deltas, written by the triggers that
-- keep chunk_terms (and by new ones on entities) in the writing transaction: their sum
-- is the number of chunks and entities any snapshot sees. Each transaction writes rows
-- of its own, so concurrent writers never wait on one counter row; each trigger call
-- folds up to 64 rows no one else holds into the one it adds, so the table stays a few
-- rows long. Placeholder: {schema} the workspace (filled by lightrag_pg.db.sqlfile.render).

-- name: create_table
-- One row per delta; the counts are the sums of its columns.
CREATE TABLE IF NOT EXISTS {schema}.corpus_counts (
    id uuid NOT NULL,
    chunks bigint NOT NULL DEFAULT 0,
    entities bigint NOT NULL DEFAULT 0,
    CONSTRAINT corpus_counts_pkey PRIMARY KEY (id)
);

-- name: comment_table
-- What the table holds.
COMMENT ON TABLE {schema}.corpus_counts IS
    'Exact number of chunks and entities as the sums of these deltas (lexical ranking), kept by triggers';

-- name: comment_id
-- Documents the column.
COMMENT ON COLUMN {schema}.corpus_counts.id IS 'Random key of the delta';

-- name: comment_chunks
-- Documents the column.
COMMENT ON COLUMN {schema}.corpus_counts.chunks IS 'Chunks added (negative: removed)';

-- name: comment_entities
-- Documents the column.
COMMENT ON COLUMN {schema}.corpus_counts.entities IS 'Entities added (negative: removed)';

-- name: count_function
-- Adds a delta: up to 64 rows that no other transaction holds (locked, SKIP LOCKED, so
-- this never waits) are deleted and their sums carried into the one row inserted. The
-- rows are never updated, so the values locked are those deleted, and every snapshot
-- sees the same sums before and after. Under REPEATABLE READ or SERIALIZABLE (an
-- analyst's transaction) nothing is folded: locking a row a concurrent fold deleted
-- would be a serialization failure there.
CREATE OR REPLACE FUNCTION {schema}.corpus_count(added_chunks bigint, added_entities bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    ids uuid[];
    folded_chunks bigint := 0;
    folded_entities bigint := 0;
BEGIN
    IF current_setting('transaction_isolation') = 'read committed' THEN
        SELECT array_agg(f.id), coalesce(sum(f.chunks), 0), coalesce(sum(f.entities), 0)
        INTO ids, folded_chunks, folded_entities
        FROM (SELECT c.id, c.chunks, c.entities FROM {schema}.corpus_counts c LIMIT 64 FOR UPDATE SKIP LOCKED) f;
        IF ids IS NOT NULL THEN
            DELETE FROM {schema}.corpus_counts c WHERE c.id = ANY (ids);
        END IF;
    END IF;
    IF added_chunks + folded_chunks <> 0 OR added_entities + folded_entities <> 0 THEN
        INSERT INTO {schema}.corpus_counts (id, chunks, entities)
        VALUES (gen_random_uuid(), added_chunks + folded_chunks, added_entities + folded_entities);
    END IF;
END
$fn$;

-- name: chunk_insert_function
-- Statement-level trigger of text_chunks (INSERT): the lexemes of every inserted chunk,
-- gathered from the transition table into arrays, then inserted in one statement (as
-- 0015); the chunks counted.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    lexemes text[];
    ids text[];
    tfs integer[];
    sizes integer[];
    added bigint;
BEGIN
    SELECT array_agg(t.lexeme), array_agg(n.id), array_agg(cardinality(t.positions)), array_agg(n.tokens)
    INTO lexemes, ids, tfs, sizes
    FROM new_rows n CROSS JOIN LATERAL unnest(n.lexemes) t;
    INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
    SELECT * FROM unnest(lexemes, ids, tfs, sizes);
    SELECT count(*) INTO added FROM new_rows;
    PERFORM {schema}.corpus_count(added, 0);
    RETURN NULL;
END
$fn$;

-- name: chunk_delete_function
-- Statement-level trigger of text_chunks (DELETE, cascades included): the rows of every
-- deleted chunk, their keys read from its lexemes into arrays, deleted in one statement
-- (as 0015); the chunks counted off.
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    lexemes text[];
    ids text[];
    removed bigint;
BEGIN
    SELECT array_agg(l.lexeme), array_agg(o.id)
    INTO lexemes, ids
    FROM old_rows o CROSS JOIN LATERAL unnest(o.lexemes) l;
    DELETE FROM {schema}.chunk_terms t
    USING unnest(lexemes, ids) AS d(lexeme, chunk_id)
    WHERE t.lexeme = d.lexeme AND t.chunk_id = d.chunk_id;
    SELECT count(*) INTO removed FROM old_rows;
    PERFORM {schema}.corpus_count(-removed, 0);
    RETURN NULL;
END
$fn$;

-- name: chunk_truncate_function
-- Statement-level trigger of text_chunks (TRUNCATE): no chunk, no term, and the chunk
-- count back to 0 by a delta of minus the current sum (TRUNCATE holds text_chunks
-- exclusively, so no other transaction has a chunk delta pending; rows a concurrent
-- entity writer is folding still count, and the row it adds carries them).
CREATE OR REPLACE FUNCTION {schema}.chunk_terms_truncate() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    counted bigint;
BEGIN
    TRUNCATE {schema}.chunk_terms;
    SELECT coalesce(sum(c.chunks), 0) INTO counted FROM {schema}.corpus_counts c;
    PERFORM {schema}.corpus_count(-counted, 0);
    RETURN NULL;
END
$fn$;

-- name: entity_count_function
-- Statement-level trigger of entities (INSERT, DELETE, cascades included): the entities
-- inserted counted, those deleted counted off. An upsert's updated rows are in the
-- UPDATE transition tables, not here, and a rename is an update: neither changes the count.
CREATE OR REPLACE FUNCTION {schema}.entities_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    changed bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO changed FROM new_rows;
    ELSE
        SELECT -count(*) INTO changed FROM old_rows;
    END IF;
    PERFORM {schema}.corpus_count(0, changed);
    RETURN NULL;
END
$fn$;

-- name: entity_truncate_function
-- Statement-level trigger of entities (TRUNCATE): the entity count back to 0, as for chunks.
CREATE OR REPLACE FUNCTION {schema}.entities_count_truncate() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    counted bigint;
BEGIN
    SELECT coalesce(sum(c.entities), 0) INTO counted FROM {schema}.corpus_counts c;
    PERFORM {schema}.corpus_count(0, -counted);
    RETURN NULL;
END
$fn$;

-- name: entity_insert_trigger
-- Entities inserted: counted once per statement.
CREATE OR REPLACE TRIGGER entities_count_insert
    AFTER INSERT ON {schema}.entities
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.entities_count();

-- name: entity_delete_trigger
-- Entities deleted: counted off once per statement.
CREATE OR REPLACE TRIGGER entities_count_delete
    AFTER DELETE ON {schema}.entities
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.entities_count();

-- name: entity_truncate_trigger
-- Entities truncated: the count back to 0.
CREATE OR REPLACE TRIGGER entities_count_truncate
    AFTER TRUNCATE ON {schema}.entities
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.entities_count_truncate();

-- name: clear_counts
-- Back-fill, after the triggers (whose creation waits for every writer of text_chunks
-- and entities, and holds off new ones to the end of this transaction): whatever a
-- previous run of this revision left goes.
DELETE FROM {schema}.corpus_counts;

-- name: fill_counts
-- Back-fill: the counts of the rows there are, as one delta (none for an empty workspace).
INSERT INTO {schema}.corpus_counts (id, chunks, entities)
SELECT gen_random_uuid(), n.chunks, n.entities
FROM (SELECT (SELECT count(*) FROM {schema}.text_chunks) AS chunks,
             (SELECT count(*) FROM {schema}.entities) AS entities) n
WHERE n.chunks <> 0 OR n.entities <> 0;

-- name: chunk_total
-- The number of chunks lexical_chunks weighs words by: the sum of the deltas (at least 1).
CREATE OR REPLACE FUNCTION {schema}.lexical_chunk_total() RETURNS float8
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT greatest(coalesce(sum(c.chunks), 0), 1)::float8 FROM {schema}.corpus_counts c
$fn$;

-- name: entity_total
-- The number of entities lexical_entities weighs words by: the sum of the deltas (at least 1).
CREATE OR REPLACE FUNCTION {schema}.lexical_entity_total() RETURNS float8
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT greatest(coalesce(sum(c.entities), 0), 1)::float8 FROM {schema}.corpus_counts c
$fn$;

-- name: fts_chunks
-- As in 0015, with the exact chunk count of lexical_chunk_total() and each chunk's score
-- summed exactly, as integers of 1e-12: float additions in the order the rows arrive
-- (which a plan chosen on statistics decides) could break a tie either way (a sum in
-- numeric cost a search on common words a quarter more, integers about a tenth).
-- The k chunks of highest BM25 score over the query's words (English stems, stop
-- words dropped), as in 0009: a word weighs ln(1 + (chunks - df + 0.5) / (df + 0.5)),
-- times tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens / mean tokens)), tf its count
-- in the chunk, k1 = 1.2, b = 0.75, the mean over the chunks matching any used word.
-- Document frequencies are counted up to 10,000; words at that cap are left out when
-- the query has rarer ones. Everything comes from chunk_terms' key: a word's frequency
-- is the length of its range, its chunks with their counts and token counts the range itself.
CREATE OR REPLACE FUNCTION lexical_chunks(query text, k bigint) RETURNS TABLE (id text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
DECLARE
    total float8;
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
    total := lexical_chunk_total();
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
    SELECT h.chunk_id,
           sum(round(h.weight * h.tf * 2.2 / (h.tf + 1.2 * (0.25 + 0.75 * (h.tokens / a.tokens))) * 1e12)::int8)
               ::float8 / 1e12
    FROM hits h CROSS JOIN mean a
    GROUP BY h.chunk_id
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: fts_entities
-- As in 0008, with the exact entity count of lexical_entity_total() and each entity's
-- weight summed exactly, as integers of 1e-12 (see fts_chunks).
-- The k entities of highest score over names and descriptions, as in lexical_chunks
-- (a word of the name counts twice; lengths are the stored context_tokens, else
-- the description's length in bytes / 4).
CREATE OR REPLACE FUNCTION lexical_entities(query text, k bigint) RETURNS TABLE (name text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
DECLARE
    total float8;
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
    total := lexical_entity_total();
    RETURN QUERY
    WITH words AS MATERIALIZED (
        SELECT w.word, (
            SELECT count(*) FROM (
                SELECT 1 FROM entities e
                WHERE (setweight(to_tsvector('english'::regconfig, e.name), 'A')
                       || setweight(to_tsvector('english'::regconfig, e.description), 'B')) @@ w.word
                LIMIT 10000
            ) m
        ) AS df
        FROM (
            SELECT DISTINCT lexical_word(l) AS word
            FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, query))) AS l
        ) w
    ),
    used AS (
        SELECT word,
               ln(1 + (greatest(total, (SELECT max(df) FROM words)) - df + 0.5) / (df + 0.5)) AS weight
        FROM words
        WHERE df > 0 AND (df < 10000 OR NOT EXISTS (SELECT 1 FROM words WHERE df BETWEEN 1 AND 9999))
    ),
    matched AS MATERIALIZED (
        SELECT e.name,
               coalesce(e.context_tokens, octet_length(e.description) / 4 + 1) AS tokens,
               sum(round(u.weight * CASE WHEN to_tsvector('english'::regconfig, e.name) @@ u.word THEN 2e12 ELSE 1e12 END)
                   ::int8)::float8 / 1e12 AS weight
        FROM used u
        JOIN entities e
          ON (setweight(to_tsvector('english'::regconfig, e.name), 'A')
              || setweight(to_tsvector('english'::regconfig, e.description), 'B')) @@ u.word
        GROUP BY e.name
    ),
    mean AS (
        SELECT greatest(avg(tokens), 1) AS tokens FROM matched
    )
    SELECT m.name, (m.weight * 2.2 / (1 + 1.2 * (0.25 + 0.75 * m.tokens / a.tokens)))::float8 AS score
    FROM matched m CROSS JOIN mean a
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: drop_insert_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS entities_count_insert ON entities;

-- name: drop_delete_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS entities_count_delete ON entities;

-- name: drop_truncate_trigger
-- Downgrade.
DROP TRIGGER IF EXISTS entities_count_truncate ON entities;

-- name: drop_functions
-- Downgrade (after 0015's and 0012's trigger functions and 0008's lexical_entities are back).
DROP FUNCTION IF EXISTS entities_count(), entities_count_truncate(), corpus_count(bigint, bigint),
    lexical_entity_total();

-- name: drop_table
-- Downgrade.
DROP TABLE IF EXISTS corpus_counts;
