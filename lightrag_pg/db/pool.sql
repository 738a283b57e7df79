-- Per-connection setup of the workspace pool.

-- name: extensions_installed
-- Whether the AGE and the Citus extensions are installed in this database.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'age') AS age,
       EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus;

-- name: custom_plans
-- On a Citus coordinator: plan every execution of a prepared statement with its values
-- (Citus cannot plan a generic plan of our statements; see init_connection).
SET plan_cache_mode = force_custom_plan;

-- name: load_age
-- Load AGE's library into the session so cypher() works; needs the privilege to LOAD.
LOAD 'age';

-- name: ping
-- The cheapest round trip: whether the server answers at all.
SELECT 1;

-- name: point_at
-- Point this session at a workspace (value from identifiers.search_path), until pointed elsewhere.
SELECT set_config('search_path', $1, false);

-- name: no_statement_timeout
-- Lift the statement timeout for this session's statements, until restored.
SET statement_timeout = 0;

-- name: restore_statement_timeout
-- Back to the session's own statement timeout (the pool's, set when it connected).
RESET statement_timeout;
