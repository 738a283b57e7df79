-- SQL of bench/scale.py: take a freshly migrated workspace's indexes, constraints and
-- mirror triggers off for a bulk load, put them back from their catalog definitions,
-- fill the AGE mirror in bulk, and read sizes. Placeholders: {schema} the workspace,
-- {graph} its graph, {vlabel} and {elabel} the AGE label ids (lightrag_pg.db.sqlfile.render).

-- name: deferrable
-- Every primary key, unique and foreign key constraint, every other index and every
-- user trigger of the tables of schema $1, with the DDL that drops (or disables) it and
-- the DDL that recreates (or enables) it, both built from the catalog with quoted
-- identifiers. step orders the rebuild: keys first, then plain indexes (hnsw last),
-- then foreign keys, then triggers; drops run in the reverse order.
WITH tables AS (
    SELECT c.oid, n.nspname, c.relname
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind = 'r'
),
keys AS (
    SELECT CASE k.contype WHEN 'f' THEN 3 ELSE 0 END AS step,
           CASE k.contype WHEN 'f' THEN 'foreign key' WHEN 'p' THEN 'primary key' ELSE 'unique' END AS kind,
           t.relname AS table_name, k.conname::text AS name,
           format('ALTER TABLE %I.%I DROP CONSTRAINT %I', t.nspname, t.relname, k.conname) AS drop_ddl,
           format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', t.nspname, t.relname, k.conname,
                  pg_get_constraintdef(k.oid)) AS create_ddl
    FROM pg_constraint k JOIN tables t ON t.oid = k.conrelid
    WHERE k.contype IN ('p', 'u', 'f')
),
indexes AS (
    SELECT CASE WHEN a.amname = 'hnsw' THEN 2 ELSE 1 END AS step,
           a.amname::text AS kind, t.relname AS table_name, ic.relname::text AS name,
           format('DROP INDEX %I.%I', t.nspname, ic.relname) AS drop_ddl,
           pg_get_indexdef(i.indexrelid) AS create_ddl
    FROM pg_index i
    JOIN tables t ON t.oid = i.indrelid
    JOIN pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_am a ON a.oid = ic.relam
    WHERE NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))
),
triggers AS (
    SELECT 4 AS step, 'trigger'::text AS kind, t.relname AS table_name, g.tgname::text AS name,
           format('ALTER TABLE %I.%I DISABLE TRIGGER %I', t.nspname, t.relname, g.tgname) AS drop_ddl,
           format('ALTER TABLE %I.%I ENABLE TRIGGER %I', t.nspname, t.relname, g.tgname) AS create_ddl
    FROM pg_trigger g JOIN tables t ON t.oid = g.tgrelid
    WHERE NOT g.tgisinternal
)
SELECT * FROM keys
UNION ALL SELECT * FROM indexes
UNION ALL SELECT * FROM triggers
ORDER BY step, table_name, name;

-- name: label_ids
-- Name and id of every label of graph $1.
SELECT l.name, l.id
FROM ag_catalog.ag_label l
JOIN ag_catalog.ag_graph g ON g.graphid = l.graph
WHERE g.name = CAST($1 AS name);

-- name: graph_enabled
-- Whether the workspace mirrors into an AGE graph.
SELECT graph_enabled FROM {schema}.workspace_info;

-- name: has_chunk_terms
-- Whether workspace $1 keeps chunk term counts in chunk_terms (tsvector backend, migration 0012).
SELECT to_regclass(format('%I.chunk_terms', $1::text)) IS NOT NULL;

-- name: fill_chunk_terms
-- Every lexeme of every loaded chunk as the text_chunks triggers write it, in one statement.
INSERT INTO {schema}.chunk_terms (lexeme, chunk_id, tf, tokens)
SELECT t.lexeme, c.id, cardinality(t.positions), c.tokens
FROM {schema}.text_chunks c CROSS JOIN LATERAL unnest(c.lexemes) t;

