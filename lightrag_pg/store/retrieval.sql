-- SQL of retrieval: the one read statement of a graph query.
-- {halfvec}: the cast that matches the HNSW index (empty up to 2,000 dimensions,
-- ::halfvec(dim) above), filled per workspace by sqlfile.load_vector_queries.
-- {top_k}, {chunk_top_k}: the LIMITs of the vector searches, integers filled per call
-- (store/retrieval.py), so that a generic plan (the pool plans every statement once)
-- knows them: with LIMIT $n a generic plan assumes a tenth of the rows and takes a
-- sequential scan and sort over the HNSW scan on tables of about 10k to 40k vectors.
-- {high_degree_set} (HIGH_DEGREE_SET there) is filled the same way, for the same reason.
-- {rrf_k}: the constant of reciprocal rank fusion (RRF_K there); {pick_rrf_k} (PICK_RRF_K)
-- that of hybrid's fusion of its graph picks.
-- Each vector search is the two steps of the fragment nearest_hits.

-- fragment: nearest_hits
-- A vector search of {table} for {query}, as two CTEs: {side}_nearest, then {side}_hits
-- ({keys}, distance), at most {limit} rows closer than the cosine threshold {threshold},
-- nearest first; {on} switches the search off when false (true: always on).
-- Rows at the same distance are cut by key: each search reads twice {limit} rows and keeps
-- the first {limit} by (distance, {keys}). An HNSW scan and a sequential scan with a sort
-- (which one runs is the planner's choice, made on statistics) return equidistant rows
-- in different orders, so a cut by distance alone kept different rows before and after
-- an ANALYZE, and on a cluster's unanalyzed shard than on a single node.
-- First the nearest rows,
-- filtered by the cosine threshold: with the threshold inside the search the planner
-- guesses a third of the rows pass and prefers a sequential scan to the HNSW scan on
-- mid-size tables (docs/scale.md, "Figures behind the retrieval statement"). If fewer than
-- the limit pass, the search is run again with the threshold inside, which pgvector's
-- iterative scan follows past the rows that fail it: an HNSW search can end in the
-- wrong neighbourhood and find almost none above the threshold (figures: docs/scale.md).
{side}_nearest AS MATERIALIZED (
    SELECT {keys}, distance FROM (
        SELECT {keys}, embedding{halfvec} <=> {query}::vector{halfvec} AS distance
        FROM {table}
        WHERE {on}
        ORDER BY embedding{halfvec} <=> {query}::vector{halfvec}
        LIMIT 2 * {limit}
    ) nearest
    WHERE distance < 1 - {threshold}::float8
    ORDER BY distance, {keys}
    LIMIT {limit}
),
{side}_hits AS MATERIALIZED (
    SELECT {keys}, distance FROM {side}_nearest WHERE (SELECT count(*) FROM {side}_nearest) = {limit}
    UNION ALL
    (SELECT {keys}, distance FROM (
        SELECT {keys}, embedding{halfvec} <=> {query}::vector{halfvec} AS distance
        FROM {table}
        WHERE (SELECT count(*) FROM {side}_nearest) < {limit}
          AND {on} AND embedding{halfvec} <=> {query}::vector{halfvec} < 1 - {threshold}::float8
        ORDER BY embedding{halfvec} <=> {query}::vector{halfvec}
        LIMIT 2 * {limit}
     ) inside
     ORDER BY distance, {keys}
     LIMIT {limit})
),

-- fragment: question_names
-- The entities the question {question} names: its phrases (one to six consecutive words)
-- whose name key (lexical_name_key) is an entity's; {on} switches it off when false.
-- The phrases are read in one pass with lead(): slicing an array of its words per phrase
-- would split the whole text again for each one, a cost quadratic in its length.
question_words AS (
    SELECT w.word AS w0, lead(w.word, 1) OVER o AS w1, lead(w.word, 2) OVER o AS w2,
           lead(w.word, 3) OVER o AS w3, lead(w.word, 4) OVER o AS w4, lead(w.word, 5) OVER o AS w5
    FROM regexp_split_to_table(btrim({question}::text), '\s+') WITH ORDINALITY AS w(word, i)
    WHERE {on}
    WINDOW o AS (ORDER BY w.i)
),
question_phrases AS MATERIALIZED (
    SELECT lexical_name_key(p.phrase) AS name_key
    FROM question_words q,
         LATERAL (VALUES (q.w0), (q.w0 || ' ' || q.w1), (q.w0 || ' ' || q.w1 || ' ' || q.w2),
                         (q.w0 || ' ' || q.w1 || ' ' || q.w2 || ' ' || q.w3),
                         (q.w0 || ' ' || q.w1 || ' ' || q.w2 || ' ' || q.w3 || ' ' || q.w4),
                         (q.w0 || ' ' || q.w1 || ' ' || q.w2 || ' ' || q.w3 || ' ' || q.w4 || ' ' || q.w5)) p(phrase)
),
named_entities AS MATERIALIZED (
    SELECT e.name
    FROM entities e
    WHERE lexical_name_key(e.name) = ANY (ARRAY(SELECT name_key FROM question_phrases WHERE name_key <> ''))
),

-- fragment: entity_homes
-- Where a document introduces each entity of {entities} (a CTE of names) that is in at
-- most {fanout} chunks: its homes, the bridge's articles. {side}_pairs holds each such
-- entity with each of its chunks (entities.source_ids); {side}_keys the name keys
-- (lexical_name_key) each of those chunks introduces, by rule:
--   1 title: the first line of a document's first chunk, or a first line followed by a
--     blank line (a passage's title);
--   2 heading: a Markdown heading (ATX "## Name" or setext, a line over === or ---) or
--     an HTML <h1> to <h6> anywhere in the chunk; a heading also introduces a name whose
--     words it holds with at most two more ("## Installing Foo" introduces Foo; a title
--     does not: "Morse code" is no home of Morse);
--   3 file name: the base name of the chunk's file path less its extension, _ - . read as
--     spaces (one without a letter, or the unknown source, names nothing).
-- A title or heading is read less its markup and a trailing parenthesis ("Acme (studio)"
-- introduces Acme); a title is the whole name in any case, a heading or file name the
-- name's key. {side}_homes: an entity's chunks whose keys hold its name, with the lowest
-- rule; failing any, rule 4, central: its chunk that mentions its name most often
-- (case-insensitive substring count), if at least {central} times (0: never) and at
-- least as often as all its other chunks together.
-- The keys are computed at query time, for the few chunks of the bounded entities only.
{side}_pairs AS MATERIALIZED (
    SELECT e.name, s.id
    FROM {entities} n
    JOIN entities e ON e.name = n.name
    CROSS JOIN LATERAL unnest(e.source_ids) AS s(id)
    WHERE cardinality(e.source_ids) <= {fanout}
),
{side}_keys AS MATERIALIZED (
    SELECT DISTINCT c.id, l.rule, k.key
    FROM (SELECT DISTINCT id FROM {side}_pairs) p
    JOIN text_chunks c ON c.id = p.id
    CROSS JOIN LATERAL (
        SELECT 1 AS rule, split_part(c.content, E'\n', 1) AS line
        WHERE c.chunk_order_index = 0 OR c.content ~ '^[^\n]*\n[ \t\r]*\n'
        UNION ALL
        SELECT 2, coalesce(m[1], m[2])
        FROM regexp_matches(c.content, '^ {0,3}#{1,6}[ \t]+([^\n]+)$|^([^\n]+)\n {0,3}(?:=+|-+)[ \t]*$', 'gn') AS m
        UNION ALL
        SELECT 2, m[1] FROM regexp_matches(c.content, '<h[1-6].*?>(.*?)</h[1-6]\s*>', 'gi') AS m
        UNION ALL
        SELECT 3, regexp_replace(regexp_replace(regexp_replace(c.file_path, '^.*[/\\]', ''),
                                                '\.[[:alnum:]]{1,8}$', ''), '[-_.]+', ' ', 'g')
        WHERE c.file_path <> 'unknown_source'
    ) l
    CROSS JOIN LATERAL (
        SELECT btrim(regexp_replace(
                   regexp_replace(l.line, '<[^>]*>|^\s*#{1,6}\s+|\s+#+\s*$', '', 'g'), '\s*\([^)]*\)\s*$', ''
               )) AS text
    ) t
    CROSS JOIN LATERAL (
        SELECT CASE WHEN l.rule = 1 THEN lower(t.text) ELSE lexical_name_key(t.text) END AS key
    ) k
    WHERE k.key <> '' AND (l.rule <> 3 OR k.key ~ '[[:alpha:]]')
),
{side}_matched AS MATERIALIZED (
    SELECT p.name, p.id, min(k.rule) AS rule
    FROM (SELECT name, id, lexical_name_key(name) AS key FROM {side}_pairs) p
    JOIN {side}_keys k ON k.id = p.id
    WHERE (k.rule = 1 AND k.key = lower(p.name))
       OR (k.rule > 1 AND k.key = p.key)
       OR (k.rule = 2 AND string_to_array(p.key, ' ') <@ string_to_array(k.key, ' ')
           AND cardinality(string_to_array(k.key, ' ')) <= cardinality(string_to_array(p.key, ' ')) + 2)
    GROUP BY p.name, p.id
),
{side}_homes AS MATERIALIZED (
    SELECT name, id, rule FROM {side}_matched
    UNION ALL
    SELECT name, id, 4 FROM (
        SELECT p.name, p.id, m.mentions, max(m.mentions) OVER (PARTITION BY p.name) AS most,
               sum(m.mentions) OVER (PARTITION BY p.name) AS mentioned
        FROM {side}_pairs p
        JOIN text_chunks c ON c.id = p.id
        CROSS JOIN LATERAL (
            SELECT (length(lower(c.content)) - length(replace(lower(c.content), lower(p.name), '')))
                   / greatest(length(p.name), 1) AS mentions
        ) m
        WHERE {central} > 0 AND p.name NOT IN (SELECT name FROM {side}_matched)
    ) counted
    WHERE mentions = most AND most >= {central} AND 2 * most >= mentioned
),

-- fragment: text_ranks
-- Lexical fusion's two lists, written once for naive and for context: the vector hits
-- (vector_hits) ranked by distance, then id (list 0), and the at most {limit} chunks
-- lexical_chunks finds for {terms} (NULL: none) ranked by score, then id (list 1). The
-- callers fuse them by reciprocal rank (1 / (k + rank), summed).
lexical_hits AS MATERIALIZED (
    SELECT id, score FROM lexical_chunks({terms}::text, {limit})
),
text_ranks AS (
    SELECT c.id, row_number() OVER (ORDER BY h.distance, c.id) AS rank, 0 AS list
    FROM vector_hits h JOIN text_chunks c ON c.id = h.chunk_id
    UNION ALL
    SELECT id, row_number() OVER (ORDER BY score DESC, id), 1 FROM lexical_hits
),

-- fragment: chunk_picks
-- The VECTOR pick of the chunks behind the kept {side} rows ({rows}), written once for
-- both sides: each row's source ids in order ({side}_sources: item is the row's rank, pos
-- the position over all rows), blank ids and those for which {keep} is false dropped
-- ({side}_listed); a chunk kept under the first item listing it ({side}_first: its least
-- item and position, and how many items list it); of those with a vector, the
-- floor(:related_chunks * items / 2) most similar to :chunk_query (ties by item, then
-- items listing it, desc, then position), the items counted in {side}_{counted}.
{side}_sources AS (
    SELECT k.rank AS item, s.id, row_number() OVER (ORDER BY k.rank, s.n) AS pos
    FROM {rows} k, unnest(k.source_ids) WITH ORDINALITY AS s(id, n)
),
{side}_listed AS (
    SELECT item, id, pos FROM {side}_sources WHERE btrim(id, E' \t\n\r\f\v') <> '' AND {keep}
),
{side}_first AS (
    SELECT id, min(item) AS item, min(pos) AS pos, count(*) AS listed
    FROM {side}_listed
    GROUP BY id
),
{side}_candidates AS (
    SELECT l.item, l.id, l.pos, l.listed, 1 - (v.embedding{halfvec} <=> :chunk_query::vector{halfvec}) AS similarity
    FROM {side}_first l
    JOIN chunk_vectors v ON v.chunk_id = l.id
),
{side}_picks AS (
    SELECT id, idx, similarity FROM (
        SELECT id, similarity, row_number() OVER (ORDER BY similarity DESC, item, listed DESC, pos) AS idx
        FROM {side}_candidates
    ) ranked
    WHERE idx <= (:related_chunks * (SELECT count(DISTINCT item) FROM {side}_{counted})) / 2
),

-- fragment: walk
-- The walk (:walk_damping, the damping, non-NULL: QueryParam.pagerank): a personalized PageRank over
-- the entity-chunk graph takes the place of the entity and relation picks. Seeds: the
-- first {walk_seeds} local entities, each 1 / (rank * its chunk count) (a rare name
-- says more than a common one), and the query's fused chunks, :walk_chunk_weight / rank. The graph is
-- bounded: the seeds' chunks (entities.source_ids), those chunks' entities
-- (entity_fragments by document), at most {walk_entities} of them in order of the best
-- chunk that brought them, and all their chunks; an entity in more than {walk_fanout}
-- chunks is a hub and left out. Nodes are numbered (walk_nodes) and the arcs read
-- their numbers from a jsonb index (a join of two CTEs, each guessed at one row, would
-- be a nested loop over both); an entity sends its mass evenly to its chunks, a chunk
-- to its entities in the graph. {walk_steps} power iterations, each one aggregate over
-- the arcs, run in a recursive CTE over the score vector as an array. The chunks are
-- then ranked by score (at most :chunk_limit), followed by the fused chunks the walk left out.
walk_entity_seeds AS MATERIALIZED (
    SELECT l.name, 1.0 / (l.idx * cardinality(e.source_ids)) AS weight, cardinality(e.source_ids) AS fanout
    FROM local_entities l
    JOIN entities e ON e.name = l.name
    WHERE :walk_damping::float8 IS NOT NULL AND l.idx <= {walk_seeds}
      AND cardinality(e.source_ids) BETWEEN 1 AND {walk_fanout}
),
walk_chunk_seeds AS MATERIALIZED (
    SELECT id, :walk_chunk_weight::float8 / idx AS weight, idx AS rank
    FROM query_chunks
    WHERE :walk_damping::float8 IS NOT NULL AND idx <= {chunk_top_k}
),
walk_near_chunks AS MATERIALIZED (
    SELECT id, min(rank) AS rank FROM (
        SELECT id, rank FROM walk_chunk_seeds
        UNION ALL
        SELECT s.id, {chunk_top_k} + w.weight_rank
        FROM (SELECT name, row_number() OVER (ORDER BY weight DESC, name) AS weight_rank
              FROM walk_entity_seeds) w
        JOIN entities e ON e.name = w.name, unnest(e.source_ids) AS s(id)
    ) near
    WHERE btrim(id, E' \t\n\r\f\v') <> ''
    GROUP BY id
),
walk_entities AS MATERIALIZED (
    SELECT name, fanout, source_ids FROM (
        SELECT e.name, cardinality(e.source_ids) AS fanout, e.source_ids, min(n.rank) AS rank
        FROM (
            SELECT name, 0::bigint AS rank FROM walk_entity_seeds
            UNION ALL
            SELECT f.entity_name, c.rank
            FROM walk_near_chunks c
            JOIN text_chunks t ON t.id = c.id
            JOIN entity_fragments f ON f.doc_id = t.doc_id AND f.chunk_id = c.id
        ) n
        JOIN entities e ON e.name = n.name
        WHERE cardinality(e.source_ids) BETWEEN 1 AND {walk_fanout}
        GROUP BY e.name
        ORDER BY min(n.rank), e.name
        LIMIT {walk_entities}
    ) kept
),
walk_links AS MATERIALIZED (
    SELECT name, id, fanout, count(*) OVER (PARTITION BY id) AS entities
    FROM (
        SELECT DISTINCT w.name, s.id, w.fanout
        FROM walk_entities w, unnest(w.source_ids) AS s(id)
        WHERE btrim(s.id, E' \t\n\r\f\v') <> ''
    ) links
),
walk_nodes AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY n.kind, n.key) AS i, n.kind, n.key, coalesce(n.weight, 0) AS weight
    FROM (
        SELECT 0 AS kind, name AS key, max(weight) AS weight
        FROM (SELECT name, NULL::float8 AS weight FROM walk_links
              UNION ALL SELECT name, weight FROM walk_entity_seeds) e
        GROUP BY name
        UNION ALL
        SELECT 1, id, max(weight)
        FROM (SELECT id, NULL::float8 AS weight FROM walk_links
              UNION ALL SELECT id, weight FROM walk_chunk_seeds) c
        GROUP BY id
    ) n
),
walk_index AS MATERIALIZED (
    SELECT coalesce(jsonb_object_agg(key, i) FILTER (WHERE kind = 0), '{}') AS entities,
           coalesce(jsonb_object_agg(key, i) FILTER (WHERE kind = 1), '{}') AS chunks,
           ARRAY(SELECT weight / greatest((SELECT sum(weight) FROM walk_nodes), 1e-12)
                 FROM walk_nodes ORDER BY i) AS seed
    FROM walk_nodes
),
walk_arcs AS MATERIALIZED (
    SELECT a, b, w FROM (
        SELECT (x.entities ->> l.name)::int AS a, (x.chunks ->> l.id)::int AS b, 1.0 / l.fanout AS w
        FROM walk_links l, walk_index x
        UNION ALL
        SELECT (x.chunks ->> l.id)::int, (x.entities ->> l.name)::int, 1.0 / l.entities
        FROM walk_links l, walk_index x
    ) arcs
),
walk AS (
    WITH RECURSIVE steps(step, p) AS (
        SELECT 0, seed FROM walk_index
        UNION ALL
        SELECT s.step + 1,
               ARRAY(SELECT (1 - :walk_damping::float8) * x.seed[m.i] + :walk_damping::float8 * m.mass
                     FROM (SELECT i, sum(mass) AS mass
                           FROM (SELECT i, 0::float8 AS mass FROM generate_subscripts(s.p, 1) AS i
                                 UNION ALL
                                 SELECT b, w * s.p[a] FROM walk_arcs) flows
                           GROUP BY i) m
                     ORDER BY m.i)
        FROM steps s, walk_index x
        WHERE s.step < {walk_steps} AND EXISTS (SELECT 1 FROM walk_arcs)
    )
    SELECT n.key AS id, last.p[n.i] AS score
    FROM (SELECT p FROM steps ORDER BY step DESC LIMIT 1) last, walk_nodes n
    WHERE n.kind = 1
),
walk_picks AS (
    SELECT w.id, row_number() OVER (ORDER BY w.score DESC, w.id) AS idx
    FROM walk w
    WHERE w.score > 0 AND EXISTS (SELECT 1 FROM text_chunks c WHERE c.id = w.id)
    ORDER BY w.score DESC, w.id
    LIMIT :chunk_limit
),

