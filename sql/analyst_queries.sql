-- Queries for analysts reading a lightrag_pg workspace directly.
-- Replace "books" with your workspace (schema) name; its AGE graph is "books_kg".

-- name: top_entities
-- The most connected entities.
SELECT name, entity_type, degree, chunk_count, left(description, 120) AS description
FROM books.entity_overview
ORDER BY degree DESC, name
LIMIT 20;

-- name: neighbours
-- Relations of one entity, strongest first (relations are undirected: src < tgt).
SELECT CASE WHEN src = 'Acme' THEN tgt ELSE src END AS neighbour, keywords, weight, edge_degree
FROM books.relation_overview
WHERE 'Acme' IN (src, tgt)
ORDER BY weight DESC, edge_degree DESC;

-- name: documents_of_entity
-- Which documents contributed to an entity, with their files.
SELECT d.id, d.file_path, s.status, s.updated_at
FROM books.doc_entities de
JOIN books.full_docs d ON d.id = de.doc_id
JOIN books.doc_status s ON s.id = d.id
WHERE de.entity_name = 'Acme';

-- name: chunks_of_entity
-- The text an entity was extracted from.
SELECT c.doc_id, c.chunk_order_index, left(c.content, 200) AS excerpt
FROM books.entities e
CROSS JOIN LATERAL unnest(e.source_ids) AS s(chunk_id)
JOIN books.text_chunks c ON c.id = s.chunk_id
WHERE e.name = 'Acme'
ORDER BY c.doc_id, c.chunk_order_index;

-- name: processing_state
-- Documents per status, and the failures with their messages.
SELECT status, count(*) FROM books.doc_status GROUP BY status;
SELECT id, file_path, error_msg, updated_at FROM books.doc_status WHERE status = 'failed';

-- name: similar_entities
-- Entities whose embeddings are closest to a given entity's (cosine).
SELECT v.name, 1 - (v.embedding <=> q.embedding) AS similarity
FROM books.entity_vectors v, (SELECT embedding FROM books.entity_vectors WHERE name = 'Acme') q
WHERE v.name <> 'Acme'
ORDER BY v.embedding <=> q.embedding
LIMIT 10;

-- name: cypher_two_hops
-- The same graph through Apache AGE: entities two hops from one entity.
LOAD 'age';
SET search_path = ag_catalog, "$user", public;
SELECT * FROM cypher('books_kg', $$
    MATCH (a:entity {entity_id: 'Acme'})-[:DIRECTED]-(b)-[:DIRECTED]-(c)
    WHERE c <> a
    RETURN DISTINCT c.entity_id, c.entity_type
$$) AS (name agtype, entity_type agtype);
