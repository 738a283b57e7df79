"""Re-embedding throughput: build a workspace from the generated corpus, then move it to a new model.

The workspace is indexed with the 64-dimension hashed embedding and re-embedded
with the 96-dimension one (``LightRAG.areembed``). A baseline measured in the
same run puts the figure in proportion: the same texts embedded with the same
function in one call, their vectors written with one ``COPY`` per table into
scratch tables of the new width, and the same HNSW indexes built on them —
the least any re-embed has to do.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import generated_workspace, run_with_database, table_count, workspace_arguments
from lightrag_pg import LightRAG
from lightrag_pg.testing import StatementCounter, hashed_embedding_func, hashed_vectors

OLD_DIM, NEW_DIM = 64, 96
SOURCES = {
    "entities": "SELECT content FROM entity_vectors",
    "relations": "SELECT content FROM relation_vectors",
    "chunks": "SELECT c.content FROM chunk_vectors v JOIN text_chunks c ON c.id = v.chunk_id",
}


async def baseline(rag: LightRAG) -> tuple[float, float, int]:
    """Seconds to embed every vector text, seconds to COPY the vectors and index them, and the count."""
    from pgvector import Vector

    async with rag.pool.acquire() as conn:
        texts = {kind: [r[0] for r in await conn.fetch(sql)] for kind, sql in SOURCES.items()}
        started = time.perf_counter()
        embedded = {kind: hashed_vectors(t, NEW_DIM) for kind, t in texts.items()}
        embed_seconds = time.perf_counter() - started
        started = time.perf_counter()
        try:
            for kind, array in embedded.items():
                await conn.execute(
                    f"CREATE TABLE bench_raw_{kind} (k integer PRIMARY KEY, embedding vector({NEW_DIM}))"
                )
                records = [(i, Vector(v)) for i, v in enumerate(array)]
                await conn.copy_records_to_table(f"bench_raw_{kind}", records=records)
                await conn.execute(
                    f"CREATE INDEX ON bench_raw_{kind} USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = 16, ef_construction = 64)"
                )
            copy_seconds = time.perf_counter() - started
        finally:
            for kind in embedded:
                await conn.execute(f"DROP TABLE IF EXISTS bench_raw_{kind}")
    return embed_seconds, copy_seconds, sum(len(t) for t in texts.values())


async def run(args: argparse.Namespace, dsn: str) -> None:
    """Build the workspace, time the baseline and the re-embed, drop the workspace."""
    async with generated_workspace(args, dsn, "bench_reembed", hashed_embedding_func(OLD_DIM)) as (rag, _, s):
        counts = {
            t: await table_count(rag, t) for t in ("entity_vectors", "relation_vectors", "chunk_vectors")
        }
        print(
            f"built {args.docs} docs x ~{args.words} words in {s:.1f} s: "
            + ", ".join(f"{n} {t}" for t, n in counts.items())
        )
        embed_s, copy_s, n = await baseline(rag)
        print(
            f"baseline: embed {n} texts {embed_s:.2f} s ({n / embed_s:,.0f}/s); COPY + HNSW of "
            f"{NEW_DIM}-dim vectors {copy_s:.2f} s; together {n / (embed_s + copy_s):,.0f} vectors/s"
        )
        with StatementCounter() as counter:
            result = await rag.areembed(hashed_embedding_func(NEW_DIM), batch_size=args.batch_size)
        print(
            f"reembed {OLD_DIM} -> {NEW_DIM} dims, batches of {args.batch_size}: {result.vectors} vectors "
            f"in {result.seconds:.2f} s = {result.vectors / result.seconds:,.0f} vectors/s "
            f"({(embed_s + copy_s) / result.seconds:.0%} of the baseline's rate); swap "
            f"{result.swap_seconds * 1000:.0f} ms; {counter.statements} statements; rounds {result.rounds}"
        )


def main() -> None:
    parser = workspace_arguments(__doc__.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=256, help="texts per re-embed batch")
    run_with_database(run, parser.parse_args())


if __name__ == "__main__":
    main()
