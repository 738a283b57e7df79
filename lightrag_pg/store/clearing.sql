-- Emptying a workspace: every document and everything derived from it, in one
-- transaction (store/clearing.py). Placeholder: {graph} the workspace's AGE graph
-- (filled by lightrag_pg.db.sqlfile.render).

-- name: documents
-- The documents marked 'processing' and how many documents there are, read once the
-- workspace's lock is held.
SELECT ARRAY(SELECT d.id FROM doc_status d WHERE d.status = 'processing' ORDER BY d.id) AS processing,
       (SELECT count(*) FROM doc_status) AS documents;

-- name: blockers
-- What stands in the way of emptying the workspace: how many of the processing
-- documents $3 a session indexes, holding their lock ($1: the lock key prefix of the
-- workspace's documents; the others are locked here until the transaction ends, so no
-- worker claims them meanwhile), and whether a re-embed runs ($2: its lock key). It
-- names no table, so on a Citus cluster the locks are the coordinator's, where every
-- client takes them.
SELECT
    (SELECT count(*) FROM unnest($3::text[]) AS k
     WHERE NOT pg_try_advisory_xact_lock(hashtextextended($1 || k, 0))) AS indexing,
    NOT pg_try_advisory_xact_lock(hashtextextended($2, 0)) AS reembedding;

-- name: truncate_content
-- Every document, its status and chunks, the entities and relations, their
-- fragments and links to documents, and every vector (staged re-embed vectors go
-- with them through their foreign keys). The chunks' term counts go by the
-- text_chunks TRUNCATE trigger; TRUNCATE fires no row triggers, so the AGE mirror is
-- emptied by truncate_graph. The configuration (workspace_info, reembed_state) stays.
TRUNCATE doc_status, full_docs, text_chunks, chunk_vectors,
         entities, entity_vectors, entity_fragments, doc_entities,
         relations, relation_vectors, relation_fragments, doc_relations
CASCADE;

-- name: truncate_cache
-- Every cached LLM answer (extraction, summaries, keywords, queries, query memo).
TRUNCATE llm_cache;

-- name: truncate_graph
-- The AGE mirror of entities and relations: its vertex and edge labels.
TRUNCATE {graph}."entity", {graph}."DIRECTED";
