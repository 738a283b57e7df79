-- SQL of whole-workspace transfers from and to upstream LightRAG: the importer's
-- batch writes and the exporter's pages. Every write takes a whole batch as parallel
-- arrays and leaves what is already stored alone (ON CONFLICT DO NOTHING), so a batch
-- written twice changes nothing and an interrupted import is finished by running it
-- again. A document imported from a source carries the source's name ($tag) and
-- upstream's status in doc_status.metadata->'lightrag_import'; chunks, vectors and
-- fragments are imported only for documents so marked as processed upstream, so a
-- document the workspace held before keeps its own.
--
-- Upstream 1.5.7 names a document inserted with a file path after the path, ours are
-- named after their content ("doc-" + MD5 of the cleaned text, so the same text is one
-- document whatever its name). An import gives each document our id; the session's
-- temporary table lightrag_import_docs maps upstream's ids to ours while it runs (it
-- is filled again by the documents phase of a rerun). When several upstream documents
-- hold the same text, the first one read is imported (its "owner" row), the others not.

-- fragment: imported_doc
-- The document {doc} was imported from source {tag} and was processed there.
EXISTS (
    SELECT 1 FROM doc_status s
    WHERE s.id = {doc}
      AND s.metadata -> 'lightrag_import' @> jsonb_build_object('source', {tag}::text, 'status', 'processed')
)

-- name: create_document_map
-- Upstream's document ids and ours, for this session (see the head of this file).
CREATE TEMPORARY TABLE IF NOT EXISTS lightrag_import_docs (
    upstream_id text PRIMARY KEY,
    doc_id text NOT NULL,
    owner boolean NOT NULL
);

-- name: map_documents
-- Record upstream's ids $1 with our ids $2; $3: the first of the batch with that content.
-- A row owns its document unless an earlier batch mapped another id to it. Returns the
-- upstream ids that own their document.
WITH ins AS (
    INSERT INTO lightrag_import_docs (upstream_id, doc_id, owner)
    SELECT u.upstream_id, u.doc_id,
           u.first AND NOT EXISTS (SELECT 1 FROM lightrag_import_docs m WHERE m.doc_id = u.doc_id)
    FROM unnest($1::text[], $2::text[], $3::bool[]) AS u(upstream_id, doc_id, first)
    ORDER BY u.upstream_id
    ON CONFLICT (upstream_id) DO NOTHING
    RETURNING upstream_id, owner
)
SELECT i.upstream_id FROM ins i WHERE i.owner
UNION
SELECT m.upstream_id FROM lightrag_import_docs m
WHERE m.upstream_id = ANY($1::text[]) AND m.owner;

-- name: import_documents
-- Store documents ($1-$3) that are not stored yet, without a status (their status
-- follows; a document without one is never listed nor processed). Returns how many
-- were stored.
WITH ins AS (
    INSERT INTO full_docs (id, content, file_path)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, content, file_path)
    ORDER BY 1
    ON CONFLICT (id) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins;

-- name: import_statuses
-- Store the statuses ($1-$13, by upstream's document id) of stored documents that have
-- none yet, under our id, marked with the source $14, upstream's status $13 and id.
-- Returns every given id with ours and its outcome: imported, resumed (marked by this
-- source earlier), present (the workspace's own, or another source's: skipped),
-- duplicate (another upstream document holds the same text) or no_content (no text).
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::jsonb[],
                         $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::timestamptz[],
                         $12::timestamptz[], $13::text[])
        AS u(id, status, content_summary, content_length, chunks_count, chunks_list, file_path,
             track_id, error_msg, metadata, created_at, updated_at, upstream_status)
), ins AS (
    INSERT INTO doc_status (id, status, content_summary, content_length, chunks_count, chunks_list,
                            file_path, track_id, error_msg, metadata, created_at, updated_at)
    SELECT m.doc_id, r.status, r.content_summary, r.content_length, r.chunks_count,
           ARRAY(SELECT jsonb_array_elements_text(r.chunks_list)), r.file_path, r.track_id, r.error_msg,
           r.metadata || jsonb_build_object(
               'lightrag_import', jsonb_build_object('source', $14::text, 'status', r.upstream_status,
                                                     'upstream_id', r.id)),
           coalesce(r.created_at, now()), coalesce(r.updated_at, r.created_at, now())
    FROM rows r
    JOIN lightrag_import_docs m ON m.upstream_id = r.id AND m.owner
    WHERE EXISTS (SELECT 1 FROM full_docs d WHERE d.id = m.doc_id)
    ORDER BY m.doc_id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
)
SELECT r.id, m.doc_id,
       CASE WHEN m.upstream_id IS NULL THEN 'no_content'
            WHEN NOT m.owner THEN 'duplicate'
            WHEN i.id IS NOT NULL THEN 'imported'
            WHEN s.id IS NULL THEN 'no_content'
            WHEN s.metadata -> 'lightrag_import' ->> 'source' = $14::text THEN 'resumed'
            ELSE 'present' END AS outcome
