-- SQL of bench/multihop_bound.py: what a graph signal could reach around each question.

-- name: reachable
-- Every chunk a re-ranking graph signal could bring to each question, in one statement
-- for all the questions. Inputs, as parallel arrays: $1 question, $2 file path, $3 rank
-- (naive's ranked passages); $4 question, $5 entity name, $6 rank (the question's matched
-- entities, best first); $7 question, $8 its embedding. One row per question and chunk:
-- naive_rank (NULL: naive did not return it); hop_rank, the best naive rank of a chunk
-- sharing an entity row with it (one hop through entity_fragments and the entity's
-- source_ids), and hop_rank_capped, the same through entities in at most $9 chunks (no
-- hub); entity_rank and entity_rank_capped, the best rank of a matched entity whose
-- chunk it is; and similarity, its chunk vector's cosine similarity to the question.
WITH naive AS (
    SELECT n.q, c.id, min(n.rank) AS rank
    FROM unnest($1::int[], $2::text[], $3::int[]) AS n(q, path, rank)
    JOIN text_chunks c ON c.file_path = n.path
    GROUP BY n.q, c.id
),
matched AS (
    SELECT q, name, rank FROM unnest($4::int[], $5::text[], $6::int[]) AS m(q, name, rank)
),
questions AS (
    SELECT q, embedding FROM unnest($7::int[], $8::vector[]) AS v(q, embedding)
),
hop_entities AS (
    SELECT n.q, f.entity_name, min(n.rank) AS rank
    FROM naive n
    JOIN text_chunks t ON t.id = n.id
    JOIN entity_fragments f ON f.doc_id = t.doc_id AND f.chunk_id = n.id
    GROUP BY n.q, f.entity_name
),
reached AS (
    SELECT h.q, s.id, h.rank AS hop_rank, cardinality(e.source_ids) AS fanout,
           NULL::int AS entity_rank, NULL::int AS naive_rank
    FROM hop_entities h JOIN entities e ON e.name = h.entity_name, unnest(e.source_ids) AS s(id)
    UNION ALL
    SELECT m.q, s.id, NULL, cardinality(e.source_ids), m.rank, NULL
    FROM matched m JOIN entities e ON e.name = m.name, unnest(e.source_ids) AS s(id)
    UNION ALL
    SELECT q, id, NULL, 0, NULL, rank FROM naive
),
candidates AS (
    SELECT q, id, min(naive_rank) AS naive_rank,
           min(hop_rank) AS hop_rank, min(hop_rank) FILTER (WHERE fanout <= $9) AS hop_rank_capped,
           min(entity_rank) AS entity_rank,
           min(entity_rank) FILTER (WHERE fanout <= $9) AS entity_rank_capped
    FROM reached
    GROUP BY q, id
)
SELECT k.q, c.file_path, k.naive_rank, k.hop_rank, k.hop_rank_capped, k.entity_rank, k.entity_rank_capped,
       1 - (v.embedding <=> x.embedding) AS similarity
FROM candidates k
JOIN text_chunks c ON c.id = k.id
JOIN questions x ON x.q = k.q
LEFT JOIN chunk_vectors v ON v.chunk_id = k.id;