-- fragment: bridge
-- The bridge (:bridge_keep non-NULL: QueryParam.bridge): a second hop from the question's
-- best passage and from the articles of what it names. An entity's homes are the chunks
-- that introduce it (fragment entity_homes: its title, a heading, its file name; failing
-- those, its central chunk); the articles (with {bridge_articles} = 1) are, for each
-- entity the question names (named_entities) in at most {bridge_fanout} chunks, its home
-- most like :chunk_query, found by title, heading or file name ({bridge_central_starts} >
-- 0: also by central chunk, off by default: such starts cost 2 to 6 points of recall@5 on
-- both multi-hop sets). The entities of the first {bridge_from} fused chunks and of the
-- articles that the question does not name and that are in at most {bridge_fanout} chunks
-- lead to their other chunks; those and the articles are ranked by a score, the cosine
-- distance to :chunk_query less :bridge_heading for a home of such an entity (a passage
-- about the entity, not just naming it), half of it for a central one.
-- The first {bridge_slots} of them are placed among the fused chunks: the homes first,
-- each after at least :bridge_keep_home fused chunks (after the first only when the best
-- home's score is below the second fused chunk's cosine distance by more than
-- :bridge_lead), then the others, each after at least :bridge_keep fused chunks; never two
-- bridge chunks in a row (a chunk in both lists keeps its first place). It orders the
-- chunks the walk did not rank, so it also serves alone: the graph picks then make way,
-- as for a walk.
bridge_first AS MATERIALIZED (
    SELECT id FROM query_chunks WHERE :bridge_keep::int IS NOT NULL AND idx <= {bridge_from}
),
bridge_named AS MATERIALIZED (
    SELECT name FROM named_entities WHERE :bridge_keep::int IS NOT NULL AND {bridge_articles} = 1
),
-- include: entity_homes side=named entities=bridge_named fanout={bridge_fanout} central={bridge_central_starts}
bridge_articles AS MATERIALIZED (
    SELECT DISTINCT id FROM (
        SELECT DISTINCT ON (h.name) h.name, h.id
        FROM named_homes h
        JOIN chunk_vectors v ON v.chunk_id = h.id
        ORDER BY h.name, v.embedding{halfvec} <=> :chunk_query::vector{halfvec}, h.id
    ) best
),
bridge_entities AS MATERIALIZED (
    SELECT DISTINCT f.entity_name AS name
    FROM (SELECT id FROM bridge_first UNION SELECT id FROM bridge_articles) b
    JOIN text_chunks t ON t.id = b.id
    JOIN entity_fragments f ON f.doc_id = t.doc_id AND f.chunk_id = b.id
    WHERE f.entity_name NOT IN (SELECT name FROM named_entities)
),
-- include: entity_homes side=bridge entities=bridge_entities fanout={bridge_fanout} central={bridge_central}
bridge_chunks AS MATERIALIZED (
    SELECT id, home, score, row_number() OVER (ORDER BY score, id) AS idx
    FROM (
        SELECT l.id, l.home,
               (v.embedding{halfvec} <=> :chunk_query::vector{halfvec}) - :bridge_heading::float8 * l.home AS score
        FROM (
            SELECT id, max(home) AS home
            FROM (
                SELECT p.id, coalesce((SELECT max(CASE WHEN h.rule < 4 THEN 1 ELSE 0.5 END)
                                       FROM bridge_homes h WHERE h.name = p.name AND h.id = p.id), 0) AS home
                FROM bridge_pairs p
                UNION ALL
                SELECT id, 1 FROM bridge_articles
            ) c
            WHERE id NOT IN (SELECT id FROM bridge_first)
            GROUP BY id
        ) l
        JOIN chunk_vectors v ON v.chunk_id = l.id
    ) scored
),
-- Whether the best home goes right after the first fused chunk.
bridge_leads AS MATERIALIZED (
    SELECT coalesce(
               (SELECT min(score) FROM bridge_chunks WHERE home > 0 AND idx <= {bridge_slots})
               < (SELECT v.embedding{halfvec} <=> :chunk_query::vector{halfvec}
                  FROM query_chunks q JOIN chunk_vectors v ON v.chunk_id = q.id
                  WHERE q.idx = 2) - :bridge_lead::float8,
               false) AS leads
),
-- Each bridge chunk in placing order (k) with the fewest fused chunks it must follow.
bridge_queue AS (
    SELECT id, row_number() OVER (ORDER BY home = 0, idx) AS k,
           CASE WHEN home = 0 THEN :bridge_keep::int
                WHEN (SELECT leads FROM bridge_leads) THEN least(1, :bridge_keep_home::int)
                ELSE :bridge_keep_home::int END AS earliest
    FROM bridge_chunks
    WHERE idx <= {bridge_slots}
),
-- Fused chunk i at place i; bridge chunk k after fused chunk a(k) = max(earliest(k),
-- a(k - 1) + 1), which is max over j <= k of (earliest(j) - j) + k, as earliest grows with k.
bridged AS (
    SELECT id, min(place) AS place
    FROM (
        SELECT id, idx::numeric AS place FROM query_chunks
        UNION ALL
        SELECT id, max(earliest - k) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING) + k + 0.5 FROM bridge_queue
    ) places
    GROUP BY id
),

