"""Query latency: build a workspace from the generated corpus, then time ``aquery_data`` per mode.

The workspace is built with the instant scripted LLM (which also answers the
keyword prompts), so the latencies are those of lightrag_pg and PostgreSQL.
Every mode first runs a warm-up pass over other generated questions; the timed
pass then asks new questions, so keyword extraction misses the LLM cache as a
new user question would. Baselines measured in the same process: one
``SELECT 1`` round trip and one bare pgvector top-k search on
``entity_vectors``; each mode's median is also given as a multiple of the
bare top-k. CPU time per query is measured on both sides (this process, and
the server backends of the pool when the server runs on this machine), which
stays meaningful on a loaded machine where wall-clock times do not; the load
averages before and after are printed with the table.

Before timing, the tables retrieval reads are vacuumed and analyzed: the
steady state that autovacuum reaches some seconds after a large batch
(visibility map set, so index-only scans skip the heap; planner statistics
current), measured instead of raced. ``--no-vacuum`` measures the state right
after the build.

The long-questions phase then asks mix questions of 1,000 to 100,000 characters (slices
of the corpus, as pasted text would be) beside short ones, alternating lengths round by
round, and prints each length's median with its ratio to the short questions' median in
the same run; a question over ``max_query_chars`` is refused, and the time to refuse it
is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import choose_embedding, database, workspace_name
from bench.corpus import CorpusLLM, documents, questions, vocabulary
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.embedded import DSN_ENV
from lightrag_pg.db.identifiers import quote_ident, schema_of
from lightrag_pg.errors import QueryTooLong
from lightrag_pg.testing import StatementCounter

MODES: tuple[str, ...] = ("local", "global", "hybrid", "mix", "naive")
LEXICAL_MODES: tuple[str, ...] = ("local", "hybrid", "mix", "naive")
BASELINE_ROUNDS = 200
RETRIEVAL_TABLES = (
    "entities",
    "relations",
    "entity_vectors",
    "relation_vectors",
    "text_chunks",
    "chunk_vectors",
)
OPTIONAL_TABLES = ("chunk_terms",)
"""Retrieval tables only some workspaces have (chunk_terms: the tsvector backend)."""
EXISTS = "SELECT to_regclass($1) IS NOT NULL"


@dataclass(frozen=True, slots=True)
class ModeResult:
    """Latencies (ms), statement counts and result sizes of one mode's timed pass."""

    mode: str
    latencies_ms: list[float]
    statements: list[int]
    entities: list[int]
    relations: list[int]
    chunks: list[int]
    client_cpu_ms: float
    server_cpu_ms: float | None


def median(values: Sequence[float]) -> float:
    """The median of ``values``."""
    return float(np.median(values))


def p95(values: Sequence[float]) -> float:
    """The 95th percentile of ``values`` (linear interpolation)."""
    return float(np.percentile(values, 95))


class ServerCPU:
    """CPU time used by the pool's server backends, read from ``/proc`` (None when the
    server is not on this machine or not readable)."""

    def __init__(self, rag: LightRAG) -> None:
        self.rag = rag
        self.pids: list[int] = []

    async def start(self) -> None:
        """Find the backends of the pool (every connection is opened first)."""
        async with self.rag.pool.acquire() as conn:
            self.pids = [
                int(r["pid"])
                for r in await conn.fetch(
                    "SELECT pid FROM pg_stat_activity "
                    "WHERE application_name = 'lightrag_pg' AND datname = current_database()"
                )
            ]

    def total_ms(self) -> float | None:
        """CPU milliseconds used so far by the known backends."""
        ticks = 0
        for pid in self.pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            ticks += int(fields[11]) + int(fields[12])
        return ticks * 1000 / os.sysconf("SC_CLK_TCK") if self.pids else None


async def run_mode(
    rag: LightRAG, mode: str, asked: Sequence[str], server: ServerCPU, *, lexical: bool = True
) -> ModeResult:
    """Ask every question in ``mode`` (with lexical search on or off), timing and counting
    statements one query at a time; the result's mode is suffixed `` no-lex`` when it is off."""
    latencies: list[float] = []
    statements: list[int] = []
    sizes: list[tuple[int, int, int]] = []
    client_started, server_started = time.process_time(), server.total_ms()
    for question in asked:
        with StatementCounter() as counter:
            started = time.perf_counter()
            result = await rag.aquery_data(question, QueryParam(mode=mode, lexical=lexical))  # type: ignore[arg-type]
            latencies.append((time.perf_counter() - started) * 1000)
        statements.append(counter.total)
        data = result.get("data") or {}
        sizes.append(
            (len(data.get("entities", [])), len(data.get("relationships", [])), len(data.get("chunks", [])))
        )
    client_cpu = (time.process_time() - client_started) * 1000 / len(asked)
    server_now = server.total_ms()
    server_cpu = (
        None if server_now is None or server_started is None else (server_now - server_started) / len(asked)
    )
    return ModeResult(
        mode if lexical else f"{mode} no-lex",
        latencies,
        statements,
        [s[0] for s in sizes],
        [s[1] for s in sizes],
        [s[2] for s in sizes],
        client_cpu,
        server_cpu,
    )


