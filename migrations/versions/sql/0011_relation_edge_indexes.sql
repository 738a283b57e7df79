-- SQL of migration 0011: the edges of an entity read from its index alone.
-- Retrieval reads every relation touching the entities a query found (their weights
-- order them, their token counts fill the budget). Read through relations_pkey and
-- relations_tgt_idx, each of those edges was a heap fetch: around a hub, 21,087
-- scattered rows (33 ms of a 214 ms query at 300k entities). Covering indexes on each
-- endpoint carry the other endpoint, the weight and the token count, so the edges come
-- from an index-only scan (once VACUUM has marked the pages all-visible, which
-- autovacuum does after a batch). Their other endpoints' degrees are looked up one
-- by one; an index on entity names including the degree spares the heap fetch there
-- too (21,065 look-ups around that hub: 92 -> 56 ms). {schema}: the workspace's quoted
-- schema.

-- name: src_edges
-- A relation's edges by its first endpoint.
CREATE INDEX IF NOT EXISTS relations_src_edges ON {schema}.relations (src) INCLUDE (tgt, weight, context_tokens);

-- name: tgt_edges
-- A relation's edges by its second endpoint; replaces relations_tgt_idx.
CREATE INDEX IF NOT EXISTS relations_tgt_edges ON {schema}.relations (tgt) INCLUDE (src, weight, context_tokens);

-- name: name_degree
-- An entity's degree by its name. A degree change is no longer a HOT update, which
-- costs the writer little: the merges that precede it rewrite indexed columns anyway.
CREATE INDEX IF NOT EXISTS entities_name_degree ON {schema}.entities (name) INCLUDE (degree);

-- name: drop_tgt_idx
-- The plain index on the second endpoint, which relations_tgt_edges covers.
DROP INDEX IF EXISTS {schema}.relations_tgt_idx;

-- name: restore_tgt_idx
-- Downgrade: the plain index on the second endpoint.
CREATE INDEX IF NOT EXISTS relations_tgt_idx ON {schema}.relations (tgt);

-- name: drop_edges
-- Downgrade: the covering indexes.
DROP INDEX IF EXISTS {schema}.relations_src_edges, {schema}.relations_tgt_edges, {schema}.entities_name_degree;
