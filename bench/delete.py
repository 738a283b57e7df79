"""Delete throughput: build a workspace from the generated corpus, then delete 1 and 20 documents.

Extraction and summaries use the instant scripted LLM of :mod:`bench.corpus`
and hashed embeddings, so the figures are the cost of lightrag_pg and
PostgreSQL. Statements are counted on the client, as in :mod:`bench.ingest`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import database, table_count, workspace_arguments, workspace_name
from bench.corpus import CorpusLLM, documents, vocabulary
from lightrag_pg import LightRAG
from lightrag_pg.testing import StatementCounter, hashed_embedding_func


async def timed_delete(rag: LightRAG, ids: list[str], llm: CorpusLLM) -> None:
    """Delete ``ids`` and print seconds, statements, LLM calls and what was rebuilt."""
    calls = llm.calls
    with StatementCounter() as counter:
        started = time.perf_counter()
        result = await rag.adelete_by_doc_id(ids)
        seconds = time.perf_counter() - started
    print(
        f"delete {len(ids):>3} docs: {seconds:6.2f} s, {counter.statements} statements, "
        f"{llm.calls - calls} LLM calls, rounds {result.rounds}; entities rebuilt "
        f"{result.entities_rebuilt} deleted {result.entities_deleted}; relations rebuilt "
        f"{result.relations_rebuilt} deleted {result.relations_deleted}"
    )


async def run(args: argparse.Namespace, dsn: str) -> None:
    """Build the workspace, time the deletes, drop the workspace."""
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    ids = [f"doc-{i:04d}" for i in range(len(texts))]
    llm = CorpusLLM(vocab)
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("bench_delete"),
        llm_model_func=llm,
        embedding_func=hashed_embedding_func(64),
    )
    await rag.initialize()
    try:
        started = time.perf_counter()
        await rag.ainsert(texts, ids=ids)
        print(
            f"built {args.docs} docs x ~{args.words} words in {time.perf_counter() - started:.1f} s: "
            f"{await table_count(rag, 'entities')} entities, {await table_count(rag, 'relations')} "
            f"relations, {await table_count(rag, 'entity_fragments')} entity fragments"
        )
        await timed_delete(rag, ids[:1], llm)
        await timed_delete(rag, ids[1:21], llm)
    finally:
        await rag.drop_workspace()


def main() -> None:
    parser = workspace_arguments(__doc__.split("\n")[0])
    args = parser.parse_args()
    with database(args.dsn) as dsn:
        asyncio.run(run(args, dsn))


if __name__ == "__main__":
    main()