async def baselines(rag: LightRAG, asked: Sequence[str]) -> tuple[float, float]:
    """Median ms of ``SELECT 1`` and of a bare top-k search on ``entity_vectors``."""
    assert rag.embedding_func is not None
    vectors = await rag.embedding_func(list(asked))
    top_k = QueryParam().top_k
    select_one: list[float] = []
    search: list[float] = []
    async with rag.pool.acquire() as conn:
        for _ in range(BASELINE_ROUNDS):
            started = time.perf_counter()
            await conn.fetchval("SELECT 1")
            select_one.append((time.perf_counter() - started) * 1000)
        for round_ in range(BASELINE_ROUNDS):
            vector = vectors[round_ % len(vectors)]
            started = time.perf_counter()
            await conn.fetch(
                "SELECT name FROM entity_vectors ORDER BY embedding <=> $1 LIMIT $2", vector, top_k
            )
            search.append((time.perf_counter() - started) * 1000)
    return median(select_one), median(search)


async def build(rag: LightRAG, texts: list[str]) -> float:
    """Ingest ``texts``; return the seconds it took."""
    started = time.perf_counter()
    result = await rag.ainsert(texts)
    if result.progress.docs_failed:
        raise RuntimeError(f"{result.progress.docs_failed} documents failed: {result.progress.failures}")
    return time.perf_counter() - started


async def settle(rag: LightRAG) -> float:
    """VACUUM ANALYZE the tables retrieval reads; return the seconds it took."""
    schema = schema_of(rag.workspace).quoted
    started = time.perf_counter()
    async with rag.pool.acquire() as conn:
        optional = [t for t in OPTIONAL_TABLES if await conn.fetchval(EXISTS, f"{schema}.{t}")]
        tables = ", ".join(f"{schema}.{quote_ident(table)}" for table in (*RETRIEVAL_TABLES, *optional))
        await conn.execute(f"VACUUM (ANALYZE) {tables}")
    return time.perf_counter() - started


def report(results: Sequence[ModeResult], select_one_ms: float, search_ms: float) -> None:
    """Print one line per mode, then the baselines."""
    print(
        f"{'mode':<14}{'median ms':>10}{'p95 ms':>9}{'x top-k':>9}{'SQL/query':>11}"
        f"{'CPU ms here':>13}{'CPU ms server':>15}{'entities':>10}{'relations':>11}{'chunks':>8}"
    )
    for r in results:
        med = median(r.latencies_ms)
        server = "n/a" if r.server_cpu_ms is None else f"{r.server_cpu_ms:.2f}"
        print(
            f"{r.mode:<14}{med:>10.2f}{p95(r.latencies_ms):>9.2f}{med / search_ms:>9.1f}"
            f"{float(np.mean(r.statements)):>11.1f}{r.client_cpu_ms:>13.2f}{server:>15}"
            f"{float(np.mean(r.entities)):>10.1f}{float(np.mean(r.relations)):>11.1f}"
            f"{float(np.mean(r.chunks)):>8.1f}"
        )
    print(f"baseline SELECT 1 round trip:           median {select_one_ms:.3f} ms")
    print(f"baseline entity_vectors top-k search:   median {search_ms:.3f} ms")


LONG_LENGTHS: tuple[int, ...] = (1_000, 5_000, 20_000, 100_000)
"""Characters of the long questions; 0 stands for the short generated questions."""


def pasted(texts: Sequence[str], chars: int, rng: random.Random) -> str:
    """``chars`` characters of the corpus from a random place: a question made of pasted text."""
    whole = "\n\n".join(texts)
    start = rng.randrange(max(len(whole) - chars, 1))
    return whole[start : start + chars]


async def long_questions(
    rag: LightRAG, texts: Sequence[str], short: Sequence[str], rounds: int, seed: int
) -> dict[int, list[float]]:
    """Milliseconds of mix questions per length (0: the short questions), ``rounds`` of each,
    the lengths alternated within every round; each question is new to the keyword cache."""
    rng = random.Random(f"long:{seed}")
    timings: dict[int, list[float]] = {n: [] for n in (0, *LONG_LENGTHS)}
    for round_ in range(rounds):
        for chars in timings:
            question = short[round_ % len(short)] if chars == 0 else pasted(texts, chars, rng)
            started = time.perf_counter()
            await rag.aquery_data(question, QueryParam(mode="mix"))
            timings[chars].append((time.perf_counter() - started) * 1000)
    return timings


