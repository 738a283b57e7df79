-- SQL reading an upstream LightRAG's PostgreSQL storages (lightrag-hku 1.5.7): its
-- LIGHTRAG_* tables, keyed by a workspace column, and its graph, in Apache AGE or
-- in its plain tables (pgtable). Every read is one page, after the last key of
-- the page before ($2 or the pair $2, $3; '' from the start, a graph id '0'), in key
-- order, so that the primary key's index serves it.
-- {table} and {graph} are names read from the source's catalog. The session reads one
-- snapshot, read-only (begin_snapshot).

-- name: begin_snapshot
-- The whole import reads one snapshot and writes nothing.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;

-- name: tables
-- The LIGHTRAG tables the session sees, with their row counts of workspace $1 (NULL for
-- a table without a workspace column) and, for vector tables, the vector type.
SELECT c.relname::text AS name,
       (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
        WHERE a.attrelid = c.oid AND a.attname = 'content_vector' AND NOT a.attisdropped) AS vector_type,
       EXISTS (SELECT 1 FROM pg_attribute a
               WHERE a.attrelid = c.oid AND a.attname = 'workspace' AND NOT a.attisdropped) AS keyed
FROM pg_class c
WHERE c.relkind IN ('r', 'p') AND c.relname::text LIKE 'lightrag\_%' AND pg_table_is_visible(c.oid)
ORDER BY 1;

-- name: count_rows
-- Rows of workspace $1 in {table}.
SELECT count(*) FROM {table} WHERE workspace = $1;

-- name: has_rows
-- Whether {table} holds a row of workspace $1.
SELECT EXISTS (SELECT 1 FROM {table} WHERE workspace = $1);

-- name: age_graph
-- Whether AGE is installed and holds the graph $1, and whether that graph has a vertex.
SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'ag_catalog')
   AND EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = $1 AND c.relname = '_ag_label_vertex');

-- name: age_count_vertices
SELECT count(*) FROM {graph}._ag_label_vertex;

-- name: age_count_edges
SELECT count(*) FROM {graph}._ag_label_edge;

-- name: pgtable_graph
-- Whether the plain-table graph (when its tables exist) holds nodes of workspace $1 and namespace $2.
SELECT EXISTS (SELECT 1 FROM lightrag_graph_nodes WHERE workspace = $1 AND namespace = $2);

-- name: pgtable_count_nodes
SELECT count(*) FROM lightrag_graph_nodes WHERE workspace = $1 AND namespace = $2;

-- name: pgtable_count_edges
SELECT count(*) FROM lightrag_graph_edges WHERE workspace = $1 AND namespace = $2;

-- name: documents
SELECT id, content, doc_name AS file_path FROM lightrag_doc_full
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: statuses
SELECT id, status, content_summary, content_length, chunks_count, chunks_list::text AS chunks_list,
       file_path, track_id, metadata::text AS metadata, error_msg, created_at, updated_at
FROM lightrag_doc_status
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: chunks
SELECT id, full_doc_id, chunk_order_index, tokens, content, file_path FROM lightrag_doc_chunks
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: cache
SELECT id, original_prompt, return_value, chunk_id, cache_type, create_time FROM lightrag_llm_cache
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: entity_chunks
SELECT id, chunk_ids::text AS chunk_ids FROM lightrag_entity_chunks
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: relation_chunks
SELECT id, chunk_ids::text AS chunk_ids FROM lightrag_relation_chunks
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: chunk_vectors
SELECT id, id AS chunk_id, content, content_vector FROM {table}
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: entity_vectors
SELECT id, entity_name, content, content_vector FROM {table}
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: relation_vectors
SELECT id, source_id, target_id, content, content_vector FROM {table}
WHERE workspace = $1 AND id > $2
ORDER BY id LIMIT $3;

-- name: age_vertices
-- Vertices of the AGE graph {graph}, by vertex id ($1: the last id read, as text).
SELECT v.id::text AS gid, v.properties::text AS properties
FROM {graph}._ag_label_vertex v
WHERE v.id OPERATOR(ag_catalog.>) $1::text::ag_catalog.graphid
ORDER BY v.id LIMIT $2;

-- name: age_edges
-- Edges of the AGE graph {graph} with their endpoints' names (not their properties: a hub's
-- description would come with each of its edges), by edge id.
SELECT e.id::text AS gid,
       ag_catalog.agtype_access_operator(s.properties, '"entity_id"'::ag_catalog.agtype)::text AS src,
       ag_catalog.agtype_access_operator(t.properties, '"entity_id"'::ag_catalog.agtype)::text AS tgt,
       e.properties::text AS properties
FROM {graph}._ag_label_edge e
JOIN {graph}._ag_label_vertex s ON s.id OPERATOR(ag_catalog.=) e.start_id
JOIN {graph}._ag_label_vertex t ON t.id OPERATOR(ag_catalog.=) e.end_id
WHERE e.id OPERATOR(ag_catalog.>) $1::text::ag_catalog.graphid
ORDER BY e.id LIMIT $2;

-- name: pgtable_nodes
SELECT id, properties::text AS properties FROM lightrag_graph_nodes
WHERE workspace = $1 AND namespace = $4 AND id > $2
ORDER BY id LIMIT $3;

-- name: pgtable_edges
SELECT src_id, tgt_id, properties::text AS properties FROM lightrag_graph_edges
WHERE workspace = $1 AND namespace = $5 AND (src_id, tgt_id) > ($2, $3)
ORDER BY src_id, tgt_id LIMIT $4;
