-- SQL of the graph views: subgraphs for visualisation and entity labels.
-- Everything reads the relational tables (entities, relations), so it works
-- with or without the AGE mirror. Names are ordered with COLLATE "C" so ties
-- break the same way whatever the database's locale.

-- name: neighbourhood
-- Breadth-first neighbourhood of entity $1 up to depth $2, following relations in
-- both directions. Each level of the recursion carries every name seen so far, so
-- a name is reached once, at its shortest distance. From each node a level takes at
-- most $4 new neighbours (NULL: all), those of the heaviest relations first, then by
-- name, so a hub does not fill the view. Keeps at most $3 nodes: the closest first,
-- then the highest degree, then the name. `reached` is the size of the neighbourhood
-- walked (more than $3 means the answer was truncated). No row when the entity does
-- not exist.
WITH RECURSIVE levels(depth, frontier, seen) AS (
    SELECT 0, ARRAY[e.name], ARRAY[e.name] FROM entities e WHERE e.name = $1
    UNION ALL
    SELECT l.depth + 1, n.names, l.seen || n.names
    FROM levels l
    CROSS JOIN LATERAL (
        SELECT array_agg(DISTINCT picked.name) AS names
        FROM unnest(l.frontier) AS f(name)
        CROSS JOIN LATERAL (
            SELECT t.name FROM (
                SELECT r.tgt AS name, max(r.weight) AS weight FROM (
                    SELECT r.tgt, r.weight FROM relations r WHERE r.src = f.name
                    UNION ALL
                    SELECT r.src, r.weight FROM relations r WHERE r.tgt = f.name
                ) r(tgt, weight)
                WHERE r.tgt <> ALL(l.seen)
                GROUP BY r.tgt
            ) t
            ORDER BY t.weight DESC, t.name COLLATE "C"
            LIMIT $4
        ) picked
    ) n
    WHERE l.depth < $2 AND n.names IS NOT NULL
),
reached AS (
    SELECT l.depth, f.name FROM levels l CROSS JOIN LATERAL unnest(l.frontier) AS f(name)
),
kept AS (
    SELECT r.name, r.depth, e.degree
    FROM reached r JOIN entities e USING (name)
    ORDER BY r.depth, e.degree DESC, r.name COLLATE "C"
    LIMIT $3
)
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, k.degree, k.depth,
       (SELECT count(*) FROM reached) AS reached
FROM kept k JOIN entities e USING (name)
ORDER BY k.depth, k.degree DESC, k.name COLLATE "C";

-- name: top_by_degree
-- The $1 entities of highest degree (ties by name), isolated ones included when
-- there is room; `reached` is the number of entities in the workspace.
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.version,
       e.created_at, e.updated_at, e.degree, 0 AS depth,
       count(*) OVER () AS reached
FROM entities e
ORDER BY e.degree DESC, e.name COLLATE "C"
LIMIT $1;

-- name: edges_among
-- Every relation whose two endpoints are among the given names, in pair order.
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths,
       r.version, r.created_at, r.updated_at, 0::bigint AS degree
FROM unnest($1::text[]) AS a(name)
JOIN relations r ON r.src = a.name
JOIN unnest($1::text[]) AS b(name) ON r.tgt = b.name
ORDER BY r.src COLLATE "C", r.tgt COLLATE "C";

-- name: all_labels
-- Every entity name, in byte order.
SELECT name FROM entities ORDER BY name COLLATE "C";

-- name: popular_labels
-- The $1 entity names of highest degree, ties by name; isolated entities come last.
SELECT e.name
FROM entities e
ORDER BY e.degree DESC, e.name COLLATE "C"
LIMIT $1;

-- name: search_labels
-- Entity names matching $1 (already lower-cased and trimmed), best first, at most $2.
-- Tiers: 0 the whole name, 1 a prefix, 2 the start of a word, 3 anywhere, 4 fuzzy.
-- Fuzzy is a trigram share computed in plain SQL (no pg_trgm needed): the part of the
-- query's trigrams (of the query padded like pg_trgm pads a word) found in the
-- padded name; names sharing at least $3 of them match. Within a tier: higher
-- share, then shorter name, then byte order.
WITH q AS (
    SELECT $1::text AS q, '  ' || $1::text || ' ' AS padded
),
grams AS (
    SELECT DISTINCT substr(q.padded, i, 3) AS gram
    FROM q CROSS JOIN generate_series(1, length(q.padded) - 2) AS i
),
scored AS (
    SELECT e.name, lower(e.name) AS low,
           (SELECT count(*) FROM grams g
            WHERE strpos('  ' || lower(e.name) || ' ', g.gram) > 0)::float8
           / (SELECT count(*) FROM grams) AS share
    FROM entities e
),
tiered AS (
    SELECT s.name, s.share,
           CASE
               WHEN s.low = q.q THEN 0
               WHEN starts_with(s.low, q.q) THEN 1
               WHEN strpos(' ' || translate(s.low, '_-./', '    '), ' ' || q.q) > 0 THEN 2
               WHEN strpos(s.low, q.q) > 0 THEN 3
               ELSE 4
           END AS tier
    FROM scored s CROSS JOIN q
)
SELECT name FROM tiered
WHERE tier < 4 OR share >= $3
ORDER BY tier, share DESC, length(name), name COLLATE "C"
LIMIT $2;