FROM rows r
LEFT JOIN lightrag_import_docs m ON m.upstream_id = r.id
LEFT JOIN ins i ON i.id = m.doc_id
LEFT JOIN doc_status s ON s.id = m.doc_id;

-- name: statusless_documents
-- Stored documents without a status, after the id $1, at most $2 (the reserved
-- document of manual edits excepted): imported without a status upstream.
SELECT d.id FROM full_docs d
WHERE d.id > $1 AND d.id <> 'manual-edits'
  AND NOT EXISTS (SELECT 1 FROM doc_status s WHERE s.id = d.id)
ORDER BY d.id LIMIT $2;

-- name: pending_statuses
-- Give the documents $1 (stored, without a status) a pending status marked with the
-- source $2 (upstream's status: none); returns how many.
WITH ins AS (
    INSERT INTO doc_status (id, status, content_summary, content_length, file_path, metadata)
    SELECT d.id, 'pending', left(d.content, 100), length(d.content), d.file_path,
           jsonb_build_object('lightrag_import', jsonb_build_object('source', $2::text, 'status', 'none'))
    FROM full_docs d WHERE d.id = ANY($1::text[])
    ORDER BY d.id
    ON CONFLICT (id) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins;

-- name: import_chunks
-- Store the chunks ($1-$6, of upstream's document ids) of documents imported from source
-- $7 and processed there, under our document ids.
-- Returns how many were given, how many belong to such documents, and how many were stored.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[])
        AS u(id, doc_id, chunk_order_index, tokens, content, file_path)
), ok AS (
    SELECT r.id, m.doc_id, r.chunk_order_index, r.tokens, r.content, r.file_path
    FROM rows r JOIN lightrag_import_docs m ON m.upstream_id = r.doc_id AND m.owner
    WHERE
        -- include: imported_doc doc=m.doc_id tag=$7
), ins AS (
    INSERT INTO text_chunks (id, doc_id, chunk_order_index, tokens, content, file_path)
    SELECT * FROM ok ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM rows) AS given, (SELECT count(*) FROM ok) AS eligible,
       (SELECT count(*) FROM ins) AS written;

-- name: import_chunk_vectors
-- Store the vectors ($1 chunk ids, $2 vectors) of imported chunks (source $3) that have
-- none; returns given, eligible and written as import_chunks.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::vector[]) AS u(chunk_id, embedding)
), ok AS (
    SELECT r.* FROM rows r JOIN text_chunks c ON c.id = r.chunk_id
    WHERE
        -- include: imported_doc doc=c.doc_id tag=$3
), ins AS (
    INSERT INTO chunk_vectors (chunk_id, embedding)
    SELECT * FROM ok ORDER BY chunk_id
    ON CONFLICT (chunk_id) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM rows) AS given, (SELECT count(*) FROM ok) AS eligible,
       (SELECT count(*) FROM ins) AS written;

