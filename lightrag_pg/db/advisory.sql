-- Advisory locks. Every lock key is a text made by advisory.lock_key and
-- hashed to a bigint here, so all modules agree on the key space.

-- name: xact_lock
-- Wait for the lock and hold it until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended($1, 0));

-- name: try_lock
-- Take the session lock if nobody holds it; true when taken.
SELECT pg_try_advisory_lock(hashtextextended($1, 0));

-- name: unlock
-- Release a session lock taken by try_lock.
SELECT pg_advisory_unlock(hashtextextended($1, 0));

-- name: try_lock_many
-- Take the session locks of several keys, each if nobody holds it; returns the keys taken.
SELECT k FROM unnest($1::text[]) AS k WHERE pg_try_advisory_lock(hashtextextended(k, 0));

-- name: unlock_many
-- Release session locks taken by try_lock or try_lock_many.
SELECT count(*) FILTER (WHERE pg_advisory_unlock(hashtextextended(k, 0))) FROM unnest($1::text[]) AS k;
