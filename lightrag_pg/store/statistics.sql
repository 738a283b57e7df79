-- Planner statistics and full text index upkeep of the tables retrieval reads.

-- name: analyze_grown
-- After a batch, in one statement, what autovacuum's analyze would do later, on the
-- retrieval tables of this workspace (the schema first on search_path) that the
-- session's role owns. ANALYZE (SKIP_LOCKED) those whose statistics the batch made
-- stale: never analyzed yet holding rows, or changed (rows inserted, updated or
-- deleted) by more than a tenth of the rows they had when last analyzed, plus 50
-- (autovacuum's own default trigger, applied at once instead of up to a minute later,
-- while the planner still costs the retrieval statement on the old figures). Then move
-- the pending list of every GIN index on them into the index (gin_clean_pending_list):
-- autovacuum's analyze does that, a manual ANALYZE does not, and a lexical search
-- reads a pending list entry by entry (a 200-document build left searches 400x slower).
-- Tables another ANALYZE or VACUUM holds are skipped: that one refreshes them.
-- On a Citus distributed workspace the coordinator's tables are empty shells: each
-- table's figures are read from its shard (run_command_on_shards), the grown ones
-- analyzed through the coordinator, which analyzes their shards, and the pending lists
-- of the GIN indexes on the shards moved into the indexes, on the worker.
DO $$
DECLARE
    grown text;
    gin regclass;
    distributed boolean := false;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_schema') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_schema WHERE schemaid = current_schema()::regnamespace)'
        INTO distributed;
    END IF;
    IF distributed THEN
        EXECUTE $grown$
            SELECT string_agg(format('%I.%I', current_schema(), t.relname), ', ' ORDER BY t.relname)
            FROM unnest(ARRAY['entities', 'relations', 'entity_vectors', 'relation_vectors',
                              'text_chunks', 'chunk_vectors', 'chunk_terms']) AS t(relname)
            JOIN pg_class c ON c.relnamespace = current_schema()::regnamespace AND c.relname = t.relname
            CROSS JOIN LATERAL run_command_on_shards(
                c.oid::regclass,
                $cmd$SELECT (c.reltuples < 0 AND pg_relation_size(c.oid) > 0)
                            OR coalesce(s.n_mod_since_analyze, 0) > 0.1 * greatest(c.reltuples, 0) + 50
                     FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
                     WHERE c.oid = '%s'::regclass$cmd$) r
            WHERE pg_has_role(c.relowner, 'USAGE') AND r.success AND r.result = 't'
        $grown$ INTO grown;
        IF grown IS NOT NULL THEN
            EXECUTE 'ANALYZE ' || grown;
        END IF;
        EXECUTE $gin$
            SELECT count(*)
            FROM unnest(ARRAY['entities', 'relations', 'text_chunks']) AS t(relname)
            JOIN pg_class c ON c.relnamespace = current_schema()::regnamespace AND c.relname = t.relname
            CROSS JOIN LATERAL run_command_on_shards(
                c.oid::regclass,
                $cmd$SELECT count(gin_clean_pending_list(i.indexrelid::regclass))
                     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am a ON a.oid = ic.relam
                     WHERE i.indrelid = '%s'::regclass AND a.amname = 'gin'$cmd$) r
            WHERE pg_has_role(c.relowner, 'USAGE')
        $gin$;
        RETURN;
    END IF;
    SELECT string_agg(format('%I.%I', s.schemaname, s.relname), ', ' ORDER BY s.relname)
    INTO grown
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND s.relname IN ('entities', 'relations', 'entity_vectors', 'relation_vectors',
                        'text_chunks', 'chunk_vectors', 'chunk_terms')
      AND pg_has_role(c.relowner, 'USAGE')
      AND (
          (c.reltuples < 0 AND pg_relation_size(c.oid) > 0)
          OR s.n_mod_since_analyze > 0.1 * greatest(c.reltuples, 0) + 50
      );
    IF grown IS NOT NULL THEN
        EXECUTE 'ANALYZE (SKIP_LOCKED) ' || grown;
    END IF;
    FOR gin IN
        SELECT i.indexrelid::regclass
        FROM pg_index i
        JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_class ic ON ic.oid = i.indexrelid
        JOIN pg_am a ON a.oid = ic.relam
        WHERE a.amname = 'gin'
          AND t.relnamespace = current_schema()::regnamespace
          AND t.relname IN ('entities', 'relations', 'text_chunks')
          AND pg_has_role(ic.relowner, 'USAGE')
        ORDER BY 1
    LOOP
        PERFORM gin_clean_pending_list(gin);
    END LOOP;
END
$$
