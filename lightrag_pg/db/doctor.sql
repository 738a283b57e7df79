-- The doctor: set-based checks of one workspace's tables, vectors, AGE mirror and
-- doc_status against each other, and the repairs that are safe to make.
-- Placeholders: {schema} the workspace, {graph} its graph, {vlabel} and {elabel} the
-- label ids of "entity" and "DIRECTED" (filled by lightrag_pg.db.sqlfile.render).
-- Each finding is a row (kind, item); item is the row's key as a text array.
-- graphid comparisons name AGE's operator, so any search_path works.

-- name: table_findings
-- Vectors, rows and stored degrees that disagree, and the documents marked 'processing'
-- (kind 'processing': those whose lock no session holds are stuck, see unlocked_documents).
SELECT 'entity_without_vector' AS kind, ARRAY[e.name] AS item
FROM {schema}.entities e
WHERE NOT EXISTS (SELECT 1 FROM {schema}.entity_vectors v WHERE v.name = e.name)
UNION ALL
SELECT 'entity_vector_without_entity', ARRAY[v.name]
FROM {schema}.entity_vectors v
WHERE NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE e.name = v.name)
UNION ALL
SELECT 'relation_without_vector', ARRAY[r.src, r.tgt]
FROM {schema}.relations r
WHERE NOT EXISTS (SELECT 1 FROM {schema}.relation_vectors v WHERE v.src = r.src AND v.tgt = r.tgt)
UNION ALL
SELECT 'relation_vector_without_relation', ARRAY[v.src, v.tgt]
FROM {schema}.relation_vectors v
WHERE NOT EXISTS (SELECT 1 FROM {schema}.relations r WHERE r.src = v.src AND r.tgt = v.tgt)
UNION ALL
SELECT 'relation_without_endpoint', ARRAY[r.src, r.tgt]
FROM {schema}.relations r
WHERE NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE e.name = r.src)
   OR NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE e.name = r.tgt)
UNION ALL
SELECT 'wrong_degree', ARRAY[e.name]
FROM {schema}.entities e
LEFT JOIN (
    SELECT t.name, count(*) AS n
    FROM (SELECT src AS name FROM {schema}.relations UNION ALL SELECT tgt FROM {schema}.relations) t
    GROUP BY t.name
) d ON d.name = e.name
WHERE e.degree <> coalesce(d.n, 0)
UNION ALL
SELECT 'chunk_without_vector', ARRAY[c.id]
FROM {schema}.text_chunks c
WHERE NOT EXISTS (SELECT 1 FROM {schema}.chunk_vectors v WHERE v.chunk_id = c.id)
UNION ALL
SELECT 'chunk_vector_without_chunk', ARRAY[v.chunk_id]
FROM {schema}.chunk_vectors v
WHERE NOT EXISTS (SELECT 1 FROM {schema}.text_chunks c WHERE c.id = v.chunk_id)
UNION ALL
SELECT 'processing', ARRAY[d.id]
FROM {schema}.doc_status d
WHERE d.status = 'processing';

-- name: unlocked_documents
-- Of the document ids $2, those whose lock ($1: the document lock key prefix,
-- advisory.lock_key("doc", workspace, "")) no session holds. A statement of its own,
-- naming no table, so that on a Citus cluster it reads the coordinator's locks, where
-- every client takes them.
SELECT k FROM unnest($2::text[]) AS k
CROSS JOIN LATERAL (SELECT hashtextextended($1 || k, 0) AS h) x
WHERE NOT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = ((x.h >> 32) & 4294967295)::oid
      AND l.objid = (x.h & 4294967295)::oid)
ORDER BY k;

-- name: mirror_findings
-- Vertices and edges missing from, or extra in, the AGE mirror (ids are the rows' ids).
SELECT 'missing_vertex' AS kind, ARRAY[e.name] AS item
FROM {schema}.entities e
WHERE NOT EXISTS (SELECT 1 FROM {graph}."entity" v WHERE v.id OPERATOR(ag_catalog.=) ag_catalog._graphid({vlabel}, e.id))
UNION ALL
SELECT 'extra_vertex', ARRAY[v.id::text]
FROM {graph}."entity" v
WHERE NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE ag_catalog._graphid({vlabel}, e.id) OPERATOR(ag_catalog.=) v.id)
UNION ALL
SELECT 'missing_edge', ARRAY[r.src, r.tgt]
FROM {schema}.relations r
WHERE NOT EXISTS (SELECT 1 FROM {graph}."DIRECTED" d WHERE d.id OPERATOR(ag_catalog.=) ag_catalog._graphid({elabel}, r.id))
UNION ALL
SELECT 'extra_edge', ARRAY[d.id::text]
FROM {graph}."DIRECTED" d
WHERE NOT EXISTS (SELECT 1 FROM {schema}.relations r WHERE ag_catalog._graphid({elabel}, r.id) OPERATOR(ag_catalog.=) d.id);