-- name: fill_corpus_counts
-- The exact chunk and entity counts lexical ranking reads (migration 0016), as the
-- text_chunks and entities triggers would have added them, in one statement.
INSERT INTO {schema}.corpus_counts (id, chunks, entities)
SELECT gen_random_uuid(), (SELECT count(*) FROM {schema}.text_chunks), (SELECT count(*) FROM {schema}.entities);

-- name: mirror_entities
-- Every entity as the vertex the entity trigger writes (same id and properties), in one statement.
INSERT INTO {graph}."entity" (id, properties)
SELECT ag_catalog._graphid({vlabel}, e.id),
       jsonb_build_object(
           'entity_id', e.name,
           'entity_type', e.entity_type,
           'description', e.description,
           'source_id', array_to_string(e.source_ids, '<SEP>'),
           'file_path', array_to_string(e.file_paths, '<SEP>'),
           'created_at', extract(epoch FROM e.created_at)::bigint
       )::text::ag_catalog.agtype
FROM {schema}.entities e;

-- name: mirror_relations
-- Every relation as the edge the relation trigger writes (same id, endpoints and
-- properties), in one statement.
INSERT INTO {graph}."DIRECTED" (id, start_id, end_id, properties)
SELECT ag_catalog._graphid({elabel}, r.id),
       ag_catalog._graphid({vlabel}, s.id),
       ag_catalog._graphid({vlabel}, t.id),
       ag_catalog.agtype_build_map(
           'weight', r.weight::float8,
           'keywords', r.keywords,
           'description', r.description,
           'source_id', array_to_string(r.source_ids, '<SEP>'),
           'file_path', array_to_string(r.file_paths, '<SEP>'),
           'created_at', extract(epoch FROM r.created_at)::bigint
       )
FROM {schema}.relations r
JOIN {schema}.entities s ON s.name = r.src
JOIN {schema}.entities t ON t.name = r.tgt;

-- name: sizes
-- Every table of schemas $1 (the workspace) and $2 (its graph): rows (estimated after
-- ANALYZE), heap with TOAST, and all its indexes, in bytes; then each index on its own.
SELECT n.nspname AS schema_name, c.relname AS name, 'table' AS kind, c.reltuples::bigint AS row_estimate,
       pg_table_size(c.oid) AS bytes, pg_indexes_size(c.oid) AS index_bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ($1, $2) AND c.relkind = 'r' AND pg_table_size(c.oid) > 8192
UNION ALL
SELECT n.nspname, ic.relname, a.amname, NULL, pg_relation_size(ic.oid), NULL
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = ic.relnamespace
JOIN pg_am a ON a.oid = ic.relam
WHERE n.nspname IN ($1, $2) AND pg_relation_size(ic.oid) > 8192
ORDER BY kind DESC, bytes DESC;

-- name: settings
-- The server settings that bear on the figures.
SELECT name, current_setting(name) AS value
FROM pg_settings
WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'max_parallel_maintenance_workers',
               'work_mem', 'effective_cache_size', 'hnsw.ef_search', 'hnsw.iterative_scan', 'server_version')
ORDER BY name;

-- name: bare_top_k
-- The baseline: a bare pgvector top-k on entity_vectors.
SELECT name FROM entity_vectors ORDER BY embedding <=> $1 LIMIT $2;

-- name: counts
-- Rows of the tables retrieval reads.
SELECT (SELECT count(*) FROM {schema}.entities) AS entities,
       (SELECT count(*) FROM {schema}.relations) AS relations,
       (SELECT count(*) FROM {schema}.text_chunks) AS chunks,
       (SELECT count(*) FROM {schema}.entity_vectors) AS entity_vectors,
       (SELECT count(*) FROM {schema}.relation_vectors) AS relation_vectors,
       (SELECT count(*) FROM {schema}.chunk_vectors) AS chunk_vectors;
