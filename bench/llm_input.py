"""LLM input during indexing: calls and characters per prompt kind, lightrag_pg against upstream.

Both systems index the same generated corpus (:mod:`bench.corpus`) with the same
scripted answers (:class:`bench.differential.SharedLLM`) and the same hashed
embedding, each in a fresh workspace of one embedded PostgreSQL server, with their
default indexing settings (gleaning included). Every LLM call is classified by its
last user message (extraction, gleaning, summary) and its input measured in
characters: system prompt, history turns and prompt. lightrag_pg's figures come
from its own usage accounting too (input tokens by kind, from ``usage``), and each
prompt kind's stable prefix (the part every call of the kind shares, which a
provider's prefix cache can reuse) is reported as a share of its input.

lightrag_pg indexes all documents in one insert: one indexing run, which summarises
each entity and relation once, after all its merges. Upstream inserts one document at a
time (its runner's way). ``--curve`` also indexes with lightrag_pg in ten runs of a tenth
of the documents each and one document per run, and prints the summary calls of the
three after each tenth against the description fragments merged so far, with the slope
(calls per new fragment) over the second half.

``--corpus small`` is 20 documents, ``medium`` 100 (about two chunks each); ``--docs``
overrides. Upstream (``lightrag-hku`` 1.5.7) runs in its own virtualenv, as in
:mod:`bench.differential`; ``--no-upstream`` measures lightrag_pg alone.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    DEFAULT_CACHE,
    SharedLLM,
    embedded_server,
    embedding_func,
    run_upstream,
    tiktoken_cache,
    translate_upstream_prompt,
    upstream_python,
    workspace_name,
)
from bench.corpus import documents, vocabulary
from lightrag_pg import LightRAG
from lightrag_pg.store.usage import UsageSum
from lightrag_pg.testing import classify_prompt, prompt_input_text

CORPORA = {"small": 20, "medium": 100}
KINDS = ("extraction", "gleaning", "summary")


def common_prefix(texts: Sequence[str]) -> int:
    """How many characters every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)
    for n, (a, b) in enumerate(zip(first, last, strict=False)):
        if a != b:
            return n
    return len(first)


@dataclass
class Tally:
    """Calls and input characters per prompt kind, and every input of a kind (for its prefix)."""

    calls: Counter[str] = field(default_factory=Counter)
    chars: Counter[str] = field(default_factory=Counter)
    inputs: dict[str, list[str]] = field(default_factory=dict)
    extraction_of: dict[str, str] = field(default_factory=dict)
    repeated: int = 0

    def add(self, kind: str, parts: Sequence[str]) -> None:
        whole = "\x00".join(parts)
        self.calls[kind] += 1
        self.chars[kind] += sum(len(p) for p in parts)
        self.inputs.setdefault(kind, []).append(whole)
        chunk = prompt_input_text(parts[-1])
        if kind == "extraction" and chunk is not None:
            self.extraction_of[chunk] = whole
        elif kind == "gleaning" and chunk is not None and chunk in self.extraction_of:
            self.repeated += common_prefix([self.extraction_of[chunk], whole])

    def repeated_share(self) -> float:
        """Of the gleaning input, the share that starts as its chunk's extraction call did (a
        provider's prefix cache holds it from that call)."""
        return self.repeated / self.chars["gleaning"] if self.chars["gleaning"] else 0.0

    def stable_share(self, kind: str) -> float:
        """The characters every input of ``kind`` starts with, as a share of the mean input."""
        inputs = self.inputs.get(kind, [])
        if len(inputs) < 2:
            return 0.0
        mean = sum(len(i) for i in inputs) / len(inputs)
        return common_prefix(inputs) / mean


def kind_of(prompt: str) -> str:
    """``extraction``, ``gleaning``, ``summary`` or ``other``, from a user message."""
    return classify_prompt(prompt) or "other"


