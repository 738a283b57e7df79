"""SQLAlchemy Core metadata of one workspace schema, shared with Alembic.

Tables carry no schema: every workspace connection has its own schema first on
``search_path``, so the same metadata describes every workspace. Vector columns
need the workspace's embedding dimension, hence :func:`build_metadata`.
"""

from __future__ import annotations

from typing import Any

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    literal_column,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID

from ..types import UNKNOWN_SOURCE
from .dimensions import VECTOR_HNSW_MAX_DIM


def _ts(name: str, comment: str) -> Column[Any]:
    return Column(
        name, DateTime(timezone=True), nullable=False, server_default=text("now()"), comment=comment
    )


def _text_array(name: str, comment: str) -> Column[Any]:
    return Column(name, ARRAY(Text), nullable=False, server_default=text("'{}'::text[]"), comment=comment)


def _merged_columns(kind: str) -> list[Column[Any]]:
    """Provenance and bookkeeping columns shared by entities and relations."""
    return [
        _text_array("source_ids", f"Ids of the chunks the {kind} was extracted from (capped)"),
        _text_array("file_paths", f"Files the {kind} was extracted from (capped)"),
        Column(
            "version",
            Integer,
            nullable=False,
            server_default=text("1"),
            comment="Incremented on every merge; used to detect concurrent merges",
        ),
        Column(
            "context_tokens",
            Integer,
            nullable=True,
            comment=f"Tokens of the {kind}'s context line, counted when written (NULL: not counted)",
        ),
        _ts("created_at", f"When the {kind} was first merged"),
        _ts("updated_at", f"When the {kind} last changed"),
    ]


def hnsw_expression(embedding_dim: int) -> str | None:
    """The indexed expression of a vector column when it is not the column itself.

    Up to :data:`VECTOR_HNSW_MAX_DIM` dimensions the HNSW index is on ``embedding``
    (``None``); wider embeddings keep their ``vector(dim)`` column, readable as
    usual, and are indexed as ``embedding::halfvec(dim)``. A search uses that
    index only if it orders by the same expression.
    """
    if embedding_dim <= VECTOR_HNSW_MAX_DIM:
        return None
    return f"(embedding::halfvec({int(embedding_dim)}))"


def _hnsw(table: str, embedding_dim: int) -> Index:
    expression = hnsw_expression(embedding_dim)
    if expression is None:
        return Index(
            f"{table}_embedding_hnsw",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"embedding": "vector_cosine_ops"},
        )
    return Index(
        f"{table}_embedding_hnsw",
        literal_column(expression).label("embedding_halfvec"),
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding_halfvec": "halfvec_cosine_ops"},
    )


def _lexical_indexes(table: str, lexical: str) -> list[Index]:
    """The lexical search indexes of ``table`` for a workspace's backend (migrations 0008, 0009,
    0012: on the tsvector backend, chunk text is searched through ``chunk_terms``)."""
    if table == "text_chunks":
        return [_bm25("text_chunks_content_bm25", "content")] if lexical == "bm25" else []
    name_key = Index("entities_name_key_idx", literal_column("lexical_name_key(name)").label("name_key"))
    if lexical == "bm25":
        return [
            name_key,
            _bm25("entities_name_bm25", "name"),
            _bm25("entities_description_bm25", "description"),
        ]
    text = (
        "(setweight(to_tsvector('english'::regconfig, name), 'A'::\"char\") "
        "|| setweight(to_tsvector('english'::regconfig, description), 'B'::\"char\"))"
    )
    return [
        name_key,
        Index("entities_text_fts", literal_column(text).label("text_fts"), postgresql_using="gin"),
    ]


def _lexical_columns(table: str, lexical: str) -> list[Column[Any]]:
    """The stored lexemes of chunk text on the tsvector backend (migration 0009)."""
    if table != "text_chunks" or lexical == "bm25":
        return []
    return [
        Column(
            "lexemes",
            TSVECTOR,
            Computed("to_tsvector('english'::regconfig, content)", persisted=True),
            comment="English lexemes of content with their positions (full text search term counts)",
        )
    ]


