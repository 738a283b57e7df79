"""Helpers of the LightRAG import and export tests: counting models, table snapshots, sources."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import numpy as np

from bench.lightrag_shapes import Corpus, write_postgres
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.testing import hashed_vectors, scripted_llm

TABLES: dict[str, str] = {
    "full_docs": "SELECT id, content, file_path FROM full_docs",
    "doc_status": "SELECT id, status, chunks_count, chunks_list, file_path, track_id, error_msg "
    "FROM doc_status",
    "text_chunks": "SELECT id, doc_id, chunk_order_index, tokens, content, file_path FROM text_chunks",
    "chunk_vectors": "SELECT chunk_id, embedding::text FROM chunk_vectors",
    "entities": "SELECT name, entity_type, description, source_ids, file_paths, context_tokens, degree "
    "FROM entities",
    "entity_vectors": "SELECT name, content, embedding::text FROM entity_vectors",
    "relations": "SELECT src, tgt, keywords, description, weight, source_ids, file_paths, context_tokens "
    "FROM relations",
    "relation_vectors": "SELECT src, tgt, content, embedding::text FROM relation_vectors",
    "entity_fragments": "SELECT entity_name, chunk_id, seq, doc_id, entity_type, description, file_path "
    "FROM entity_fragments",
    "relation_fragments": "SELECT src, tgt, chunk_id, seq, doc_id, keywords, description, weight, file_path "
    "FROM relation_fragments",
    "doc_entities": "SELECT doc_id, entity_name FROM doc_entities",
    "doc_relations": "SELECT doc_id, src, tgt FROM doc_relations",
    "llm_cache": "SELECT id, cache_type, mode, chunk_id, response FROM llm_cache",
}


async def snapshot(
    dsn: str, workspace: str, tables: dict[str, str] | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the workspace's tables (no timestamps), sorted, by table."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'SET search_path = "{workspace}", public')
        out = {}
        for name, sql in (tables or TABLES).items():
            rows = await conn.fetch(sql)
            out[name] = sorted(tuple(_plain(v) for v in r.values()) for r in rows)
        return out
    finally:
        await conn.close()


def _plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class Counting:
    """An LLM and an embedding function that count their calls."""

    def __init__(self, dim: int = 64, model: str | None = None, llm: Any = scripted_llm) -> None:
        self.llm_calls = 0
        self.embed_calls = 0
        self._llm = llm

        async def embed(texts: list[str]) -> np.ndarray:
            self.embed_calls += 1
            return hashed_vectors(texts, dim)

        self.embedding = EmbeddingFunc(embedding_dim=dim, func=embed, model_name=model or f"hashed-bow-{dim}")

    async def __call__(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        self.llm_calls += 1
        return await self._llm(prompt, system_prompt=system_prompt, **kwargs)


def database_dsn(dsn: str, name: str) -> str:
    """``dsn`` pointed at database ``name`` of the same server."""
    return urlunsplit(urlsplit(dsn)._replace(path=f"/{name}"))


async def new_database(dsn: str) -> str:
    """A new database of the test server (for upstream's tables); its name."""
    name = f"upstream_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()
    return name


async def drop_database(dsn: str, name: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await conn.close()


async def postgres_source(dsn: str, corpus: Corpus, workspace: str, graph: str) -> tuple[str, str]:
    """A new database holding ``corpus`` as upstream's PostgreSQL storages: its DSN and name."""
    name = await new_database(dsn)
    source = database_dsn(dsn, name)
    conn = await asyncpg.connect(source)
    try:
        await write_postgres(corpus, conn, workspace, graph=graph)
    finally:
        await conn.close()
    return source, name