-- name: import_cache
-- Store cached LLM answers ($1-$7) under keys not stored yet; returns how many.
WITH ins AS (
    INSERT INTO llm_cache (id, cache_type, mode, chunk_id, prompt, response, created_at)
    SELECT u.id, u.cache_type, u.mode, u.chunk_id, u.prompt, u.response, coalesce(u.created_at, now())
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
        AS u(id, cache_type, mode, chunk_id, prompt, response, created_at)
    ORDER BY u.id
    ON CONFLICT (id) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins;

-- name: import_entities
-- Store entities ($1-$8) not stored yet (version 1); returns how many.
WITH ins AS (
    INSERT INTO entities (name, entity_type, description, source_ids, file_paths, version, context_tokens,
                          created_at, updated_at)
    SELECT u.name, u.entity_type, u.description,
           ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
           ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
           1, u.context_tokens, coalesce(u.created_at, now()), coalesce(u.created_at, now())
    FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::int[], $7::timestamptz[])
        AS u(name, entity_type, description, source_ids, file_paths, context_tokens, created_at)
    ORDER BY u.name COLLATE "C"
    ON CONFLICT (name) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins;

-- name: import_entity_vectors
-- Store the vectors ($1 names, $2 texts, $3 vectors) of stored entities that have none;
-- returns given, eligible (the entity is stored) and written.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::vector[]) AS u(name, content, embedding)
), ok AS (
    SELECT r.* FROM rows r WHERE EXISTS (SELECT 1 FROM entities e WHERE e.name = r.name)
), ins AS (
    INSERT INTO entity_vectors (name, content, embedding)
    SELECT * FROM ok ORDER BY name COLLATE "C"
    ON CONFLICT (name) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM rows) AS given, (SELECT count(*) FROM ok) AS eligible,
       (SELECT count(*) FROM ins) AS written;

-- name: import_relations
-- Store relations ($1-$9, canonical pairs) not stored yet whose endpoints are stored;
-- returns given, eligible (both endpoints stored) and written.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::jsonb[],
                         $7::jsonb[], $8::int[], $9::timestamptz[])
        AS u(src, tgt, keywords, description, weight, source_ids, file_paths, context_tokens, created_at)
), ok AS (
    SELECT r.* FROM rows r
    WHERE EXISTS (SELECT 1 FROM entities e WHERE e.name = r.src)
      AND EXISTS (SELECT 1 FROM entities e WHERE e.name = r.tgt)
), ins AS (
    INSERT INTO relations (src, tgt, keywords, description, weight, source_ids, file_paths, version,
                           context_tokens, created_at, updated_at)
    SELECT u.src, u.tgt, u.keywords, u.description, u.weight,
           ARRAY(SELECT jsonb_array_elements_text(u.source_ids)),
           ARRAY(SELECT jsonb_array_elements_text(u.file_paths)),
           1, u.context_tokens, coalesce(u.created_at, now()), coalesce(u.created_at, now())
    FROM ok u
    ORDER BY u.src COLLATE "C", u.tgt COLLATE "C"
    ON CONFLICT (src, tgt) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM rows) AS given, (SELECT count(*) FROM ok) AS eligible,
       (SELECT count(*) FROM ins) AS written;

-- name: import_relation_vectors
-- Store the vectors ($1, $2 canonical pairs, $3 texts, $4 vectors) of stored relations
-- that have none; returns given, eligible and written.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::vector[]) AS u(src, tgt, content, embedding)
), ok AS (
    SELECT r.* FROM rows r WHERE EXISTS (SELECT 1 FROM relations x WHERE x.src = r.src AND x.tgt = r.tgt)
), ins AS (
    INSERT INTO relation_vectors (src, tgt, content, embedding)
    SELECT * FROM ok ORDER BY src COLLATE "C", tgt COLLATE "C"
    ON CONFLICT (src, tgt) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM rows) AS given, (SELECT count(*) FROM ok) AS eligible,
       (SELECT count(*) FROM ins) AS written;