class CountingLLM(SharedLLM):
    """:class:`SharedLLM` that tallies what each system sends it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ours = Tally()
        self.theirs = Tally()

    async def __call__(
        self, prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
    ) -> str:
        turns = [str(m.get("content", "")) for m in history_messages or ()]
        self.ours.add(kind_of(prompt), [system_prompt or "", *turns, prompt])
        return await super().__call__(prompt, system_prompt, history_messages, **kwargs)

    def respond_upstream(self, prompt: str, system_prompt: str | None, history: Sequence[str] = ()) -> str:
        translated = translate_upstream_prompt(prompt)
        self.theirs.add(kind_of(translated or prompt), [system_prompt or "", *history, prompt])
        return super().respond_upstream(prompt, system_prompt)


COUNT_FRAGMENTS = "SELECT (SELECT count(*) FROM entity_fragments) + (SELECT count(*) FROM relation_fragments)"


@dataclass
class Curve:
    """Summary calls and description fragments merged after each insert (``docs``: the
    documents in by then)."""

    docs: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    fragments: list[int] = field(default_factory=list)

    def at(self, docs: int) -> int:
        """The summary calls once ``docs`` documents were in."""
        return self.calls[self.docs.index(docs)]

    def slope(self) -> float:
        """Summary calls per new fragment over the second half of the inserts."""
        half = len(self.calls) // 2
        if half == 0 or self.fragments[-1] == self.fragments[half - 1]:
            return 0.0
        return (self.calls[-1] - self.calls[half - 1]) / (self.fragments[-1] - self.fragments[half - 1])


async def run_ours(
    dsn: str, texts: list[str], llm: CountingLLM, runs: int = 1
) -> tuple[list[UsageSum], Curve]:
    """Index ``texts`` with lightrag_pg's defaults in ``runs`` inserts of consecutive
    documents; return its usage table summed by kind and the summary curve."""
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("llm_input"),
        llm_model_func=llm,
        embedding_func=embedding_func("hashed"),
    )
    await rag.initialize()
    curve = Curve()
    try:
        bounds = [round(len(texts) * k / runs) for k in range(runs + 1)]
        for lo, hi in itertools.pairwise(bounds):
            paths = [f"doc-{i:04d}.txt" for i in range(lo, hi)]
            result = await rag.ainsert(texts[lo:hi], file_paths=paths)
            if result.progress.docs_failed:
                raise RuntimeError(f"lightrag_pg failed: {result.progress.failures}")
            async with rag.session() as s:
                curve.fragments.append(await s.conn.fetchval(COUNT_FRAGMENTS))
            curve.docs.append(hi)
            curve.calls.append(llm.ours.calls["summary"])
        return await rag.ausage(by="kind"), curve
    finally:
        await rag.drop_workspace()


def print_curves(curves: dict[str, Curve], docs: int) -> None:
    """Summary calls after each tenth of the documents, against the fragments merged so far."""
    tenths = [round(docs * k / 10) for k in range(1, 11)]
    first = next(iter(curves.values()))
    print("\nsummary calls after each tenth of the documents, and calls per new fragment (2nd half)")
    print(f"{'documents':<26}" + "".join(f"{i:>7}" for i in tenths) + f"{'slope':>8}")
    print(f"{'fragments merged':<26}" + "".join(f"{first.fragments[first.docs.index(i)]:>7}" for i in tenths))
    for name, c in curves.items():
        print(f"{name:<26}" + "".join(f"{c.at(i):>7}" for i in tenths) + f"{c.slope():>8.3f}")


def table(ours: Tally, theirs: Tally | None) -> None:
    """Print the issue's table: calls and characters per kind, and the ratio."""
    head = f"{'LLM input during indexing':<28}{'upstream 1.5.7':>24}{'lightrag_pg':>24}{'ratio':>8}"
    print(head)
    for kind in (*KINDS, "total"):
        if kind == "total":
            mine, up = sum(ours.chars.values()), sum(theirs.chars.values()) if theirs else 0
            calls_m, calls_u = sum(ours.calls.values()), sum(theirs.calls.values()) if theirs else 0
        else:
            mine, up = ours.chars[kind], theirs.chars[kind] if theirs else 0
            calls_m, calls_u = ours.calls[kind], theirs.calls[kind] if theirs else 0
        left = f"{calls_u} calls, {up / 1000:,.0f}k chars" if theirs else "-"
        ratio = f"{mine / up:.2f}" if up else "-"
        print(f"{kind:<28}{left:>24}{f'{calls_m} calls, {mine / 1000:,.0f}k chars':>24}{ratio:>8}")


def prefixes(tally: Tally, who: str) -> None:
    """Print each prompt kind's stable prefix share."""
    for kind in KINDS:
        inputs = tally.inputs.get(kind, [])
        if inputs:
            print(
                f"{who}: stable prefix of every {kind} call: {tally.stable_share(kind):.0%} "
                f"of a mean input of {sum(map(len, inputs)) / len(inputs):,.0f} chars"
            )
    print(f"{who}: gleaning input repeating its chunk's extraction call: {tally.repeated_share():.0%}")


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=tuple(CORPORA), default="small")
    parser.add_argument("--docs", type=int, default=None, help="documents (default: the corpus's)")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-upstream", action="store_true", help="measure lightrag_pg alone")
    parser.add_argument("--curve", action="store_true", help="also the summary curve (two more runs)")
    args = parser.parse_args()
    docs = args.docs or CORPORA[args.corpus]
    vocab = vocabulary(seed=args.seed)
    texts = documents(docs, args.words, args.seed, vocab)
    llm = CountingLLM(vocab)
    curves: dict[str, Curve] = {}
    with embedded_server() as (dsn, pg_env):
        usage, _ = asyncio.run(run_ours(dsn, texts, llm))
        if args.curve:
            for name, runs in (("lightrag_pg, runs of 1/10", 10), ("lightrag_pg, doc by doc", docs)):
                curves[name] = asyncio.run(run_ours(dsn, texts, CountingLLM(vocab), runs))[1]
        theirs = None
        if not args.no_upstream:
            python = upstream_python(DEFAULT_CACHE)
            env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache(DEFAULT_CACHE)), **pg_env}
            paths = [f"doc-{i:04d}.txt" for i in range(len(texts))]
            up = Curve()

            def inserted() -> None:
                up.docs.append(len(up.docs) + 1)
                up.calls.append(llm.theirs.calls["summary"])

            with tempfile.TemporaryDirectory(prefix="lightrag-llm-input-") as tmp:
                run_upstream(
                    python, env, Path(tmp), texts, paths, [], llm, "hashed", {}, on_inserted=inserted
                )
            theirs = llm.theirs
            if "lightrag_pg, doc by doc" in curves:  # the same extraction answers: the same fragments
                up.fragments = curves["lightrag_pg, doc by doc"].fragments
                curves["upstream, doc by doc"] = up
    print(f"{docs} documents x ~{args.words} words, scripted LLM, default settings (gleaning on)")
    table(llm.ours, theirs)
    prefixes(llm.ours, "lightrag_pg")
    if theirs is not None:
        prefixes(theirs, "upstream")
    print("lightrag_pg usage table by kind (input / output tokens, calls, cache hits):")
    for row in usage:
        print(
            f"  {row.key:<10} {row.input_tokens:>10,} / {row.output_tokens:>8,}   {row.calls} calls, "
            f"{row.cache_hits} cache hits"
        )
    if curves:
        print_curves(curves, docs)


if __name__ == "__main__":
    main()