-- name: context
-- The entities, relations and chunks of a query, ranked and cut in one statement.
-- Parameters (store/retrieval.py RetrievalStore.context): :local_query, :global_query
-- (the keywords' vectors, NULL: that side off), :threshold (cosine), :top_k,
-- :max_entity_tokens, :max_relation_tokens, :chunk_query (the question's vector),
-- :vector_top_k (chunk_top_k), :related_chunks, :chunk_limit, :lexical_chunks,
-- :lexical_entities, :question (texts; NULL: no lexical fusion), :walk_damping,
-- :walk_chunk_weight (NULL: no walk), :bridge_keep (NULL: no bridge), :bridge_keep_home,
-- :bridge_lead, :bridge_heading.
-- Graph: entities nearest to :local_query (the low-level keywords) and every edge touching
-- them, edges ranked by (edge degree, weight) desc, then by the nearest found entity
-- they touch (upstream collects edges entity by entity), then (src, tgt); relations
-- nearest to :global_query (the high-level keywords) and their endpoints in order of first
-- appearance; each side's lists merged round-robin (local first, the first
-- occurrence wins), then a running sum of the stored context_tokens keeps the
-- longest prefix within :max_entity_tokens (entities) and :max_relation_tokens (relations) tokens (each count includes
-- the newline joining its line to the next, and the pre-tokenizer never merges across
-- it, so the sum is the count of the lines joined, upstream 1.5.7's measure, plus the
-- last line's newline: at most a token over, and only when that newline does not merge
-- into the closing brace's token). A NULL vector
-- switches its side off (checked once, also by a generic plan, which gives the same
-- rows as a custom one); :threshold is the cosine threshold, :top_k top_k ({top_k} the same, as
-- the LIMIT of the two graph vector searches; {chunk_top_k} is :vector_top_k). Edges are read
-- from the covering endpoint indexes (migration 0011: index-only scans, no heap fetch
-- per edge), those by src, then those by tgt whose src is not a found entity; the
-- degrees of their endpoints are the stored entities.degree (kept by the relations
-- triggers, migration 0010), read once per distinct endpoint from an index that
-- includes it, each with its place among the found entities (for the tie-break).
-- Only the first edges in that order that the relation budget could keep are ranked:
-- each costs at least the fewest tokens among them, and so does the global copy that
-- may stand in for one, so no more than :max_relation_tokens over that many fit; found counts them all.
-- Around a hub, a found entity with more than {high_degree_set} edges, a degree look-up
-- per neighbour would be most of the statement (docs/scale.md).
-- Its edges are first checked against the entities of highest degree (high_degrees:
-- the first {high_degree_set} of the degree index, less those tied with the last, so
-- every entity left out has a lower degree than every one in it). A hub with at least
-- as many edges to them as the budget could keep keeps only those edges: each of its
-- others has a lower edge degree than all of them, so it ranks past every edge that
-- can be kept, and the ranked rows are the same without it (ranked_edges).
-- Full rows are fetched only for what is kept, by key (the LATERAL LIMIT 1 of
-- kept_relations: the planner cannot tell how few rows the budget keeps and would
-- otherwise hash the whole relations table when it guesses high).
-- Foreign keys spare existence checks: an entity vector has its entity, a
-- relation vector its relation (looked up by key, never by a join over all
-- relations), a relation its two endpoints.
-- Chunks: the chunks nearest to :chunk_query (at most :vector_top_k, similarity > :threshold; fused with the
-- lexical matches, below), then the
-- VECTOR pick of the chunks behind the kept entities and relations (each one's
-- source ids in order), merged round-robin (vector, entity, relation; the
-- first occurrence wins) and cut to the first :chunk_limit (NULL: all). Each side's
-- candidates: blank ids dropped, a chunk kept under the first item listing it
-- (items and positions grow together: its least item and position), ordered
-- by item, then by how many items list it (desc), then position; relations skip
-- the chunks picked for entities (not when hybrid fuses the two, below) and count
-- only items left with a chunk. Of the
-- candidates that have a vector (a chunk vector implies its chunk: foreign key), the
-- floor(:related_chunks * items / 2) most similar to :chunk_query are picked (ties in candidate order).
-- Rows: kind 'entity', 'relation' or 'chunk' with its rank and found (the rows
-- merged before the cut), and one 'flags' row whose needs_weight is true when a
-- side had chunk candidates but the VECTOR pick chose none (the caller then
-- picks by WEIGHT) and whose found is the number of merged chunks.
-- Lexical search (NULL texts switch it off, leaving the vector-only statement): the
-- local side fuses its vector hits with the :top_k entities lexical_entities finds for
-- :lexical_entities (the low-level keywords) by reciprocal rank (1 / ({rrf_k} + rank), summed), after
-- the entities a phrase of :question (the question's first words) names exactly or nearly,
-- which always come first. Its phrases (one to six consecutive words) are read in one
-- pass with lead(): slicing an array of its words per phrase would split the whole
-- text again for each one, a cost quadratic in its length. Chunks, when :lexical_chunks is given
-- and the vector side is on (:vector_top_k > 0, mix): no round-robin; the four lists (vector
-- hits, the :vector_top_k chunks lexical_chunks finds for :lexical_chunks, the entity picks, the relation
-- picks) are fused by reciprocal rank the same way (ties by best rank, then list in
-- that order, then id), so a chunk several signals support rises and graph picks no
-- longer take every second place from the question's own matches. When :lexical_chunks is given,
-- the vector side is off and both graph sides are on (:local_query and :global_query, hybrid), its two
-- lists, the entity picks and the relation picks, are fused the same way with
-- {pick_rrf_k} for {rrf_k}, and the relation side keeps the chunks the entity side
-- picked: a chunk picked behind both the kept entities and the kept relations rises
-- instead of waiting for the relation side's turn after each side's first pick.
-- When :lexical_chunks is given, the vector side is off and one graph side is on (:local_query or :global_query: local,
-- global, hybrid with one side), its entity and relation picks are merged by their
-- similarity to :chunk_query (ties by place, entity side first). Both lists come from one search
-- and are ranked by that similarity: local's relations are the edges of its found
-- entities and global's entities the endpoints of its found relations, so a relation's
-- chunks are its endpoints' and the relation side holds only the chunks the entity side
-- left out (entities the budget cut, the pick's quota); round-robin gave those every
-- second place ahead of closer ones. Otherwise (:lexical_chunks NULL) the vector hits are merged
-- round-robin as above. Both functions come with the workspace's backend.
WITH
-- include: nearest_hits side=local keys=name table=entity_vectors query=:local_query limit={top_k} threshold=:threshold on=":local_query::vector IS NOT NULL"
local_lexical AS MATERIALIZED (
    SELECT name, score FROM lexical_entities(CASE WHEN :local_query::vector IS NOT NULL THEN :lexical_entities::text END, :top_k)
),
-- include: question_names question=:question on=":local_query::vector IS NOT NULL"
local_fused AS (
    SELECT ranks.name, bool_or(ranks.named) AS named, sum(1.0 / ({rrf_k} + ranks.rank)) AS score,
           min(ranks.distance) AS distance
    FROM (
        SELECT name, false AS named, row_number() OVER (ORDER BY distance, name) AS rank, distance
        FROM local_hits
        UNION ALL
        SELECT name, false, row_number() OVER (ORDER BY score DESC, name), NULL FROM local_lexical
        UNION ALL
        SELECT name, true, NULL, NULL FROM named_entities
    ) ranks
    GROUP BY ranks.name
),
local_entities AS MATERIALIZED (
    SELECT idx, name, similarity FROM (
        SELECT row_number() OVER (ORDER BY f.named DESC, f.score DESC NULLS LAST, f.name) AS idx, f.name,
               f.named, coalesce(1 - f.distance, 1 - (v.embedding{halfvec} <=> :local_query::vector{halfvec})) AS similarity
        FROM local_fused f
        LEFT JOIN entity_vectors v ON v.name = f.name AND f.distance IS NULL
    ) fused
    WHERE idx <= :top_k OR named
),
local_names AS MATERIALIZED (
    SELECT ARRAY(SELECT name FROM local_entities) AS names
),
local_edges AS MATERIALIZED (
    SELECT e.src, e.tgt, e.weight,
           coalesce(e.context_tokens,
                    (SELECT (octet_length(r.src) + octet_length(r.tgt) + octet_length(r.description)) / 4 + 12
                     FROM relations r WHERE r.src = e.src AND r.tgt = e.tgt)) AS tokens
    FROM (
        SELECT r.src, r.tgt, r.weight, r.context_tokens
        FROM local_names l, relations r
        WHERE r.src = ANY (l.names)
        UNION ALL
        SELECT r.src, r.tgt, r.weight, r.context_tokens
        FROM local_names l, relations r
        WHERE r.tgt = ANY (l.names) AND r.src <> ALL (l.names)
    ) e
),
local_edge_counts AS MATERIALIZED (
    SELECT count(*) AS edges, greatest(min(tokens), 1) AS fewest_tokens FROM local_edges
),
-- include: nearest_hits side=global keys="src, tgt" table=relation_vectors query=:global_query limit={top_k} threshold=:threshold on=":global_query::vector IS NOT NULL"
global_relations AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY h.distance, h.src, h.tgt) AS idx, h.src, h.tgt,
           1 - h.distance AS similarity,
           (SELECT coalesce(r.context_tokens,
                            (octet_length(r.src) + octet_length(r.tgt) + octet_length(r.description)) / 4 + 12)
            FROM relations r WHERE r.src = h.src AND r.tgt = h.tgt) AS tokens
    FROM global_hits h
),
global_entities AS (
    SELECT row_number() OVER (ORDER BY min(ends.pos)) AS idx, ends.name
    FROM (
        SELECT src AS name, 2 * idx AS pos FROM global_relations
        UNION ALL
        SELECT tgt, 2 * idx + 1 FROM global_relations
    ) ends
    GROUP BY ends.name
),
local_hubs AS MATERIALIZED (
    SELECT e.name
    FROM local_names l, entities e
    WHERE e.name = ANY (l.names) AND e.degree > {high_degree_set}
),
high_degrees AS MATERIALIZED (
    SELECT name FROM (
        SELECT name, degree, min(degree) OVER () AS lowest
        FROM (SELECT name, degree FROM entities
              WHERE EXISTS (SELECT 1 FROM local_hubs)
              ORDER BY degree DESC
              LIMIT {high_degree_set}) highest
    ) highest
    WHERE degree > lowest
),
pruned_hubs AS MATERIALIZED (
    SELECT h.name
    FROM local_hubs h
    WHERE (SELECT count(*) FROM high_degrees d
           WHERE EXISTS (SELECT 1 FROM relations r WHERE r.src = h.name AND r.tgt = d.name)
              OR EXISTS (SELECT 1 FROM relations r WHERE r.src = d.name AND r.tgt = h.name))
          >= (SELECT :max_relation_tokens::bigint / fewest_tokens + 1 FROM local_edge_counts)
),
ranked_edges AS MATERIALIZED (
    SELECT src, tgt, weight, tokens
    FROM local_edges
    WHERE NOT EXISTS (SELECT 1 FROM pruned_hubs)
       OR ((src NOT IN (SELECT name FROM pruned_hubs) OR tgt IN (SELECT name FROM high_degrees))
           AND (tgt NOT IN (SELECT name FROM pruned_hubs) OR src IN (SELECT name FROM high_degrees)))
),
degrees AS MATERIALIZED (
    SELECT e.name, e.degree, l.idx AS local_idx
    FROM (
        SELECT src AS name FROM ranked_edges UNION SELECT tgt FROM ranked_edges
        UNION SELECT src FROM global_relations UNION SELECT tgt FROM global_relations
    ) ends
    JOIN entities e ON e.name = ends.name
    LEFT JOIN local_entities l ON l.name = ends.name
),
local_relations AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY degree DESC, weight DESC, near, src, tgt) AS idx, src, tgt, tokens, degree
    FROM (
        SELECT l.src, l.tgt, l.weight, l.tokens, ds.degree + dt.degree AS degree,
               least(ds.local_idx, dt.local_idx) AS near
        FROM ranked_edges l
        JOIN degrees ds ON ds.name = l.src
        JOIN degrees dt ON dt.name = l.tgt
        ORDER BY ds.degree + dt.degree DESC, l.weight DESC, least(ds.local_idx, dt.local_idx), l.src, l.tgt
        LIMIT (SELECT :max_relation_tokens::bigint / fewest_tokens + 1 FROM local_edge_counts)
    ) ranked
),
entity_merged AS (
    SELECT DISTINCT ON (name) name, idx, side, similarity
    FROM (
        SELECT name, idx, 0 AS side, similarity FROM local_entities
        UNION ALL
        SELECT name, idx, 1, NULL::float8 FROM global_entities
    ) both_sides
    ORDER BY name, idx, side
),
relation_merged AS (
    SELECT l.src, l.tgt, l.idx, 0 AS side, NULL::float8 AS similarity, l.tokens, l.degree
    FROM local_relations l
    WHERE NOT EXISTS (
        SELECT 1 FROM global_relations g WHERE g.src = l.src AND g.tgt = l.tgt AND g.idx < l.idx
    )
    UNION ALL
    SELECT g.src, g.tgt, g.idx, 1, g.similarity, g.tokens, ds.degree + dt.degree
    FROM global_relations g
    JOIN degrees ds ON ds.name = g.src
    JOIN degrees dt ON dt.name = g.tgt
    WHERE NOT EXISTS (
        SELECT 1 FROM local_relations l WHERE l.src = g.src AND l.tgt = g.tgt AND l.idx <= g.idx
    )
),
entity_cut AS (
    SELECT m.idx, m.side, m.similarity, e.*,
           sum(coalesce(e.context_tokens,
                        (octet_length(e.name) + octet_length(e.entity_type)
                         + octet_length(e.description)) / 4 + 12))
               OVER (ORDER BY m.idx, m.side ROWS UNBOUNDED PRECEDING) AS used,
           row_number() OVER (ORDER BY m.idx, m.side) AS rank,
           count(*) OVER () AS found
    FROM entity_merged m
    JOIN entities e ON e.name = m.name
),
relation_cut AS (
    SELECT src, tgt, similarity, degree,
           sum(tokens) OVER (ORDER BY idx, side ROWS UNBOUNDED PRECEDING) AS used,
           row_number() OVER (ORDER BY idx, side) AS rank,
           (SELECT edges FROM local_edge_counts)
           + (SELECT count(*) FROM global_relations g, local_names n
              WHERE NOT (g.src = ANY (n.names) OR g.tgt = ANY (n.names))) AS found
    FROM relation_merged
),
kept_entities AS MATERIALIZED (
    SELECT * FROM entity_cut WHERE used <= :max_entity_tokens AND :max_entity_tokens > 0
),
kept_relations AS MATERIALIZED (
    SELECT c.rank, c.found, c.degree, c.similarity, r.*
    FROM relation_cut c
    CROSS JOIN LATERAL (
        SELECT * FROM relations r WHERE r.src = c.src AND r.tgt = c.tgt LIMIT 1
    ) r
    WHERE c.used <= :max_relation_tokens AND :max_relation_tokens > 0
),
-- include: nearest_hits side=vector keys=chunk_id table=chunk_vectors query=:chunk_query limit={chunk_top_k} threshold=:threshold on=true
-- include: text_ranks terms=:lexical_chunks limit=:vector_top_k
query_chunks AS (
    SELECT row_number() OVER (ORDER BY sum(1.0 / ({rrf_k} + ranks.rank)) DESC, min(ranks.rank), ranks.id) AS idx,
           ranks.id
    FROM text_ranks ranks
    GROUP BY ranks.id
),
-- include: walk
-- include: bridge
fusing AS (
    SELECT chunks OR picks AS chunks, picks, by_similarity, walks,
           CASE WHEN picks THEN {pick_rrf_k} ELSE {rrf_k} END AS rrf_k
    FROM (SELECT :lexical_chunks::text IS NOT NULL AND :vector_top_k > 0 AS chunks,
                 :lexical_chunks::text IS NOT NULL AND :vector_top_k = 0 AND :local_query::vector IS NOT NULL AND :global_query::vector IS NOT NULL AS picks,
                 :lexical_chunks::text IS NOT NULL AND :vector_top_k = 0 AND (:local_query::vector IS NULL) <> (:global_query::vector IS NULL) AS by_similarity,
                 :walk_damping::float8 IS NOT NULL OR :bridge_keep::int IS NOT NULL AS walks) lists
),
-- include: chunk_picks side=entity rows=kept_entities keep=true counted=listed
-- include: chunk_picks side=relation rows=kept_relations keep="((SELECT picks FROM fusing) OR id NOT IN (SELECT id FROM entity_picks))" counted=first
merged AS (
    SELECT DISTINCT ON (id) id, idx, side, similarity
    FROM (
        SELECT id, idx, 0 AS side, NULL::float8 AS similarity FROM query_chunks
        UNION ALL
        SELECT id, idx, 1, similarity FROM entity_picks
        UNION ALL
        SELECT id, idx, 2, similarity FROM relation_picks
    ) lists
    WHERE NOT (SELECT chunks FROM fusing) AND NOT (SELECT walks FROM fusing)
    ORDER BY id, idx, side
),
fused AS (
    SELECT ranks.id, sum(1.0 / ((SELECT rrf_k FROM fusing) + ranks.rank)) AS score,
           min(ARRAY[ranks.rank, ranks.side]) AS best
    FROM (
        SELECT id, rank, list AS side FROM text_ranks
        UNION ALL
        SELECT id, idx, 2 FROM entity_picks
        UNION ALL
        SELECT id, idx, 3 FROM relation_picks
    ) ranks
    WHERE (SELECT chunks FROM fusing) AND NOT (SELECT walks FROM fusing)
    GROUP BY ranks.id
),
ordered AS (
    SELECT id, row_number() OVER (
               ORDER BY CASE WHEN (SELECT by_similarity FROM fusing) THEN similarity END DESC NULLS LAST, idx, side
           ) AS rank
    FROM merged
    UNION ALL
    SELECT id, row_number() OVER (ORDER BY score DESC, best, id) FROM fused
    UNION ALL
    SELECT id, row_number() OVER (ORDER BY side, idx, id)
    FROM (
        SELECT id, idx, 0 AS side FROM walk_picks
        UNION ALL
        SELECT id, place, 1 FROM bridged WHERE id NOT IN (SELECT id FROM walk_picks)
    ) walked
    WHERE (SELECT walks FROM fusing)
),
ranked AS (
    SELECT id, rank, count(*) OVER () AS merged_count
    FROM ordered
    ORDER BY rank
    LIMIT :chunk_limit
),
flags AS (
    SELECT NOT (SELECT walks FROM fusing)
        AND ((NOT EXISTS (SELECT 1 FROM entity_picks)
              AND EXISTS (SELECT 1 FROM entity_first l JOIN text_chunks c ON c.id = l.id))
          OR (NOT EXISTS (SELECT 1 FROM relation_picks)
              AND EXISTS (SELECT 1 FROM relation_first l JOIN text_chunks c ON c.id = l.id)))
        AS needs_weight
)
SELECT 'entity' AS kind, rank, found, name, NULL::text AS src, NULL::text AS tgt, entity_type,
       NULL::text AS keywords, description, NULL::float8 AS weight, source_ids, file_paths, version,
       created_at, updated_at, degree, similarity, context_tokens, NULL::text AS id, NULL::text AS content,
       NULL::text AS doc_id, NULL::int AS chunk_order_index, NULL::int AS tokens, NULL::text AS file_path,
       NULL::bool AS needs_weight
