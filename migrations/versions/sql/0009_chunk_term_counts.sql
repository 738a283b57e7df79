-- SQL of migration 0009: term counts for full text search over chunks (tsvector backend).
-- text_chunks gains a stored tsvector of its text, kept by PostgreSQL (a generated
-- column), so lexical_chunks reads how often each query word occurs in a chunk without
-- parsing any chunk text per query.

-- name: add_lexemes
-- The chunk text's English lexemes with their positions; PostgreSQL fills it on every
-- insert and update of content (an upgrade rewrites the table once to fill it).
ALTER TABLE text_chunks ADD COLUMN IF NOT EXISTS lexemes tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED;

-- name: comment_lexemes
-- What the column says.
COMMENT ON COLUMN text_chunks.lexemes IS
    'English lexemes of content with their positions (full text search term counts)';

-- name: lexemes_index
-- Full text index over the stored lexemes.
CREATE INDEX IF NOT EXISTS text_chunks_lexemes_fts ON text_chunks USING gin (lexemes);

-- name: drop_expression_index
-- The index over to_tsvector(content) that the stored lexemes replace.
DROP INDEX IF EXISTS text_chunks_content_fts;

-- name: fts_chunks
-- The k chunks of highest BM25 score over the query's words (English stems, stop
-- words dropped): a word weighs ln(1 + (chunks - df + 0.5) / (df + 0.5)), so rare
-- words and codes count most, times tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens /
-- mean tokens)), tf its count in the chunk, k1 = 1.2, b = 0.75 (the usual BM25
-- constants), the mean over the chunks matching any query word. Without the length
-- scaling, long chunks that mention every common word outrank the answer. The counts
-- come from the stored lexemes: the query's words are marked (setweight) and kept
-- (ts_filter), and their positions counted, so no chunk text is parsed per query. They
-- are read only for chunks that can still reach the first k: a chunk scores at least
-- its score with every count 1 (found from the index alone) and less than its word
-- weights times k1 + 1, so one whose most is below the k-th best least is skipped
-- (the result is that of reading every count).
-- Document frequencies are counted up to 10,000 and the table size read from its
-- statistics; words at that cap are left out when the query has rarer ones.
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
            SELECT count(*) FROM (
                SELECT 1 FROM text_chunks c WHERE c.lexemes @@ lexical_word(w.lexeme) LIMIT 10000
            ) m
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
    matched AS MATERIALIZED (
        SELECT c.id, c.tokens, c.lexemes, sum(u.weight) AS weight
        FROM used u
        JOIN text_chunks c ON c.lexemes @@ lexical_word(u.lexeme)
        GROUP BY c.id
    ),
    mean AS (
        SELECT greatest(avg(tokens), 1) AS tokens FROM matched
    ),
    bounds AS MATERIALIZED (
        SELECT m.id, m.tokens, m.lexemes,
               m.weight * 2.2 / (1 + 1.2 * (0.25 + 0.75 * m.tokens / a.tokens)) AS least_score,
               m.weight * 2.2 AS most_score
        FROM matched m CROSS JOIN mean a
    ),
    cutoff AS (
        SELECT min(least_score) AS score FROM (SELECT least_score FROM bounds ORDER BY least_score DESC LIMIT k) b
    ),
    counts AS (
        SELECT b.id, b.tokens, u.weight, cardinality(t.positions) AS tf
        FROM bounds b
        CROSS JOIN LATERAL unnest(ts_filter(setweight(b.lexemes, 'A', (SELECT array_agg(lexeme) FROM used)), '{a}')) t
        JOIN used u ON u.lexeme = t.lexeme
        WHERE b.most_score >= (SELECT score FROM cutoff)
    )
    SELECT c.id, sum(c.weight * c.tf * 2.2 / (c.tf + 1.2 * (0.25 + 0.75 * c.tokens / a.tokens)))::float8 AS score
    FROM counts c CROSS JOIN mean a
    GROUP BY c.id
    ORDER BY 2 DESC, 1
    LIMIT k;
END
$$;

-- name: drop_lexemes
-- Downgrade: the stored lexemes and their index (revision 0008's expression index and
-- function are restored by the downgrade).
ALTER TABLE text_chunks DROP COLUMN IF EXISTS lexemes;