async def refusal_ms(rag: LightRAG, texts: Sequence[str]) -> float:
    """Milliseconds to refuse a question one character over ``max_query_chars``."""
    limit = rag.settings.max_query_chars
    question = ("\n\n".join(texts) * (limit // max(sum(map(len, texts)), 1) + 2))[: limit + 1]
    started = time.perf_counter()
    try:
        await rag.aquery_data(question, QueryParam(mode="mix"))
    except QueryTooLong:
        return (time.perf_counter() - started) * 1000
    raise RuntimeError(f"a question of {limit + 1:,} characters was not refused")


def report_long(timings: dict[int, list[float]], refused_ms: float, limit: int) -> None:
    """One line per question length: median, p95 and the median's ratio to the short questions'."""
    base = median(timings[0])
    print(f"{'long questions':<16}{'median ms':>10}{'p95 ms':>9}{'x short':>9}")
    for chars, values in timings.items():
        name = "short" if chars == 0 else f"{chars:,} chars"
        print(f"{name:<16}{median(values):>10.2f}{p95(values):>9.2f}{median(values) / base:>9.2f}")
    print(f"refused over max_query_chars ({limit:,} chars): {refused_ms:.2f} ms")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


async def processed_documents(rag: LightRAG) -> int:
    """How many documents of the workspace are processed."""
    async with rag.pool.acquire() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM doc_status WHERE status = 'processed'"))


async def run(args: argparse.Namespace, dsn: str) -> None:
    """Build the workspace (or reuse a named one that holds the corpus), warm up, time
    every mode, report, and drop the workspace unless it is named or ``--keep`` is given."""
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    embedding = choose_embedding(args.embedding)
    rag = LightRAG(
        dsn=dsn,
        workspace=args.workspace or workspace_name("bench_query"),
        llm_model_func=CorpusLLM(vocab),
        embedding_func=embedding,
    )
    await rag.initialize()
    try:
        if args.workspace and await processed_documents(rag) == args.docs:
            print(f"reusing workspace {args.workspace} ({args.docs} docs); {args.queries} queries per mode")
        else:
            seconds = await build(rag, texts)
            print(
                f"built {args.docs} docs x ~{args.words} words in {seconds:.1f} s "
                f"(embedding {embedding.model_name}); {args.queries} queries per mode"
            )
        if args.no_vacuum:
            print("not vacuumed: the state right after the build")
        else:
            print(f"vacuumed and analyzed the retrieval tables in {await settle(rag):.1f} s")
        warm = questions(args.queries, texts, vocab, seed=args.seed + 1)
        timed = questions(args.queries, texts, vocab, seed=args.seed + 2)
        for mode in MODES:
            for question in warm:
                await rag.aquery_data(question, QueryParam(mode=mode))  # type: ignore[arg-type]
        server = ServerCPU(rag)
        await server.start()
        print(f"load average before: {load_average()}")
        results = [await run_mode(rag, mode, timed, server) for mode in MODES]
        if args.lexical_off:
            results += [await run_mode(rag, mode, timed, server, lexical=False) for mode in LEXICAL_MODES]
        select_one_ms, search_ms = await baselines(rag, timed)
        report(results, select_one_ms, search_ms)
        if args.long_rounds:
            short = questions(args.long_rounds, texts, vocab, seed=args.seed + 3)
            timings = await long_questions(rag, texts, short, args.long_rounds, args.seed)
            report_long(timings, await refusal_ms(rag, texts), rag.settings.max_query_chars)
        print(f"load average after:  {load_average()}")
    finally:
        if not (args.workspace or args.keep):
            await rag.drop_workspace()


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20, help="documents in the workspace")
    parser.add_argument("--queries", type=int, default=30, help="timed queries per mode")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument(
        "--embedding", choices=("hashed", "local"), default="hashed", help="hashed (dim 64) or local MiniLM"
    )
    parser.add_argument(
        "--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else an embedded server)"
    )
    parser.add_argument(
        "--workspace",
        default=None,
        help="a named workspace, kept afterwards and reused when it already holds the corpus "
        f"(needs --dsn or ${DSN_ENV}: the embedded server of a run is temporary)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated workspace")
    parser.add_argument(
        "--no-vacuum", action="store_true", help="time the workspace as built, without VACUUM ANALYZE first"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--lexical-off",
        action="store_true",
        help="also time the modes that use lexical search with it off (rows suffixed no-lex)",
    )
    parser.add_argument(
        "--long-rounds",
        type=int,
        default=10,
        help="rounds of the long-questions phase (each asks every length once; 0 skips it)",
    )
    args = parser.parse_args()
    with database(args.dsn) as dsn:
        asyncio.run(run(args, dsn))


if __name__ == "__main__":
    main()
