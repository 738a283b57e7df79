"""Delete throughput: build a workspace from the generated corpus, then delete 1 and 20 documents.

Extraction and summaries use the instant scripted LLM of :mod:`bench.corpus`
and hashed embeddings, so the figures are the cost of lightrag_pg and
PostgreSQL. Statements are counted on the client, as in :mod:`bench.ingest`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import generated_workspace, run_with_database, table_count, workspace_arguments
from bench.corpus import CorpusLLM
from lightrag_pg import LightRAG
from lightrag_pg.testing import StatementCounter


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
    async with generated_workspace(args, dsn, "bench_delete") as (rag, llm, seconds):
        print(
            f"built {args.docs} docs x ~{args.words} words in {seconds:.1f} s: "
            f"{await table_count(rag, 'entities')} entities, {await table_count(rag, 'relations')} "
            f"relations, {await table_count(rag, 'entity_fragments')} entity fragments"
        )
        ids = [f"doc-{i:04d}" for i in range(args.docs)]
        await timed_delete(rag, ids[:1], llm)
        await timed_delete(rag, ids[1:21], llm)


def main() -> None:
    run_with_database(run, workspace_arguments(__doc__.split("\n")[0]).parse_args())


if __name__ == "__main__":
    main()
