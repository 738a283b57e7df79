-- SQL of migration 0013: the entities of highest degree, read from an index.
-- Retrieval ranks the edges of the entities a query found by their endpoints' degrees.
-- Around a hub (21k edges at 300k entities) looking up every neighbour's degree was most
-- of the statement (55 of 110 ms). The hubs' best edges lead to other high-degree
-- entities, which this index lists in order, so the statement checks a hub's edges
-- against the entities of highest degree and looks up only what can still be kept
-- (store/retrieval.sql, high_degrees). {schema}: the workspace's quoted schema.

-- name: degree_index
-- Entities by degree, each with its name: the highest come from an index-only scan.
CREATE INDEX IF NOT EXISTS entities_degree ON {schema}.entities (degree) INCLUDE (name);

-- name: drop_degree_index
-- Downgrade: the index on degree.
DROP INDEX IF EXISTS {schema}.entities_degree;
