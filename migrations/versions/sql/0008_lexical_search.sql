-- SQL of migration 0008: lexical search over chunks and entities.
-- Two backends, chosen when the migration runs and recorded in workspace_info:
-- bm25 (pg_textsearch's BM25 indexes) and tsvector (built-in full text search, GIN
-- indexes; chunks and entities ranked by BM25 counting each word once per text). Each
-- backend defines the same two functions, so retrieval's statement is the same for both:
--   lexical_chunks(query, k)   -> (id, score): the k chunks best matching query
--   lexical_entities(query, k) -> (name, score): the k entities whose name and
--                                 description best match query
-- Scores are positive, higher is better; a NULL or word-less query matches nothing.
-- Both read the workspace's tables through search_path, as every statement does.

-- name: add_backend
-- The backend column; filled right after, then its default goes.
ALTER TABLE workspace_info ADD COLUMN IF NOT EXISTS lexical_backend text NOT NULL DEFAULT 'tsvector'
    CONSTRAINT workspace_info_lexical_backend_check CHECK (lexical_backend IN ('bm25', 'tsvector'));

-- name: comment_backend
-- What the column says.
COMMENT ON COLUMN workspace_info.lexical_backend IS
    'Lexical search index: bm25 (pg_textsearch) or tsvector (built-in full text search), chosen at creation';

-- name: record_backend
-- The chosen backend ($1).
UPDATE workspace_info SET lexical_backend = $1;

-- name: drop_backend_default
-- No default: the migration always records the backend.
ALTER TABLE workspace_info ALTER COLUMN lexical_backend DROP DEFAULT;

