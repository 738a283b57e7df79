"""Statements an insert sends: the cache traffic of a document is batched, so it does not
grow with the document's chunks, and the whole insert stays within a bound per chunk, also
on the documents of ``bench/ingest.py`` (about two chunks each, so the statements sent once
per document weigh most)."""

from __future__ import annotations

import random

import asyncpg
import pytest

from bench.corpus import CorpusLLM, documents, vocabulary
from lightrag_pg import LightRAG
from lightrag_pg.testing import KNOWN, StatementCounter, hashed_embedding_func, scripted_llm

CACHE_STATEMENTS = ("Cached answer", "Store an answer")
PER_CHUNK_BOUND = 12


def document(rng: random.Random, sentences: int) -> str:
    names = sorted(KNOWN)
    verbs = ["met", "works with", "visited", "wrote to", "argued with"]
    return " ".join(
        f"{rng.choice(names)} {rng.choice(verbs)} {rng.choice(names)} near {rng.choice(names)} "
        f"on day {rng.randint(1, 999)}."
        for _ in range(sentences)
    )


class SQLCounter(StatementCounter):
    """A :class:`StatementCounter` that also counts the cache statements by their SQL."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = 0

    def _wrap(self, name, method):  # type: ignore[no-untyped-def]
        counted = super()._wrap(name, method)

        async def also_cache(conn: asyncpg.Connection, *args, **kwargs):  # type: ignore[no-untyped-def]
            if args and isinstance(args[0], str) and any(s in args[0] for s in CACHE_STATEMENTS):
                self.cache += 1
            return await counted(conn, *args, **kwargs)

        return also_cache


@pytest.mark.parametrize("sentences", [4, 24])
async def test_insert_statements_per_chunk_and_batched_cache(
    dsn: str, workspace_name: str, conn: asyncpg.Connection, sentences: int
) -> None:
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(),
        chunk_token_size=60,
        chunk_overlap_token_size=10,
    )
    await rag.initialize()
    rng = random.Random(sentences)
    texts = [document(rng, sentences) for _ in range(4)]
    try:
        with SQLCounter() as counter:
            result = await rag.ainsert(texts)
        assert result.progress.docs_done == 4
        chunks = await conn.fetchval(f"SELECT count(*) FROM {workspace_name}.text_chunks")
        assert chunks >= 4 * (1 if sentences == 4 else 6)
        # per document: extraction look-ups (first answers, then gleaning, a batch
        # each), summary look-ups of the merge rounds, and one write; one call each
        # before, twice per LLM call
        assert counter.cache <= 4 * 6, (counter.cache, chunks)
        if sentences > 4:
            assert counter.total / chunks <= PER_CHUNK_BOUND, (counter.by_method, chunks)
    finally:
        await rag.finalize()


@pytest.mark.slow
async def test_bench_documents_stay_within_the_bound_per_chunk(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    vocab = vocabulary(seed=0)
    llm = CorpusLLM(vocab)
    rag = LightRAG(
        dsn=dsn, workspace=workspace_name, llm_model_func=llm, embedding_func=hashed_embedding_func()
    )
    await rag.initialize()
    texts = documents(12, 1500, 0, vocab)
    try:
        # the second insert merges into rows the first one stored (stored fragments are read)
        for batch in (texts[:6], texts[6:]):
            with StatementCounter() as counter:
                result = await rag.ainsert(batch)
            assert result.progress.docs_done == len(batch)
            chunks = await conn.fetchval(
                f"SELECT count(*) FROM {workspace_name}.text_chunks c "
                f"JOIN {workspace_name}.doc_status s ON s.id = c.doc_id AND s.id = ANY($1::text[])",
                result.new_ids,
            )
            assert chunks <= 3 * len(batch), chunks  # bench-like: a few chunks per document
            assert counter.total / chunks <= PER_CHUNK_BOUND, (counter.by_method, chunks)
    finally:
        await rag.finalize()
