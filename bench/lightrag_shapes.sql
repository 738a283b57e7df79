-- SQL of bench/lightrag_shapes.py: upstream LightRAG 1.5.7's PostgreSQL storages, as
-- upstream creates them (the columns its readers use), filled with a synthesized
-- workspace. {chunk_table}, {entity_table} and {relation_table} are the vector tables
-- (named after the model), {graph} the AGE graph;
-- {dim} the vector dimension (lightrag_pg.db.sqlfile.render).

-- name: tables
-- The key-value, status and chunk-list tables, keyed by workspace.
CREATE TABLE IF NOT EXISTS lightrag_doc_full (
    id varchar(255), workspace varchar(255), doc_name varchar(1024), content text, meta jsonb,
    create_time timestamp(0) DEFAULT CURRENT_TIMESTAMP, update_time timestamp(0) DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS lightrag_doc_chunks (
    id varchar(255), workspace varchar(255), full_doc_id varchar(256), chunk_order_index integer,
    tokens integer, content text, file_path text, llm_cache_list jsonb DEFAULT '[]',
    create_time timestamp(0) DEFAULT CURRENT_TIMESTAMP, update_time timestamp(0) DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS lightrag_llm_cache (
    workspace varchar(255) NOT NULL, id varchar(255) NOT NULL, original_prompt text, return_value text,
    chunk_id varchar(255), cache_type varchar(32), queryparam jsonb,
    create_time timestamp DEFAULT CURRENT_TIMESTAMP, update_time timestamp DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS lightrag_doc_status (
    workspace varchar(255) NOT NULL, id varchar(255) NOT NULL, content_summary varchar(255),
    content_length int4, chunks_count int4, status varchar(64), file_path text, chunks_list jsonb DEFAULT '[]',
    track_id varchar(255), metadata jsonb DEFAULT '{}', error_msg text,
    created_at timestamp DEFAULT CURRENT_TIMESTAMP, updated_at timestamp DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS lightrag_entity_chunks (
    id varchar(512), workspace varchar(255), chunk_ids jsonb, count integer, PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS lightrag_relation_chunks (
    id varchar(512), workspace varchar(255), chunk_ids jsonb, count integer, PRIMARY KEY (workspace, id));

-- name: vector_tables
-- The three vector tables of one model (named after it, as upstream names them).
CREATE TABLE IF NOT EXISTS {chunk_table} (
    id varchar(255), workspace varchar(255), full_doc_id varchar(256), chunk_order_index integer,
    tokens integer, content text, content_vector vector({dim}), file_path text,
    create_time timestamp(0), update_time timestamp(0), PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS {entity_table} (
    id varchar(255), workspace varchar(255), entity_name varchar(512), content text,
    content_vector vector({dim}), create_time timestamp(0), update_time timestamp(0),
    chunk_ids varchar(255)[], file_path text, PRIMARY KEY (workspace, id));
CREATE TABLE IF NOT EXISTS {relation_table} (
    id varchar(255), workspace varchar(255), source_id varchar(512), target_id varchar(512), content text,
    content_vector vector({dim}), create_time timestamp(0), update_time timestamp(0),
    chunk_ids varchar(255)[], file_path text, PRIMARY KEY (workspace, id));

-- name: insert_docs
INSERT INTO lightrag_doc_full (workspace, id, doc_name, content) VALUES ($1, $2, $3, $4);

-- name: insert_statuses
INSERT INTO lightrag_doc_status (workspace, id, content_summary, content_length, chunks_count, status,
                                 file_path, chunks_list, track_id, metadata)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb);

-- name: insert_chunks
INSERT INTO lightrag_doc_chunks (workspace, id, full_doc_id, chunk_order_index, tokens, content, file_path,
                                 llm_cache_list)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb);

-- name: insert_cache
INSERT INTO lightrag_llm_cache (workspace, id, original_prompt, return_value, chunk_id, cache_type)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: insert_entity_chunks
INSERT INTO lightrag_entity_chunks (workspace, id, chunk_ids, count) VALUES ($1, $2, $3::jsonb, $4);

-- name: insert_relation_chunks
INSERT INTO lightrag_relation_chunks (workspace, id, chunk_ids, count) VALUES ($1, $2, $3::jsonb, $4);

-- name: insert_chunk_vectors
INSERT INTO {chunk_table} (workspace, id, full_doc_id, content, content_vector, file_path)
VALUES ($1, $2, $3, $4, $5::text::vector, $6);

-- name: insert_entity_vectors
INSERT INTO {entity_table} (workspace, id, entity_name, content, content_vector)
VALUES ($1, $2, $3, $4, $5::text::vector);

-- name: insert_relation_vectors
INSERT INTO {relation_table} (workspace, id, source_id, target_id, content, content_vector)
VALUES ($1, $2, $3, $4, $5, $6::text::vector);

-- name: pgtable_tables
-- Upstream's plain-table graph (pgtable_impl.py).
CREATE TABLE IF NOT EXISTS lightrag_graph_nodes (
    workspace text NOT NULL, namespace text NOT NULL DEFAULT 'chunk_entity_relation', id text NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}', PRIMARY KEY (workspace, namespace, id));
CREATE TABLE IF NOT EXISTS lightrag_graph_edges (
    workspace text NOT NULL, namespace text NOT NULL DEFAULT 'chunk_entity_relation', src_id text NOT NULL,
    tgt_id text NOT NULL, properties jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (workspace, namespace, src_id, tgt_id));

-- name: insert_pgtable_nodes
INSERT INTO lightrag_graph_nodes (workspace, id, properties) VALUES ($1, $2, $3::jsonb);

-- name: insert_pgtable_edges
INSERT INTO lightrag_graph_edges (workspace, src_id, tgt_id, properties) VALUES ($1, $2, $3, $4::jsonb);

-- name: age_graph
-- The AGE graph with upstream's labels: vertices "base", edges "DIRECTED" ($1: the graph).
SELECT ag_catalog.create_graph($1::name), ag_catalog.create_vlabel($1::cstring, 'base'),
       ag_catalog.create_elabel($1::cstring, 'DIRECTED');

-- name: insert_age_nodes
-- One vertex (its id from the label's sequence).
INSERT INTO {graph}."base" (properties) VALUES ($1::text::ag_catalog.agtype);

-- name: age_edges_table
CREATE TEMP TABLE shape_edges (src text, tgt text, properties text);

-- name: insert_age_edge_rows
INSERT INTO shape_edges VALUES ($1, $2, $3);

-- name: age_edges
-- Every staged edge between the vertices of its endpoints' names.
INSERT INTO {graph}."DIRECTED" (start_id, end_id, properties)
SELECT s.id, t.id, e.properties::ag_catalog.agtype
FROM shape_edges e
JOIN {graph}."base" s ON (s.properties::text::jsonb ->> 'entity_id') = e.src
JOIN {graph}."base" t ON (t.properties::text::jsonb ->> 'entity_id') = e.tgt;

-- name: drop_age_edges_table
DROP TABLE shape_edges;