FROM kept_entities
UNION ALL
SELECT 'relation', rank, found, NULL, src, tgt, NULL, keywords, description, weight, source_ids, file_paths,
       version, created_at, updated_at, degree, similarity, context_tokens, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL
FROM kept_relations
UNION ALL
SELECT 'chunk', r.rank, r.merged_count, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       c.created_at, NULL, NULL, 1 - (v.embedding{halfvec} <=> :chunk_query::vector{halfvec}), NULL, c.id, c.content,
       c.doc_id, c.chunk_order_index, c.tokens, c.file_path, NULL
FROM ranked r
JOIN text_chunks c ON c.id = r.id
LEFT JOIN chunk_vectors v ON v.chunk_id = r.id
UNION ALL
SELECT 'flags', 0, coalesce((SELECT max(merged_count) FROM ranked), 0), NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, needs_weight
FROM flags
ORDER BY kind, rank;

-- name: naive
-- The chunks of a naive query, best first: the nearest to $1 (at most $3 = {top_k}, similarity
-- > $2) fused with the $3 chunks lexical_chunks finds for $4 (NULL: none) by
-- reciprocal rank (1 / ({rrf_k} + rank), summed; ties by best rank, then id), cut to $3.
-- Without $4 this is the vector search's order (distance, then id).
WITH
-- include: nearest_hits side=vector keys=chunk_id table=chunk_vectors query=$1 limit={top_k} threshold=$2 on=true
-- include: text_ranks terms=$4 limit=$3
fused AS (
    SELECT ranks.id, sum(1.0 / ({rrf_k} + ranks.rank)) AS score, min(ranks.rank) AS best
    FROM text_ranks ranks
    GROUP BY ranks.id
    ORDER BY score DESC, best, ranks.id
    LIMIT $3
)
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at,
       1 - (v.embedding{halfvec} <=> $1::vector{halfvec}) AS similarity