-- name: label_ids
-- Name and id of every label of graph $1.
SELECT l.name, l.id
FROM ag_catalog.ag_label l
JOIN ag_catalog.ag_graph g ON g.graphid = l.graph
WHERE g.name = CAST($1 AS name);

-- name: delete_extra_edges
-- Repair: edges that mirror no relation.
DELETE FROM {graph}."DIRECTED" d
WHERE NOT EXISTS (SELECT 1 FROM {schema}.relations r WHERE ag_catalog._graphid({elabel}, r.id) OPERATOR(ag_catalog.=) d.id);

-- name: delete_extra_vertices
-- Repair: vertices that mirror no entity, with any edge still touching them.
WITH extra AS (
    SELECT v.id FROM {graph}."entity" v
    WHERE NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE ag_catalog._graphid({vlabel}, e.id) OPERATOR(ag_catalog.=) v.id)
), edges AS (
    DELETE FROM {graph}."DIRECTED" d USING extra x WHERE d.start_id OPERATOR(ag_catalog.=) x.id OR d.end_id OPERATOR(ag_catalog.=) x.id
)
DELETE FROM {graph}."entity" v USING extra x WHERE v.id OPERATOR(ag_catalog.=) x.id;

-- name: remirror_entities
-- Repair: re-run the mirror trigger (a no-op update) for entities without a vertex.
UPDATE {schema}.entities e SET name = e.name
WHERE NOT EXISTS (SELECT 1 FROM {graph}."entity" v WHERE v.id OPERATOR(ag_catalog.=) ag_catalog._graphid({vlabel}, e.id));

-- name: remirror_relations
-- Repair: re-run the mirror trigger (a no-op update) for relations without an edge.
UPDATE {schema}.relations r SET src = r.src
WHERE NOT EXISTS (SELECT 1 FROM {graph}."DIRECTED" d WHERE d.id OPERATOR(ag_catalog.=) ag_catalog._graphid({elabel}, r.id));

-- name: delete_orphan_vectors
-- Repair: vectors whose row is gone (only possible if a foreign key was dropped).
WITH ev AS (
    DELETE FROM {schema}.entity_vectors v
    WHERE NOT EXISTS (SELECT 1 FROM {schema}.entities e WHERE e.name = v.name)
), rv AS (
    DELETE FROM {schema}.relation_vectors v
    WHERE NOT EXISTS (SELECT 1 FROM {schema}.relations r WHERE r.src = v.src AND r.tgt = v.tgt)
)
DELETE FROM {schema}.chunk_vectors v
WHERE NOT EXISTS (SELECT 1 FROM {schema}.text_chunks c WHERE c.id = v.chunk_id);

-- name: lock_relations
-- Repair: no relation is written until the repair commits, so no degree trigger's
-- change can fall between the recount and its update.
LOCK TABLE {schema}.relations IN SHARE MODE;

-- name: recount_degrees
-- Repair: the stored degree of every entity that disagrees, recounted from relations.
UPDATE {schema}.entities e SET degree = c.n
FROM (
    SELECT x.name, coalesce(d.n, 0) AS n
    FROM {schema}.entities x
    LEFT JOIN (
        SELECT t.name, count(*) AS n
        FROM (SELECT src AS name FROM {schema}.relations UNION ALL SELECT tgt FROM {schema}.relations) t
        GROUP BY t.name
    ) d ON d.name = x.name
) c
WHERE e.name = c.name AND e.degree <> c.n;

-- name: lock_documents
-- Repair: of the document ids $2, those whose lock ($1: the lock key prefix) this
-- transaction takes; the transaction-level try-lock keeps a worker from claiming one
-- while the repair runs, and skips any document a worker took since the check. No
-- table is named, so on a Citus cluster the locks are the coordinator's.
SELECT k FROM unnest($2::text[]) AS k WHERE pg_try_advisory_xact_lock(hashtextextended($1 || k, 0)) ORDER BY k;

-- name: release_stuck_documents
-- Repair: put the stuck documents $1 (locked by lock_documents) back to pending so the
-- next run processes them.
UPDATE {schema}.doc_status d SET status = 'pending', updated_at = now()
WHERE d.status = 'processing' AND d.id = ANY($1::text[])
RETURNING d.id;
