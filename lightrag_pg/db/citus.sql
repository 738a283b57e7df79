-- Citus: workspaces as distributed schemas (see lightrag_pg/db/citus.py).

-- name: installed
-- Whether the citus extension is installed in this database.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');

-- name: node_role
-- Whether this node is the coordinator, and whether it distributes every new schema
-- (citus.enable_schema_based_sharding); only run where citus is installed.
SELECT citus_is_coordinator() AS coordinator,
       current_setting('citus.enable_schema_based_sharding')::boolean AS schema_sharding;

-- name: is_distributed
-- Whether the schema $1 is a distributed schema; only run where citus is installed.
SELECT EXISTS (SELECT 1 FROM pg_namespace n JOIN pg_catalog.pg_dist_schema d ON d.schemaid = n.oid
               WHERE n.nspname = $1);

-- name: set_schema_sharding
-- Whether the next CREATE SCHEMA of this transaction makes a distributed schema ($1: on/off).
SELECT set_config('citus.enable_schema_based_sharding', $1, true);

-- name: allow_triggers
-- Let this transaction create triggers on the distributed schema's tables: each fires on
-- the shard and touches only tables of the same schema, whose shards live on the same node.
SELECT set_config('citus.enable_unsafe_triggers', 'on', true);

-- name: pin_function_commands
-- One ALTER FUNCTION per function of the schema $1 whose body may read its tables (not
-- IMMUTABLE): it runs with the workspace on its search_path (a worker's session has its
-- own) and may query the schema's own shards from inside a query routed to them (they
-- are always on the same node: the schema moves as one unit). Commands come from the
-- catalog, names quoted by format().
SELECT format(
    'ALTER FUNCTION %s SET search_path = %I, public SET citus.allow_nested_distributed_execution = on',
    p.oid::regprocedure, n.nspname)
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.prokind = 'f' AND p.provolatile <> 'i'
ORDER BY p.oid;

-- name: role_settings_commands
-- The session settings every lightrag_pg connection sets (db/pool.py server_settings) as
-- defaults of the current role in this database, so the workers' sessions that run the
-- routed queries use them too (Citus propagates ALTER ROLE ... SET to every node). $1:
-- the setting names, $2: their values.
SELECT format('ALTER ROLE %I IN DATABASE %I SET %s = %L', current_user, current_database(), s.name, s.value)
FROM unnest($1::text[], $2::text[]) AS s(name, value)
WHERE s.name ~ '^[a-z_.]+$';

-- name: placement
-- The node holding the workspace's tables ($1: schema name): host and port.
SELECT s.nodename, s.nodeport
FROM citus_shards s JOIN citus_schemas c ON c.colocation_id = s.colocation_id
WHERE c.schema_name = $1::regnamespace
LIMIT 1;

-- name: schema_size
-- Size of the workspace on its node, in bytes ($1: schema name).
SELECT coalesce(sum(s.shard_size), 0)::bigint
FROM citus_shards s JOIN citus_schemas c ON c.colocation_id = s.colocation_id
WHERE c.schema_name = $1::regnamespace;

-- name: move
-- Move the schema $1 to the worker $2:$3 ($4: block_writes, force_logical or auto).
SELECT citus_schema_move($1::regnamespace, $2, $3, shard_transfer_mode := $4::citus.shard_transfer_mode);