FROM fused f
JOIN text_chunks c ON c.id = f.id
LEFT JOIN chunk_vectors v ON v.chunk_id = f.id
ORDER BY f.score DESC, f.best, f.id;

-- name: homes
-- The homes the bridge finds (fragment entity_homes, with {bridge_fanout} and
-- {bridge_central} as in context) for the entities the question $1 names, or for every
-- entity when $1 is NULL: one row per entity in at most {bridge_fanout} chunks, with the
-- lowest rule that found a home (1 title, 2 heading, 3 file name, 4 central; NULL: none)
-- and its home chunks, for benches and diagnosis.
WITH
-- include: question_names question=$1 on="$1::text IS NOT NULL"
wanted AS MATERIALIZED (
    SELECT name FROM named_entities
    UNION ALL
    SELECT name FROM entities WHERE $1::text IS NULL
),
-- include: entity_homes side=wanted entities=wanted fanout={bridge_fanout} central={bridge_central}
counted AS (
    SELECT p.name, min(h.rule) AS rule,
           coalesce(array_agg(DISTINCT h.id) FILTER (WHERE h.id IS NOT NULL), '{}') AS homes
    FROM (SELECT DISTINCT name FROM wanted_pairs) p
    LEFT JOIN wanted_homes h ON h.name = p.name
    GROUP BY p.name
)
SELECT name, rule, homes FROM counted ORDER BY name;