-- name: imported_chunks_with_answers
-- A page of the chunks imported from source $1 (after chunk id $2, at most $3), each
-- with upstream's cached extraction answers for it (its cache keys are upstream's, not
-- lightrag_pg's "extract:..."), oldest first; `initial` tells an answer whose prompt
-- holds the chunk's text (the first extraction) from a gleaning answer, `at` is when
-- it was cached (seconds since the epoch).
SELECT c.id, c.doc_id, c.content, c.file_path,
       coalesce((
           SELECT jsonb_agg(jsonb_build_object('id', l.id, 'response', l.response,
                                               'initial', strpos(l.prompt, c.content) > 0,
                                               'at', extract(epoch FROM l.created_at))
                            ORDER BY l.created_at, l.id COLLATE "C")
           FROM llm_cache l
           WHERE l.chunk_id = c.id AND l.cache_type = 'extract' AND l.id NOT LIKE 'extract:%'
       ), '[]'::jsonb) AS answers
FROM text_chunks c
WHERE c.id > $2
  AND
      -- include: imported_doc doc=c.doc_id tag=$1
ORDER BY c.id
LIMIT $3;

-- name: add_entity_fragments
-- Record entity fragments ($1-$7) of stored entities, the type spelled as the entity's
-- own when it is the same ignoring case, and link their documents; returns how many
-- fragments were recorded.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
        AS u(entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
), ins AS (
    INSERT INTO entity_fragments (entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
    SELECT r.entity_name, r.chunk_id, r.seq, r.doc_id,
           CASE WHEN lower(r.entity_type) = lower(e.entity_type) THEN e.entity_type ELSE r.entity_type END,
           r.description, r.file_path
    FROM rows r JOIN entities e ON e.name = r.entity_name
    ORDER BY r.entity_name COLLATE "C", r.chunk_id COLLATE "C", r.seq
    ON CONFLICT DO NOTHING
    RETURNING entity_name, doc_id
), links AS (
    INSERT INTO doc_entities (doc_id, entity_name)
    SELECT DISTINCT doc_id, entity_name FROM ins
    ORDER BY 1, 2
    ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins;

-- name: add_relation_fragments
-- Record relation fragments ($1-$9, canonical pairs) of stored relations and link their
-- documents; returns how many were recorded.
WITH rows AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
                         $8::float8[], $9::text[])
        AS u(src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
), ins AS (
    INSERT INTO relation_fragments (src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
    SELECT r.* FROM rows r
    WHERE EXISTS (SELECT 1 FROM relations x WHERE x.src = r.src AND x.tgt = r.tgt)
    ORDER BY r.src COLLATE "C", r.tgt COLLATE "C", r.chunk_id COLLATE "C", r.seq
    ON CONFLICT DO NOTHING
    RETURNING src, tgt, doc_id
), links AS (
    INSERT INTO doc_relations (doc_id, src, tgt)
    SELECT DISTINCT doc_id, src, tgt FROM ins
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins;

-- fragment: description_of_chunk
-- The description a chunk at position {at} of a list of {count} chunks gets of a row's
-- stored description {text} when its own extraction is not known: the {at}-th of its
-- <SEP>-joined pieces when there are as many pieces as chunks (upstream joins a new
-- chunk's piece after the others, in the order of the list), else the whole text (a
-- summary, or pieces merged away: short, as upstream summarises long ones).
CASE WHEN cardinality(string_to_array({text}, '<SEP>')) = {count}
     THEN (string_to_array({text}, '<SEP>'))[{at}]
     ELSE {text} END

-- name: fill_entity_fragments
-- For each entity $1 and each chunk of its list $2 (a JSON array) that was imported from
-- source $3 and holds no fragment of the entity: one fragment carrying the entity's
-- stored type and its description of the chunk (description_of_chunk: upstream's
-- extraction of that chunk is not known), with its document's link. Then the entities
-- $1 no document contributes to (no fragment, no link: every chunk of theirs was
-- skipped) are deleted. Returns how many fragments were recorded and how many entities
-- deleted.
WITH given AS (
    SELECT DISTINCT ON (u.name, j.chunk_id) u.name, j.chunk_id, j.at, jsonb_array_length(u.chunks) AS count
    FROM unnest($1::text[], $2::jsonb[]) AS u(name, chunks),
         jsonb_array_elements_text(u.chunks) WITH ORDINALITY AS j(chunk_id, at)
    ORDER BY u.name, j.chunk_id, j.at
), missing AS (
    SELECT g.name, g.chunk_id, c.doc_id, e.entity_type,
           -- include: description_of_chunk text=e.description at=g.at::int count=g.count
           AS description,
           c.file_path
    FROM given g
    JOIN entities e ON e.name = g.name
    JOIN text_chunks c ON c.id = g.chunk_id
    WHERE
        -- include: imported_doc doc=c.doc_id tag=$3
      AND NOT EXISTS (SELECT 1 FROM entity_fragments f WHERE f.entity_name = g.name AND f.chunk_id = g.chunk_id)
), ins AS (
    INSERT INTO entity_fragments (entity_name, chunk_id, seq, doc_id, entity_type, description, file_path)
    SELECT m.name, m.chunk_id, 0, m.doc_id, m.entity_type, m.description, m.file_path FROM missing m
    ORDER BY m.name COLLATE "C", m.chunk_id COLLATE "C"
    ON CONFLICT DO NOTHING
    RETURNING entity_name, doc_id
), links AS (
    INSERT INTO doc_entities (doc_id, entity_name)
    SELECT DISTINCT doc_id, entity_name FROM ins
    ORDER BY 1, 2
    ON CONFLICT DO NOTHING
), gone AS (
    DELETE FROM entities e
    WHERE e.name = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM ins i WHERE i.entity_name = e.name)
      AND NOT EXISTS (SELECT 1 FROM entity_fragments f WHERE f.entity_name = e.name)
      AND NOT EXISTS (SELECT 1 FROM doc_entities l WHERE l.entity_name = e.name)
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins) AS filled, (SELECT count(*) FROM gone) AS swept;

-- name: fill_relation_fragments
-- As fill_entity_fragments for relations ($1, $2 canonical pairs, $3 chunk lists,
-- $4 the source): each missing fragment carries the relation's keywords, its
-- description of the chunk, and an equal share of the weight its recorded fragments
-- leave, so the fragments' weights add up to the stored weight; relations left without
-- any contribution are deleted.
WITH given AS (
    SELECT DISTINCT ON (u.src, u.tgt, j.chunk_id) u.src, u.tgt, j.chunk_id, j.at,
           jsonb_array_length(u.chunks) AS count
    FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS u(src, tgt, chunks),
         jsonb_array_elements_text(u.chunks) WITH ORDINALITY AS j(chunk_id, at)
    ORDER BY u.src, u.tgt, j.chunk_id, j.at
), missing AS (
    SELECT g.src, g.tgt, g.chunk_id, c.doc_id, r.keywords,
           -- include: description_of_chunk text=r.description at=g.at::int count=g.count
           AS description,
           r.weight, c.file_path
    FROM given g
    JOIN relations r ON r.src = g.src AND r.tgt = g.tgt
    JOIN text_chunks c ON c.id = g.chunk_id
    WHERE
        -- include: imported_doc doc=c.doc_id tag=$4
      AND NOT EXISTS (SELECT 1 FROM relation_fragments f
                      WHERE f.src = g.src AND f.tgt = g.tgt AND f.chunk_id = g.chunk_id)
), shares AS (
    SELECT m.*, greatest(m.weight - coalesce((
               SELECT sum(f.weight) FROM relation_fragments f WHERE f.src = m.src AND f.tgt = m.tgt), 0), 0)
             / count(*) OVER (PARTITION BY m.src, m.tgt) AS share
    FROM missing m
), ins AS (
    INSERT INTO relation_fragments (src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path)
    SELECT s.src, s.tgt, s.chunk_id, 0, s.doc_id, s.keywords, s.description, s.share, s.file_path
    FROM shares s
    ORDER BY s.src COLLATE "C", s.tgt COLLATE "C", s.chunk_id COLLATE "C"
    ON CONFLICT DO NOTHING
    RETURNING src, tgt, doc_id
), links AS (
    INSERT INTO doc_relations (doc_id, src, tgt)
    SELECT DISTINCT doc_id, src, tgt FROM ins
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING
), gone AS (
    DELETE FROM relations r
    USING unnest($1::text[], $2::text[]) AS p(src, tgt)
    WHERE r.src = p.src AND r.tgt = p.tgt
      AND NOT EXISTS (SELECT 1 FROM ins i WHERE i.src = r.src AND i.tgt = r.tgt)
      AND NOT EXISTS (SELECT 1 FROM relation_fragments f WHERE f.src = r.src AND f.tgt = r.tgt)
      AND NOT EXISTS (SELECT 1 FROM doc_relations l WHERE l.src = r.src AND l.tgt = r.tgt)
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins) AS filled, (SELECT count(*) FROM gone) AS swept;

-- name: mixed_entities
-- Of the entities after name $2 (at most $3 looked at), those holding fragments of
-- documents imported from source $1 and contributions of other documents (the
-- workspace's own, manual edits, another source): their stored row is one side's only.
-- Returns the last name looked at and the mixed names.
WITH page AS (
    SELECT e.name FROM entities e
    WHERE e.name > $2
    ORDER BY e.name LIMIT $3
), mixed AS (
    SELECT p.name FROM page p
    WHERE EXISTS (SELECT 1 FROM entity_fragments f WHERE f.entity_name = p.name
                  AND
                      -- include: imported_doc doc=f.doc_id tag=$1
                  )
      AND (EXISTS (SELECT 1 FROM entity_fragments f WHERE f.entity_name = p.name
                   AND NOT
                       -- include: imported_doc doc=f.doc_id tag=$1
                   )
           OR EXISTS (SELECT 1 FROM doc_entities l WHERE l.entity_name = p.name
                      AND NOT
                          -- include: imported_doc doc=l.doc_id tag=$1
                      ))
)
SELECT (SELECT max(name) FROM page) AS last,
       coalesce((SELECT array_agg(name ORDER BY name) FROM mixed), '{}') AS mixed;

-- name: mixed_relations
-- As mixed_entities, for relations after the pair ($2, $3), at most $4.
WITH page AS (
    SELECT r.src, r.tgt FROM relations r
    WHERE (r.src, r.tgt) > ($2, $3)
    ORDER BY r.src, r.tgt LIMIT $4
), mixed AS (
    SELECT p.src, p.tgt FROM page p
    WHERE EXISTS (SELECT 1 FROM relation_fragments f WHERE f.src = p.src AND f.tgt = p.tgt
                  AND
                      -- include: imported_doc doc=f.doc_id tag=$1
                  )
      AND (EXISTS (SELECT 1 FROM relation_fragments f WHERE f.src = p.src AND f.tgt = p.tgt
                   AND NOT
                       -- include: imported_doc doc=f.doc_id tag=$1
                   )
           OR EXISTS (SELECT 1 FROM doc_relations l WHERE l.src = p.src AND l.tgt = p.tgt
                      AND NOT
                          -- include: imported_doc doc=l.doc_id tag=$1
                      ))
), last AS (
    SELECT src, tgt FROM page ORDER BY src DESC, tgt DESC LIMIT 1
)
SELECT (SELECT src FROM last) AS last_src, (SELECT tgt FROM last) AS last_tgt,
       coalesce((SELECT array_agg(src ORDER BY src, tgt) FROM mixed), '{}') AS srcs,
       coalesce((SELECT array_agg(tgt ORDER BY src, tgt) FROM mixed), '{}') AS tgts;

-- name: imported_counts
-- What the workspace holds of source $1: documents by status, their chunks, the
-- fragments recorded for them, and the workspace's entities and relations.
SELECT
    (SELECT count(*) FROM doc_status s WHERE s.metadata -> 'lightrag_import' ->> 'source' = $1) AS documents,
    (SELECT count(*) FROM text_chunks c WHERE
        -- include: imported_doc doc=c.doc_id tag=$1
    ) AS chunks,
    (SELECT count(*) FROM entity_fragments f WHERE
        -- include: imported_doc doc=f.doc_id tag=$1
    ) AS entity_fragments,
    (SELECT count(*) FROM relation_fragments f WHERE
        -- include: imported_doc doc=f.doc_id tag=$1
    ) AS relation_fragments,
    (SELECT count(*) FROM entities) AS entities,
    (SELECT count(*) FROM relations) AS relations;

-- name: stored_documents
-- Which of the document ids $1 are stored.
SELECT id FROM full_docs WHERE id = ANY($1::text[]);

-- name: stored_entities
-- Which of the entity names $1 are stored.
SELECT name FROM entities WHERE name = ANY($1::text[]);

-- name: stored_relations
-- Which of the canonical pairs ($1, $2) are stored.
SELECT r.src, r.tgt FROM relations r
JOIN unnest($1::text[], $2::text[]) AS p(src, tgt) ON r.src = p.src AND r.tgt = p.tgt;

-- name: reembed_running
-- Whether a re-embed of the workspace is in progress (its vectors are being replaced).
SELECT EXISTS (SELECT 1 FROM reembed_state);

-- The exporter's pages: every read is one page after the last key of the page before
-- ($1, or the pair $1, $2; '' from the start), in key order (the keys' own collation, so
-- the primary key index serves it), read in one snapshot.

-- fragment: upstream_cache_key
-- Whether the cache key {key} has upstream's form (mode:type:hash), which upstream looks up.
{key} ~ '^(default|local|global|hybrid|mix|naive|bypass):(extract|summary|keywords|query):'

-- name: export_statuses
-- Documents with a status (the reserved manual-edits document has none), with their text.
SELECT s.id, s.status, s.content_summary, s.content_length, s.chunks_count, s.chunks_list, s.file_path,
       s.track_id, s.error_msg, s.metadata, s.created_at, s.updated_at, d.content, d.created_at AS doc_created
FROM doc_status s LEFT JOIN full_docs d ON d.id = s.id
WHERE s.id > $1
ORDER BY s.id LIMIT $2;

-- name: export_chunks
-- Chunks with their vectors and the keys of their cached extraction answers in upstream's form.
SELECT c.id, c.doc_id, c.chunk_order_index, c.tokens, c.content, c.file_path, c.created_at, c.updated_at,
       v.embedding::real[] AS embedding,
       ARRAY(SELECT l.id FROM llm_cache l
             WHERE l.chunk_id = c.id AND
                 -- include: upstream_cache_key key=l.id
             ORDER BY l.created_at, l.id COLLATE "C") AS cache_keys
FROM text_chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id
WHERE c.id > $1
ORDER BY c.id LIMIT $2;

-- name: export_cache
-- Cached answers under upstream's keys.
SELECT l.id, l.cache_type, l.chunk_id, l.prompt, l.response, l.created_at FROM llm_cache l
WHERE l.id > $1 AND
    -- include: upstream_cache_key key=l.id
ORDER BY l.id LIMIT $2;

-- name: export_entities
-- Entities with their vectors and every chunk they were extracted from: their source
-- ids in order, then the other chunks their fragments name (manual edits are no chunk).
SELECT e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.created_at, e.updated_at,
       v.content AS vector_content, v.embedding::real[] AS embedding,
       e.source_ids || ARRAY(
           SELECT DISTINCT f.chunk_id FROM entity_fragments f
           WHERE f.entity_name = e.name AND f.chunk_id <> ALL(e.source_ids) AND f.chunk_id <> 'manual_creation'
           ORDER BY 1) AS chunk_ids
FROM entities e LEFT JOIN entity_vectors v ON v.name = e.name
WHERE e.name > $1
ORDER BY e.name LIMIT $2;

-- name: export_relations
-- Relations with their vectors and chunks; see export_entities.
SELECT r.src, r.tgt, r.keywords, r.description, r.weight, r.source_ids, r.file_paths, r.created_at,
       r.updated_at, v.content AS vector_content, v.embedding::real[] AS embedding,
       r.source_ids || ARRAY(
           SELECT DISTINCT f.chunk_id FROM relation_fragments f
           WHERE f.src = r.src AND f.tgt = r.tgt AND f.chunk_id <> ALL(r.source_ids)
             AND f.chunk_id <> 'manual_creation'
           ORDER BY 1) AS chunk_ids
FROM relations r LEFT JOIN relation_vectors v ON v.src = r.src AND v.tgt = r.tgt
WHERE (r.src, r.tgt) > ($1, $2)
ORDER BY r.src, r.tgt LIMIT $3;

-- name: export_doc_links
-- Per document with a status, the entities and relations (pairs) it contributed to.
SELECT s.id,
       ARRAY(SELECT l.entity_name FROM doc_entities l WHERE l.doc_id = s.id
             ORDER BY l.entity_name COLLATE "C") AS entities,
       ARRAY(SELECT jsonb_build_array(l.src, l.tgt) FROM doc_relations l WHERE l.doc_id = s.id
             ORDER BY l.src COLLATE "C", l.tgt COLLATE "C") AS relations
FROM doc_status s
WHERE s.id > $1
ORDER BY s.id LIMIT $2;

-- name: vectors_present
-- Whether any of the three vector tables holds a row (an empty workspace has none).
SELECT EXISTS (SELECT 1 FROM chunk_vectors) OR EXISTS (SELECT 1 FROM entity_vectors)
    OR EXISTS (SELECT 1 FROM relation_vectors);

-- name: hnsw_present
-- The HNSW indexes of the vector tables that exist (named {table}_embedding_hnsw).
SELECT c.relname::text AS name FROM pg_class c
WHERE c.relkind = 'i' AND c.relnamespace = current_schema()::regnamespace
  AND c.relname IN ('chunk_vectors_embedding_hnsw', 'entity_vectors_embedding_hnsw',
                    'relation_vectors_embedding_hnsw');

-- name: drop_hnsw
-- Before a bulk import into an empty workspace: the vector tables' HNSW indexes go, to
-- be built once over all the rows at the end (much faster than row by row). Until then
-- a search scans the table: slower, and exact.
DROP INDEX IF EXISTS chunk_vectors_embedding_hnsw, entity_vectors_embedding_hnsw, relation_vectors_embedding_hnsw;

-- name: build_memory
-- For the index builds of this transaction, at least $1 bytes of maintenance_work_mem
-- (never less than the server's setting): an HNSW graph that outgrows it is built much
-- more slowly (92,000 vectors of 64 dimensions: 71 s with the default 64 MB, 37 s with 512 MB).
SELECT set_config('maintenance_work_mem',
                  (greatest(pg_size_bytes(current_setting('maintenance_work_mem')), $1::bigint) / 1024)::bigint
                  || 'kB', true);

-- name: hnsw_vector
-- The cosine HNSW index of a vector table of at most 2,000 dimensions, as migration 0001 makes it.
CREATE INDEX IF NOT EXISTS {index} ON {table} USING hnsw (embedding vector_cosine_ops)
WITH (m = 16, ef_construction = 64);

-- name: hnsw_halfvec
-- The same above 2,000 dimensions, on the halfvec({dim}) cast of the column.
CREATE INDEX IF NOT EXISTS {index} ON {table} USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops)
WITH (m = 16, ef_construction = 64);

-- name: foreign_documents
-- Whether the workspace holds a document not imported from source $1 (the workspace's
-- own, manual edits, another source): only then can a row hold both kinds of contributions.
SELECT EXISTS (
    SELECT 1 FROM full_docs d
    WHERE NOT EXISTS (SELECT 1 FROM doc_status s
                      WHERE s.id = d.id AND s.metadata -> 'lightrag_import' ->> 'source' = $1)
);