def _chunk_terms(md: MetaData, lexical: str) -> None:
    """The inverted table of chunk lexemes on the tsvector backend (migration 0012)."""
    if lexical == "bm25":
        return
    Table(
        "chunk_terms",
        md,
        Column("lexeme", Text, nullable=False, comment="English lexeme of the chunk text"),
        Column("chunk_id", Text, nullable=False, comment="Chunk id (text_chunks.id)"),
        Column(
            "tf", Integer, nullable=False, comment="Occurrences of the lexeme in the chunk (its positions)"
        ),
        Column(
            "tokens", Integer, nullable=False, comment="Number of tokens in the chunk (text_chunks.tokens)"
        ),
        PrimaryKeyConstraint(
            "lexeme", "chunk_id", name="chunk_terms_pkey", postgresql_include=["tf", "tokens"]
        ),
        comment="Lexemes of every chunk with their counts (full text search term counts), "
        "kept by triggers on text_chunks",
    )


def _corpus_counts(md: MetaData, lexical: str) -> None:
    """The exact chunk and entity counts lexical ranking reads, as deltas, on the tsvector
    backend (migration 0016)."""
    if lexical == "bm25":
        return
    Table(
        "corpus_counts",
        md,
        Column("id", UUID, nullable=False, comment="Random key of the delta"),
        Column(
            "chunks",
            BigInteger,
            nullable=False,
            server_default=text("0"),
            comment="Chunks added (negative: removed)",
        ),
        Column(
            "entities",
            BigInteger,
            nullable=False,
            server_default=text("0"),
            comment="Entities added (negative: removed)",
        ),
        PrimaryKeyConstraint("id", name="corpus_counts_pkey"),
        comment="Exact number of chunks and entities as the sums of these deltas (lexical ranking), "
        "kept by triggers",
    )


def _bm25(name: str, column: str) -> Index:
    return Index(name, column, postgresql_using="bm25", postgresql_with={"text_config": "english"})


