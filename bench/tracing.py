"""Tracing overhead: query latency without spans, with tracing off, and with tracing on.

A workspace is built from the generated corpus with the instant scripted LLM, so a
query's time is lightrag_pg's and PostgreSQL's alone (the smallest denominator, so
the largest share an overhead can take). Then the same questions are answered with
``aquery`` (keywords, embedding, retrieval, context, answer; after a warm-up round
the keyword and answer calls come from the LLM cache) in three configurations,
interleaved round by round in one process:

* ``baseline``: no spans at all, as without ``opentelemetry-api`` or when the
  application never imported it (each instrumented block is an empty context manager);
* ``off``: ``opentelemetry-api`` imported and no tracer provider configured (the
  API's non-recording spans);
* ``on``: the OpenTelemetry SDK's tracer provider with a batch span processor and
  an exporter that drops the batches (what an OTLP exporter costs in-process,
  without the network).

It prints each configuration's median and p95 milliseconds per query, wall-clock
and this process's CPU time (where the spans are made; steadier than wall-clock on
a shared machine), and the ratio to the baseline: the median, over every question
of every round, of its time in the configuration over its time in the baseline in
the same round. The targets are off < 1.02 and on < 1.10.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from bench.common import choose_embedding, database, workspace_name
from bench.corpus import CorpusLLM, documents, questions, vocabulary
from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.observe import tracing

CONFIGS = ("baseline", "off", "on")
MODES = ("local", "global", "hybrid", "mix", "naive")


class Dropped(SpanExporter):
    """Takes every batch and keeps nothing; counts the spans."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class Configs:
    """Switches the spans of :mod:`lightrag_pg.observe.tracing` between the three configurations."""

    def __init__(self) -> None:
        self.api = tracing._api
        self.exporter = Dropped()
        self.provider = TracerProvider()
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter))

    def use(self, config: str) -> None:
        if config == "baseline":
            tracing._api = lambda: None
        elif config == "off":
            tracing._api = self.api
            tracing._tracer = trace.NoOpTracer()
        else:
            tracing._api = self.api
            tracing._tracer = self.provider.get_tracer(tracing.TRACER_NAME)


async def ask(rag: LightRAG, asked: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
    """Wall-clock and CPU milliseconds per question."""
    times = []
    for question, mode in asked:
        wall, cpu = time.perf_counter(), time.process_time()
        await rag.aquery(question, QueryParam(mode=mode))  # type: ignore[arg-type]
        times.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
    return times


def report(timings: dict[str, list[list[tuple[float, float]]]], rounds: int, questions: int) -> None:
    """The table: per configuration, median and p95 of wall and CPU ms, and the paired ratios."""
    print(f"{questions} questions x {rounds} rounds per configuration (modes in turn)")
    print(f"{'tracing':<10}{'wall ms':>9}{'p95':>8}{'ratio':>8}{'cpu ms':>9}{'p95':>8}{'ratio':>8}")
    for config in CONFIGS:
        cells = []
        for k in (0, 1):
            values = sorted(t[k] for batch in timings[config] for t in batch)
            pairs = [
                mine[k] / base[k]
                for batch, baseline in zip(timings[config], timings["baseline"], strict=True)
                for mine, base in zip(batch, baseline, strict=True)
                if base[k] > 0
            ]
            p95 = values[int(0.95 * (len(values) - 1))]
            cells.append(f"{statistics.median(values):>9.2f}{p95:>8.2f}{statistics.median(pairs):>8.3f}")
        print(f"{config:<10}{''.join(cells)}")


async def run(args: argparse.Namespace, dsn: str) -> None:
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    llm = CorpusLLM(vocab)
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("bench_tracing"),
        llm_model_func=llm,
        embedding_func=choose_embedding("hashed"),
    )
    await rag.initialize()
    configs = Configs()
    try:
        started = time.perf_counter()
        await rag.ainsert(texts)
        print(f"{args.docs} documents indexed in {time.perf_counter() - started:.1f} s")
        asked = [
            (q, MODES[i % len(MODES)])
            for i, q in enumerate(questions(args.questions, texts, vocab, args.seed))
        ]
        configs.use("baseline")
        await ask(rag, asked)  # warm-up: fills the LLM cache and the statement caches
        timings: dict[str, list[list[tuple[float, float]]]] = {c: [] for c in CONFIGS}
        rng = random.Random(args.seed)
        for _ in range(args.rounds):
            order = list(CONFIGS)
            rng.shuffle(order)
            for config in order:
                configs.use(config)
                timings[config].append(await ask(rag, asked))
        configs.use("baseline")
        configs.provider.force_flush()
    finally:
        await rag.drop_workspace()
    report(timings, args.rounds, args.questions)
    per_query = configs.exporter.spans / (args.rounds * len(asked))
    print(f"spans exported with tracing on: {configs.exporter.spans} ({per_query:.1f} per query)")


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=40, help="documents in the workspace")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument("--questions", type=int, default=20, help="questions per round")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dsn", default=None, help="PostgreSQL DSN (default: $LIGHTRAG_PG_DSN, else an embedded server)"
    )
    args = parser.parse_args()
    with database(args.dsn) as dsn:
        asyncio.run(run(args, dsn))


if __name__ == "__main__":
    main()