-- name: name_key
-- The form in which an entity name and a phrase of the question are compared: the
-- sorted English stems of its words, stop words dropped ("The Debian packages" and
-- "debian package" give 'debian packag'); empty for a name of stop words only.
CREATE OR REPLACE FUNCTION lexical_name_key(name text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN array_to_string(tsvector_to_array(to_tsvector('english'::regconfig, name)), ' ');

-- name: name_key_index
-- Finds the entities a phrase of the question names, exactly or nearly.
CREATE INDEX IF NOT EXISTS entities_name_key_idx ON entities (lexical_name_key(name));

-- name: bm25_chunk_index
-- BM25 over chunk text.
CREATE INDEX IF NOT EXISTS text_chunks_content_bm25 ON text_chunks USING bm25 (content) WITH (text_config = 'english');

-- name: bm25_entity_name_index
-- BM25 over entity names (pg_textsearch indexes columns, not expressions).
CREATE INDEX IF NOT EXISTS entities_name_bm25 ON entities USING bm25 (name) WITH (text_config = 'english');

-- name: bm25_entity_description_index
-- BM25 over entity descriptions.
CREATE INDEX IF NOT EXISTS entities_description_bm25 ON entities USING bm25 (description) WITH (text_config = 'english');

-- name: bm25_chunks
-- The k chunks of highest BM25 score. The NULL guard matters: pg_textsearch 1.0.0
-- crashes the backend on a NULL query under a generic plan.
CREATE OR REPLACE FUNCTION lexical_chunks(query text, k bigint) RETURNS TABLE (id text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT hits.id, hits.score FROM (
        SELECT c.id, -(c.content <@> to_bm25query(query, 'text_chunks_content_bm25')) AS score
        FROM text_chunks c
        ORDER BY c.content <@> to_bm25query(query, 'text_chunks_content_bm25')
        LIMIT k
    ) hits
    WHERE hits.score > 0;
END
$$;

-- name: bm25_entities
-- The k entities of highest BM25 score, the sum of the name's and the description's
-- (each index searched for its own k best).
CREATE OR REPLACE FUNCTION lexical_entities(query text, k bigint) RETURNS TABLE (name text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT coalesce(n.name, d.name), coalesce(n.score, 0) + coalesce(d.score, 0) AS score
    FROM (
        SELECT e.name, -(e.name <@> to_bm25query(query, 'entities_name_bm25')) AS score
        FROM entities e
        ORDER BY e.name <@> to_bm25query(query, 'entities_name_bm25')
        LIMIT k
    ) n
    FULL JOIN (
        SELECT e.name, -(e.description <@> to_bm25query(query, 'entities_description_bm25')) AS score
        FROM entities e
        ORDER BY e.description <@> to_bm25query(query, 'entities_description_bm25')
        LIMIT k
    ) d ON d.name = n.name
    WHERE coalesce(n.score, 0) + coalesce(d.score, 0) > 0
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: fts_word
-- One lexeme (as to_tsvector gives it) as a tsquery, quoted for tsquery's input.
CREATE OR REPLACE FUNCTION lexical_word(lexeme text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery;

-- name: fts_chunk_index
-- Full text index over chunk text.
CREATE INDEX IF NOT EXISTS text_chunks_content_fts ON text_chunks USING gin (to_tsvector('english'::regconfig, content));

-- name: fts_entity_index
-- Full text index over entity names (weight A) and descriptions (weight B).
CREATE INDEX IF NOT EXISTS entities_text_fts ON entities USING gin (
    (setweight(to_tsvector('english'::regconfig, name), 'A')
     || setweight(to_tsvector('english'::regconfig, description), 'B'))
);

-- name: fts_chunks
-- The k chunks of highest BM25 score over the query's words (English stems, stop
-- words dropped), with each word counted once per chunk: a word weighs
-- ln(1 + (chunks - df + 0.5) / (df + 0.5)), so rare words and codes count most, and a
-- chunk's sum is scaled by (k1 + 1) / (1 + k1 * (1 - b + b * tokens / mean tokens)),
-- k1 = 1.2, b = 0.75, the mean over the chunks matching any query word. Without the
-- length scaling, long chunks that mention every common word outrank the answer and
-- fusion lowers MRR. Only the GIN index and the stored token counts are read: no
-- chunk text is parsed per query. Document frequencies are counted up to 10,000 and
-- the table size read from its statistics; words at that cap are left out when the
-- query has rarer ones.
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
        SELECT w.word, (
            SELECT count(*) FROM (
                SELECT 1 FROM text_chunks c
                WHERE to_tsvector('english'::regconfig, c.content) @@ w.word
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
        SELECT c.id, c.tokens, sum(u.weight) AS weight
        FROM used u
        JOIN text_chunks c ON to_tsvector('english'::regconfig, c.content) @@ u.word
        GROUP BY c.id
    ),
    mean AS (
        SELECT greatest(avg(tokens), 1) AS tokens FROM matched
    )
    SELECT m.id, (m.weight * 2.2 / (1 + 1.2 * (0.25 + 0.75 * m.tokens / a.tokens)))::float8 AS score
    FROM matched m CROSS JOIN mean a
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: fts_entities
-- The k entities of highest score over names and descriptions, as in lexical_chunks
-- (a word of the name counts twice; lengths are the stored context_tokens, else
-- the description's length in bytes / 4).
CREATE OR REPLACE FUNCTION lexical_entities(query text, k bigint) RETURNS TABLE (name text, score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
DECLARE
    total float8 := (SELECT greatest(c.reltuples, 1) FROM pg_class c WHERE c.oid = 'entities'::regclass);
BEGIN
    IF query IS NULL OR k IS NULL OR k <= 0 THEN
        RETURN;
    END IF;
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
               sum(u.weight * CASE WHEN to_tsvector('english'::regconfig, e.name) @@ u.word THEN 2 ELSE 1 END)
                   AS weight
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

-- name: drop_functions
-- Downgrade: the functions of either backend.
DROP FUNCTION IF EXISTS lexical_chunks(text, bigint), lexical_entities(text, bigint),
    lexical_word(text);

-- name: drop_indexes
-- Downgrade: the indexes of either backend, then the name key.
DROP INDEX IF EXISTS text_chunks_content_bm25, entities_name_bm25, entities_description_bm25,
    text_chunks_content_fts, entities_text_fts, entities_name_key_idx;

-- name: drop_name_key
-- Downgrade: the name key function (after its index).
DROP FUNCTION IF EXISTS lexical_name_key(text);

-- name: drop_backend
-- Downgrade: the backend column.
ALTER TABLE workspace_info DROP COLUMN lexical_backend;
