"""Workspace tables: documents, chunks, status, cache, entities, relations, vectors

Revision ID: 0001
Revises:
Create Date: 2026-11-21 17:06:23.062864
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import VECTOR
from sqlalchemy.dialects import postgresql

from lightrag_pg.db.identifiers import relation_of
from lightrag_pg.db.migrate import migration_queries, run, running_target
from lightrag_pg.db.schema import hnsw_expression
from lightrag_pg.db.sqlfile import render

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQL = migration_queries(__file__)


def create_hnsw(table: str, embedding_dim: int) -> None:
    """The cosine HNSW index of a vector table: on the column up to 2,000 dimensions, on
    its halfvec cast above (pgvector indexes halfvec up to 4,000)."""
    if hnsw_expression(embedding_dim) is None:
        op.create_index(
            f"{table}_embedding_hnsw",
            table,
            ["embedding"],
            unique=False,
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"embedding": "vector_cosine_ops"},
        )
        return
    index, relation = relation_of(f"{table}_embedding_hnsw"), relation_of(table)
    assert index is not None and relation is not None
    run(op.get_bind(), render(SQL["halfvec_hnsw"], index=index, table=relation, dim=embedding_dim))


def upgrade() -> None:
    target = running_target()
    op.create_table(
        "doc_status",
        sa.Column("id", sa.Text(), nullable=False, comment="Document id (full_docs.id)"),
        sa.Column("status", sa.Text(), nullable=False, comment="pending, processing, processed or failed"),
        sa.Column(
            "content_summary",
            sa.Text(),
            server_default="",
            nullable=False,
            comment="First characters of the document",
        ),
        sa.Column(
            "content_length", sa.Integer(), nullable=False, comment="Length of the document in characters"
        ),
        sa.Column("chunks_count", sa.Integer(), nullable=True, comment="Number of chunks once chunked"),
        sa.Column(
            "chunks_list",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="Ids of the document's chunks",
        ),
        sa.Column(
            "file_path",
            sa.Text(),
            server_default="unknown_source",
            nullable=False,
            comment="Source file path or label",
        ),
        sa.Column(
            "track_id", sa.Text(), nullable=True, comment="Id of the insert call that enqueued the document"
        ),
        sa.Column(
            "error_msg", sa.Text(), nullable=True, comment="Why processing failed, when status is failed"
        ),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
            comment="Processing details (timings, counts)",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the document was enqueued",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the status last changed",
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'processing', 'processed', 'failed')", name="doc_status_status_check"
        ),
        sa.PrimaryKeyConstraint("id"),
        comment="Processing state of every document",
    )
    op.create_index("doc_status_status_idx", "doc_status", ["status"], unique=False)
    op.create_index("doc_status_track_id_idx", "doc_status", ["track_id"], unique=False)
    op.create_table(
        "entities",
        sa.Column("name", sa.Text(), nullable=False, comment="Entity name, unique in the workspace"),
        sa.Column(
            "id",
            sa.BigInteger(),
            sa.Identity(always=False),
            nullable=False,
            comment="Numeric id; also the entry id of the AGE vertex",
        ),
        sa.Column(
            "entity_type",
            sa.Text(),
            server_default="UNKNOWN",
            nullable=False,
            comment="Entity type (majority of extracted types)",
        ),
        sa.Column(
            "description",
            sa.Text(),
            server_default="",
            nullable=False,
            comment="Merged or summarised description",
        ),
        sa.Column(
            "source_ids",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="Ids of the chunks the entity was extracted from (capped)",
        ),
        sa.Column(
            "file_paths",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="Files the entity was extracted from (capped)",
        ),
        sa.Column(
            "version",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="Incremented on every merge; used to detect concurrent merges",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the entity was first merged",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the entity last changed",
        ),
        sa.PrimaryKeyConstraint("name"),
        sa.UniqueConstraint("id"),
        comment="Knowledge graph vertices",
    )
    op.create_table(
        "full_docs",
        sa.Column(
            "id",
            sa.Text(),
            nullable=False,
            comment="Document id: doc- plus the MD5 of the cleaned content, or the caller's id",
        ),
        sa.Column("content", sa.Text(), nullable=False, comment="Full cleaned document text"),
        sa.Column(
            "file_path",
            sa.Text(),
            server_default="unknown_source",
            nullable=False,
            comment="Source file path or label",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the document was first stored",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the document row last changed",
        ),
        sa.PrimaryKeyConstraint("id"),
        comment="Original documents, one row each",
    )
    op.create_table(
        "llm_cache",
        sa.Column("id", sa.Text(), nullable=False, comment="Hash of cache type, mode and prompt"),
        sa.Column("cache_type", sa.Text(), nullable=False, comment="extract, summary, keywords or query"),
        sa.Column(
            "mode",
            sa.Text(),
            server_default="default",
            nullable=False,
            comment="Query mode, or default for indexing",
        ),
        sa.Column("chunk_id", sa.Text(), nullable=True, comment="Chunk whose extraction produced this entry"),
        sa.Column("prompt", sa.Text(), nullable=False, comment="The prompt (or its key) sent to the model"),
        sa.Column("response", sa.Text(), nullable=False, comment="The model's answer"),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the answer was cached",
        ),
        sa.PrimaryKeyConstraint("id"),
        comment="Cache of LLM answers, keyed by prompt hash",
    )
    op.create_index("llm_cache_chunk_id_idx", "llm_cache", ["chunk_id"], unique=False)
    op.create_table(
        "workspace_info",
        sa.Column(
            "id",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="Always 1: one row per workspace",
        ),
        sa.Column("embedding_dim", sa.Integer(), nullable=False, comment="Dimension of every vector column"),
        sa.Column(
            "embedding_model", sa.Text(), nullable=True, comment="Name of the embedding model first used"
        ),
        sa.Column(
            "graph_enabled", sa.Boolean(), nullable=False, comment="Whether the AGE graph mirror exists"
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the workspace was created",
        ),
        sa.CheckConstraint("id = 1", name="workspace_info_single_row"),
        sa.PrimaryKeyConstraint("id"),
        comment="Facts fixed when the workspace was created",
    )
    op.create_table(
        "doc_entities",
        sa.Column("doc_id", sa.Text(), nullable=False, comment="Document id"),
        sa.Column("entity_name", sa.Text(), nullable=False, comment="Entity extracted from the document"),
        sa.ForeignKeyConstraint(["doc_id"], ["full_docs.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_name"], ["entities.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("doc_id", "entity_name", name="doc_entities_pkey"),
        comment="Which entities each document contributed to",
    )
    op.create_index("doc_entities_entity_idx", "doc_entities", ["entity_name"], unique=False)
    op.create_table(
        "entity_vectors",
        sa.Column("name", sa.Text(), nullable=False, comment="Entity name (entities.name)"),
        sa.Column(
            "content", sa.Text(), nullable=False, comment="Text that was embedded: name and description"
        ),
        sa.Column(
            "embedding", VECTOR(dim=target.embedding_dim), nullable=False, comment="Embedding of content"
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the vector was computed",
        ),
        sa.ForeignKeyConstraint(["name"], ["entities.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("name"),
        comment="Entity embeddings (HNSW, cosine)",
    )
    create_hnsw("entity_vectors", target.embedding_dim)
    op.create_table(
        "relations",
        sa.Column(
            "src", sa.Text(), nullable=False, comment="First endpoint (the smaller name in byte order)"
        ),
        sa.Column(
            "tgt", sa.Text(), nullable=False, comment="Second endpoint (the larger name in byte order)"
        ),
        sa.Column(
            "id",
            sa.BigInteger(),
            sa.Identity(always=False),
            nullable=False,
            comment="Numeric id; also the entry id of the AGE edge",
        ),
        sa.Column(
            "keywords",
            sa.Text(),
            server_default="",
            nullable=False,
            comment="Comma-separated relation keywords",
        ),
        sa.Column(
            "description",
            sa.Text(),
            server_default="",
            nullable=False,
            comment="Merged or summarised description",
        ),
        sa.Column(
            "weight",
            sa.Float(),
            server_default=sa.text("1.0"),
            nullable=False,
            comment="Sum of extracted strengths",
        ),
        sa.Column(
            "source_ids",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="Ids of the chunks the relation was extracted from (capped)",
        ),
        sa.Column(
            "file_paths",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="Files the relation was extracted from (capped)",
        ),
        sa.Column(
            "version",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="Incremented on every merge; used to detect concurrent merges",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the relation was first merged",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the relation last changed",
        ),
        sa.CheckConstraint('src < tgt COLLATE "C"', name="relations_canonical_order"),
        sa.ForeignKeyConstraint(["src"], ["entities.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tgt"], ["entities.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("src", "tgt", name="relations_pkey"),
        sa.UniqueConstraint("id"),
        comment="Knowledge graph edges; undirected, stored with src < tgt",
    )
    op.create_index("relations_tgt_idx", "relations", ["tgt"], unique=False)
    op.create_table(
        "text_chunks",
        sa.Column("id", sa.Text(), nullable=False, comment="Chunk id: chunk- plus the MD5 of its content"),
        sa.Column("doc_id", sa.Text(), nullable=False, comment="Document the chunk belongs to"),
        sa.Column(
            "chunk_order_index", sa.Integer(), nullable=False, comment="Position of the chunk in its document"
        ),
        sa.Column("tokens", sa.Integer(), nullable=False, comment="Number of tokens in the chunk"),
        sa.Column("content", sa.Text(), nullable=False, comment="Chunk text"),
        sa.Column(
            "file_path",
            sa.Text(),
            server_default="unknown_source",
            nullable=False,
            comment="Source file path of the document",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the chunk was stored",
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the chunk last changed",
        ),
        sa.ForeignKeyConstraint(["doc_id"], ["full_docs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        comment="Token-sized slices of documents",
    )
    op.create_index("text_chunks_doc_id_idx", "text_chunks", ["doc_id"], unique=False)
    op.create_table(
        "chunk_vectors",
        sa.Column("chunk_id", sa.Text(), nullable=False, comment="Chunk id (text_chunks.id)"),
        sa.Column(
            "embedding",
            VECTOR(dim=target.embedding_dim),
            nullable=False,
            comment="Embedding of the chunk content",
        ),
        sa.ForeignKeyConstraint(["chunk_id"], ["text_chunks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chunk_id"),
        comment="Chunk embeddings (HNSW, cosine)",
    )
    create_hnsw("chunk_vectors", target.embedding_dim)
    op.create_table(
        "doc_relations",
        sa.Column("doc_id", sa.Text(), nullable=False, comment="Document id"),
        sa.Column("src", sa.Text(), nullable=False, comment="Relation first endpoint"),
        sa.Column("tgt", sa.Text(), nullable=False, comment="Relation second endpoint"),
        sa.ForeignKeyConstraint(["doc_id"], ["full_docs.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            name="doc_relations_relation_fkey",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("doc_id", "src", "tgt", name="doc_relations_pkey"),
        comment="Which relations each document contributed to",
    )
    op.create_index("doc_relations_pair_idx", "doc_relations", ["src", "tgt"], unique=False)
    op.create_table(
        "relation_vectors",
        sa.Column("src", sa.Text(), nullable=False, comment="First endpoint (relations.src)"),
        sa.Column("tgt", sa.Text(), nullable=False, comment="Second endpoint (relations.tgt)"),
        sa.Column(
            "content",
            sa.Text(),
            nullable=False,
            comment="Text that was embedded: keywords, endpoints, description",
        ),
        sa.Column(
            "embedding", VECTOR(dim=target.embedding_dim), nullable=False, comment="Embedding of content"
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
            comment="When the vector was computed",
        ),
        sa.ForeignKeyConstraint(
            ["src", "tgt"],
            ["relations.src", "relations.tgt"],
            name="relation_vectors_relation_fkey",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("src", "tgt", name="relation_vectors_pkey"),
        comment="Relation embeddings (HNSW, cosine)",
    )
    create_hnsw("relation_vectors", target.embedding_dim)
    run(op.get_bind(), SQL["record_workspace"], target.embedding_dim, target.embedding_model)


def downgrade() -> None:
    op.drop_index(
        "relation_vectors_embedding_hnsw",
        table_name="relation_vectors",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_table("relation_vectors")
    op.drop_index("doc_relations_pair_idx", table_name="doc_relations")
    op.drop_table("doc_relations")
    op.drop_index(
        "chunk_vectors_embedding_hnsw",
        table_name="chunk_vectors",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_table("chunk_vectors")
    op.drop_index("text_chunks_doc_id_idx", table_name="text_chunks")
    op.drop_table("text_chunks")
    op.drop_index("relations_tgt_idx", table_name="relations")
    op.drop_table("relations")
    op.drop_index(
        "entity_vectors_embedding_hnsw",
        table_name="entity_vectors",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_table("entity_vectors")
    op.drop_index("doc_entities_entity_idx", table_name="doc_entities")
    op.drop_table("doc_entities")
    op.drop_table("workspace_info")
    op.drop_index("llm_cache_chunk_id_idx", table_name="llm_cache")
    op.drop_table("llm_cache")
    op.drop_table("full_docs")
    op.drop_table("entities")
    op.drop_index("doc_status_track_id_idx", table_name="doc_status")
    op.drop_index("doc_status_status_idx", table_name="doc_status")
    op.drop_table("doc_status")
