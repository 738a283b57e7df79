-- Planner statistics of the tables retrieval reads.

-- name: analyze_grown
-- ANALYZE (SKIP_LOCKED) in one statement the retrieval tables of this workspace (the
-- schema first on search_path) whose statistics a batch made stale: never analyzed
-- yet holding rows, or changed (rows inserted, updated or deleted) by more than a
-- tenth of the rows they had when last analyzed, plus 50 (autovacuum's own default
-- trigger, applied at once instead of up to a minute later, while the planner still
-- costs the retrieval statement on the old figures). Tables another ANALYZE or VACUUM
-- holds are skipped: that one refreshes them.
DO $$
DECLARE
    grown text;
BEGIN
    SELECT string_agg(format('%I.%I', s.schemaname, s.relname), ', ' ORDER BY s.relname)
    INTO grown
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND s.relname IN ('entities', 'relations', 'entity_vectors', 'relation_vectors',
                        'text_chunks', 'chunk_vectors')
      AND (
          (c.reltuples < 0 AND pg_relation_size(c.oid) > 0)
          OR s.n_mod_since_analyze > 0.1 * greatest(c.reltuples, 0) + 50
      );
    IF grown IS NOT NULL THEN
        EXECUTE 'ANALYZE (SKIP_LOCKED) ' || grown;
    END IF;
END
$$