def build_metadata(embedding_dim: int, lexical: str = "bm25") -> MetaData:
    """Return the metadata of one workspace whose vectors have ``embedding_dim`` dimensions
    and whose lexical search backend is ``lexical`` (``bm25`` or ``tsvector``)."""
    md = MetaData()
    Table(
        "workspace_info",
        md,
        Column(
            "id",
            Integer,
            primary_key=True,
            server_default=text("1"),
            comment="Always 1: one row per workspace",
        ),
        Column("embedding_dim", Integer, nullable=False, comment="Dimension of every vector column"),
        Column(
            "embedding_model",
            Text,
            nullable=True,
            comment="Name of the embedding model of the stored vectors",
        ),
        Column("graph_enabled", Boolean, nullable=False, comment="Whether the AGE graph mirror exists"),
        _ts("created_at", "When the workspace was created"),
        Column(
            "lexical_backend",
            Text,
            nullable=False,
            comment="Lexical search index: bm25 (pg_textsearch) or tsvector (built-in full text search), "
            "chosen at creation",
        ),
        Column(
            "distributed",
            Boolean,
            nullable=False,
            server_default=text("false"),
            comment="Whether the workspace is a Citus distributed schema, placed whole on one worker",
        ),
        CheckConstraint("id = 1", name="workspace_info_single_row"),
        CheckConstraint(
            "lexical_backend IN ('bm25', 'tsvector')", name="workspace_info_lexical_backend_check"
        ),
        comment="Facts about the workspace; the embedding model and dimension change only by a re-embed",
    )
    Table(
        "full_docs",
        md,
        Column(
            "id",
            Text,
            primary_key=True,
            comment="Document id: doc- plus the MD5 of the cleaned content, or the caller's id",
        ),
        Column("content", Text, nullable=False, comment="Full cleaned document text"),
        Column(
            "file_path",
            Text,
            nullable=False,
            server_default=UNKNOWN_SOURCE,
            comment="Source file path or label",
        ),
        _ts("created_at", "When the document was first stored"),
        _ts("updated_at", "When the document row last changed"),
        comment="Original documents, one row each",
    )
    Table(
        "doc_status",
        md,
        Column("id", Text, primary_key=True, comment="Document id (full_docs.id)"),
        Column("status", Text, nullable=False, comment="pending, processing, processed or failed"),
        Column(
            "content_summary",
            Text,
            nullable=False,
            server_default="",
            comment="First characters of the document",
        ),
        Column("content_length", Integer, nullable=False, comment="Length of the document in characters"),
        Column("chunks_count", Integer, nullable=True, comment="Number of chunks once chunked"),
        _text_array("chunks_list", "Ids of the document's chunks"),
        Column(
            "file_path",
            Text,
            nullable=False,
            server_default=UNKNOWN_SOURCE,
            comment="Source file path or label",
        ),
        Column("track_id", Text, nullable=True, comment="Id of the insert call that enqueued the document"),
        Column("error_msg", Text, nullable=True, comment="Why processing failed, when status is failed"),
        Column(
            "metadata",
            JSONB,
            nullable=False,
            server_default=text("'{}'::jsonb"),
            comment="Processing details (timings, counts)",
        ),
        _ts("created_at", "When the document was enqueued"),
        _ts("updated_at", "When the status last changed"),
        CheckConstraint(
            "status IN ('pending', 'processing', 'processed', 'failed')", name="doc_status_status_check"
        ),
        Index("doc_status_status_idx", "status"),
        Index("doc_status_track_id_idx", "track_id"),
        comment="Processing state of every document",
    )
    Table(
        "text_chunks",
        md,
        Column("id", Text, primary_key=True, comment="Chunk id: chunk- plus the MD5 of its content"),
        Column(
            "doc_id",
            Text,
            ForeignKey("full_docs.id", ondelete="CASCADE"),
            nullable=False,
            comment="Document the chunk belongs to",
        ),
        Column("chunk_order_index", Integer, nullable=False, comment="Position of the chunk in its document"),
        Column("tokens", Integer, nullable=False, comment="Number of tokens in the chunk"),
        Column("content", Text, nullable=False, comment="Chunk text"),
        Column(
            "file_path",
            Text,
            nullable=False,
            server_default=UNKNOWN_SOURCE,
            comment="Source file path of the document",
        ),
        _ts("created_at", "When the chunk was stored"),
        _ts("updated_at", "When the chunk last changed"),
        *_lexical_columns("text_chunks", lexical),
        Index("text_chunks_doc_id_idx", "doc_id"),
        *_lexical_indexes("text_chunks", lexical),
        comment="Token-sized slices of documents",
    )
    _chunk_terms(md, lexical)
    _corpus_counts(md, lexical)
    Table(
        "chunk_vectors",
        md,
        Column(
            "chunk_id",
            Text,
            ForeignKey("text_chunks.id", ondelete="CASCADE"),
            primary_key=True,
            comment="Chunk id (text_chunks.id)",
        ),
        Column("embedding", VECTOR(embedding_dim), nullable=False, comment="Embedding of the chunk content"),
        _hnsw("chunk_vectors", embedding_dim),
        comment="Chunk embeddings (HNSW, cosine)",
    )
    Table(
        "entities",
        md,
        Column("name", Text, primary_key=True, comment="Entity name, unique in the workspace"),
        Column(
            "id",
            BigInteger,
            Identity(always=False),
            nullable=False,
            unique=True,
            comment="Numeric id; also the entry id of the AGE vertex",
        ),
        Column(
            "entity_type",
            Text,
            nullable=False,
            server_default="UNKNOWN",
            comment="Entity type (majority of extracted types)",
        ),
        Column(
            "description", Text, nullable=False, server_default="", comment="Merged or summarised description"
        ),
        *_merged_columns("entity"),
        Column(
            "degree",
            Integer,
            nullable=False,
            server_default=text("0"),
            comment="Number of relations touching the entity, kept by the relations triggers",
        ),
        Index("entities_name_degree", "name", postgresql_include=["degree"]),
        Index("entities_degree", "degree", postgresql_include=["name"]),
        *_lexical_indexes("entities", lexical),
        comment="Knowledge graph vertices",
    )
    Table(
        "entity_vectors",
        md,
        Column(
            "name",
            Text,
            ForeignKey("entities.name", ondelete="CASCADE"),
            primary_key=True,
            comment="Entity name (entities.name)",
        ),
        Column("content", Text, nullable=False, comment="Text that was embedded: name and description"),
        Column("embedding", VECTOR(embedding_dim), nullable=False, comment="Embedding of content"),
        _ts("updated_at", "When the vector was computed"),
        _hnsw("entity_vectors", embedding_dim),
        comment="Entity embeddings (HNSW, cosine)",
    )
    Table(
        "relations",
        md,
        Column(
            "src",
            Text,
            ForeignKey("entities.name", ondelete="CASCADE"),
            nullable=False,
            comment="First endpoint (the smaller name in byte order)",
        ),
        Column(
            "tgt",
            Text,
            ForeignKey("entities.name", ondelete="CASCADE"),
            nullable=False,
            comment="Second endpoint (the larger name in byte order)",
        ),
        Column(
            "id",
            BigInteger,
            Identity(always=False),
            nullable=False,
            unique=True,
            comment="Numeric id; also the entry id of the AGE edge",
        ),
        Column(
            "keywords", Text, nullable=False, server_default="", comment="Comma-separated relation keywords"
        ),
        Column(
            "description", Text, nullable=False, server_default="", comment="Merged or summarised description"
        ),
        Column(
            "weight", Float, nullable=False, server_default=text("1.0"), comment="Sum of extracted strengths"
        ),
        *_merged_columns("relation"),
        PrimaryKeyConstraint("src", "tgt", name="relations_pkey"),
        CheckConstraint('src < tgt COLLATE "C"', name="relations_canonical_order"),
        Index("relations_src_edges", "src", postgresql_include=["tgt", "weight", "context_tokens"]),
        Index("relations_tgt_edges", "tgt", postgresql_include=["src", "weight", "context_tokens"]),
        comment="Knowledge graph edges; undirected, stored with src < tgt",
    )
    Table(
        "relation_vectors",
        md,
        Column("src", Text, nullable=False, comment="First endpoint (relations.src)"),
        Column("tgt", Text, nullable=False, comment="Second endpoint (relations.tgt)"),
        Column(
            "content",
            Text,
            nullable=False,
            comment="Text that was embedded: keywords, endpoints, description",
        ),
        Column("embedding", VECTOR(embedding_dim), nullable=False, comment="Embedding of content"),
        _ts("updated_at", "When the vector was computed"),
        PrimaryKeyConstraint("src", "tgt", name="relation_vectors_pkey"),
        ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            ondelete="CASCADE",
            name="relation_vectors_relation_fkey",
        ),
        _hnsw("relation_vectors", embedding_dim),
        comment="Relation embeddings (HNSW, cosine)",
    )
    Table(
        "doc_entities",
        md,
        Column(
            "doc_id",
            Text,
            ForeignKey("full_docs.id", ondelete="CASCADE"),
            nullable=False,
            comment="Document id",
        ),
        Column(
            "entity_name",
            Text,
            ForeignKey("entities.name", ondelete="CASCADE"),
            nullable=False,
            comment="Entity extracted from the document",
        ),
        PrimaryKeyConstraint("doc_id", "entity_name", name="doc_entities_pkey"),
        Index("doc_entities_entity_idx", "entity_name"),
        comment="Which entities each document contributed to",
    )
    Table(
        "doc_relations",
        md,
        Column(
            "doc_id",
            Text,
            ForeignKey("full_docs.id", ondelete="CASCADE"),
            nullable=False,
            comment="Document id",
        ),
        Column("src", Text, nullable=False, comment="Relation first endpoint"),
        Column("tgt", Text, nullable=False, comment="Relation second endpoint"),
        PrimaryKeyConstraint("doc_id", "src", "tgt", name="doc_relations_pkey"),
        ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            ondelete="CASCADE",
            name="doc_relations_relation_fkey",
        ),
        Index("doc_relations_pair_idx", "src", "tgt"),
        comment="Which relations each document contributed to",
    )
    Table(
        "llm_cache",
        md,
        Column("id", Text, primary_key=True, comment="Hash of cache type, mode and prompt"),
        Column("cache_type", Text, nullable=False, comment="extract, summary, keywords or query"),
        Column(
            "mode",
            Text,
            nullable=False,
            server_default="default",
            comment="Query mode, or default for indexing",
        ),
        Column("chunk_id", Text, nullable=True, comment="Chunk whose extraction produced this entry"),
        Column("prompt", Text, nullable=False, comment="The prompt (or its key) sent to the model"),
        Column("response", Text, nullable=False, comment="The model's answer"),
        _ts("created_at", "When the answer was cached"),
        Index("llm_cache_chunk_id_idx", "chunk_id"),
        comment="Cache of LLM answers, keyed by prompt hash",
    )
    Table(
        "entity_fragments",
        md,
        Column(
            "entity_name",
            Text,
            ForeignKey("entities.name", ondelete="CASCADE"),
            nullable=False,
            comment="Entity the chunk describes (entities.name)",
        ),
        Column("chunk_id", Text, nullable=False, comment="Chunk the description was extracted from"),
        Column("seq", Integer, nullable=False, comment="Number of the mention within the chunk, from 0"),
        Column(
            "doc_id",
            Text,
            ForeignKey("full_docs.id", ondelete="CASCADE"),
            nullable=False,
            comment="Document of the chunk",
        ),
        Column(
            "entity_type",
            Text,
            nullable=False,
            comment="Type the chunk gives the entity (UNKNOWN: only named by a relation)",
        ),
        Column("description", Text, nullable=False, comment="What the chunk says about the entity"),
        Column("file_path", Text, nullable=False, comment="Source file path of the document"),
        _ts("created_at", "When the fragment was merged"),
        PrimaryKeyConstraint("entity_name", "chunk_id", "seq", name="entity_fragments_pkey"),
        Index("entity_fragments_doc_idx", "doc_id"),
        comment="What each chunk contributed to each entity; entities are rebuilt from these",
    )
    Table(
        "relation_fragments",
        md,
        Column("src", Text, nullable=False, comment="First endpoint (relations.src)"),
        Column("tgt", Text, nullable=False, comment="Second endpoint (relations.tgt)"),
        Column("chunk_id", Text, nullable=False, comment="Chunk the relation was extracted from"),
        Column("seq", Integer, nullable=False, comment="Number of the mention within the chunk, from 0"),
        Column(
            "doc_id",
            Text,
            ForeignKey("full_docs.id", ondelete="CASCADE"),
            nullable=False,
            comment="Document of the chunk",
        ),
        Column("keywords", Text, nullable=False, comment="Comma-separated keywords the chunk gives"),
        Column("description", Text, nullable=False, comment="What the chunk says about the relation"),
        Column("weight", Float, nullable=False, comment="Strength the chunk gives the relation"),
        Column("file_path", Text, nullable=False, comment="Source file path of the document"),
        _ts("created_at", "When the fragment was merged"),
        PrimaryKeyConstraint("src", "tgt", "chunk_id", "seq", name="relation_fragments_pkey"),
        ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            ondelete="CASCADE",
            name="relation_fragments_relation_fkey",
        ),
        Index("relation_fragments_doc_idx", "doc_id"),
        comment="What each chunk contributed to each relation; relations are rebuilt from these",
    )
    Table(
        "usage",
        md,
        Column(
            "id",
            BigInteger,
            Identity(always=False),
            primary_key=True,
            comment="Number of the record, in the order the records were written",
        ),
        _ts("created_at", "When the call ended"),
        Column(
            "kind",
            Text,
            nullable=False,
            comment="extract, glean, summary, keywords, answer (LLM calls) or embed (embedding calls)",
        ),
        Column("model", Text, nullable=False, comment="Model that answered (the provider's name when given)"),
        Column(
            "doc_id",
            Text,
            nullable=True,
            comment="Document whose indexing made the call (NULL: a query, a deletion or an edit)",
        ),
        Column("query_id", Text, nullable=True, comment="Query that made the call (one id per question)"),
        Column(
            "cache_hit",
            Boolean,
            nullable=False,
            comment="Answered from llm_cache: no model was called, no tokens were used",
        ),
        Column("input_tokens", Integer, nullable=False, comment="Tokens sent to the model"),
        Column(
            "output_tokens", Integer, nullable=False, comment="Tokens the model answered (0 for embeddings)"
        ),
        Column(
            "cached_input_tokens",
            Integer,
            nullable=False,
            server_default=text("0"),
            comment="Of input_tokens, those the provider read from its prompt prefix cache (when it says)",
        ),
        Column(
            "counted_by",
            Text,
            nullable=False,
            comment="provider (its usage report), tokenizer (counted with the workspace tokenizer) or none (a cache hit)",
        ),
        Column(
            "duration_ms",
            Float,
            nullable=False,
            comment="Milliseconds the call took (a cache look-up for a hit)",
        ),
        CheckConstraint(
            "kind IN ('extract', 'glean', 'summary', 'keywords', 'answer', 'embed')", name="usage_kind_check"
        ),
        CheckConstraint("counted_by IN ('provider', 'tokenizer', 'none')", name="usage_counted_by_check"),
        Index("usage_created_at_idx", "created_at"),
        Index("usage_doc_id_idx", "doc_id"),
        comment="Every LLM and embedding call: its kind, model, tokens and duration (sum by document, day or kind)",
    )
    Table(
        "reembed_state",
        md,
        Column(
            "id",
            Integer,
            primary_key=True,
            server_default=text("1"),
            comment="Always 1: at most one re-embed per workspace",
        ),
        Column("embedding_model", Text, nullable=False, comment="Model the vectors are re-embedded with"),
        Column("embedding_dim", Integer, nullable=False, comment="Dimension of that model's vectors"),
        _ts("started_at", "When the re-embed began"),
        CheckConstraint("id = 1", name="reembed_state_single_row"),
        comment="The re-embed in progress, if any (its vectors are staged in the *_vectors_next tables)",
    )
    return md
