"""What indexing asks the LLM, by kind, in lightrag_pg and in upstream LightRAG, in one run.

Both systems index the same generated corpus (:mod:`bench.corpus`) with the
same scripted answers (:class:`bench.differential.SharedLLM`) and the same
hashed embeddings, summaries on with both systems' defaults. For each system
and kind of prompt (extraction, gleaning, summary) it prints the calls and the
characters sent, then the summary curve: summary calls after every tenth of the
documents, one document per insert, against the description fragments merged
so far.

lightrag_pg runs twice: all documents in one insert (one indexing run, so each
entity and relation is summarised once, after its merges) and one document per
insert, as upstream runs here (its runner inserts one document at a time).

Usage: ``python bench/summaries.py [--docs 20] [--words 1500] [--no-upstream]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import documents, vocabulary
from bench.differential import DEFAULT_CACHE as UPSTREAM_CACHE
from bench.differential import (
    SERIAL,
    SharedLLM,
    embedded_server,
    embedding_func,
    run_upstream,
    tiktoken_cache,
    translate_upstream_prompt,
    upstream_python,
    workspace_name,
)
from lightrag_pg import LightRAG
from lightrag_pg.testing import classify_prompt

KINDS = ("extraction", "gleaning", "summary")


class MeteredLLM(SharedLLM):
    """:class:`SharedLLM` counting the calls and characters of each kind of prompt, and the
    description fragments the summary prompts were asked about."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked: Counter[str] = Counter()
        self.chars: Counter[str] = Counter()

    def _meter(self, prompt: str, system_prompt: str | None) -> None:
        kind = classify_prompt(prompt) or "other"
        self.asked[kind] += 1
        self.chars[kind] += len(prompt) + len(system_prompt or "")

    async def __call__(
        self, prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
    ) -> str:
        kind = classify_prompt(prompt) or "other"
        self.chars[kind] += sum(len(str(m.get("content", ""))) for m in history_messages or [])
        return await super().__call__(prompt, system_prompt, history_messages, **kwargs)

    def respond(self, prompt: str, system_prompt: str | None = None) -> str:
        self._meter(prompt, system_prompt)
        return super().respond(prompt, system_prompt)

    def respond_upstream(self, prompt: str, system_prompt: str | None, history: Sequence[str] = ()) -> str:
        translated = translate_upstream_prompt(prompt)
        kind = classify_prompt(translated) if translated is not None else None
        self.asked[kind or "other"] += 1
        self.chars[kind or "other"] += len(prompt) + len(system_prompt or "") + sum(map(len, history))
        return self.respond_unmetered(translated or prompt, system_prompt)

    def respond_unmetered(self, prompt: str, system_prompt: str | None) -> str:
        return SharedLLM.respond(self, prompt, system_prompt)


async def run_ours(
    dsn: str, texts: Sequence[str], paths: Sequence[str], llm: MeteredLLM, one_run: bool
) -> list[int]:
    """Index with lightrag_pg; the summary calls after each document (one insert each), or
    after the one insert."""
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("sum_ours"),
        llm_model_func=llm,
        embedding_func=embedding_func("hashed"),
        **SERIAL,
    )
    await rag.initialize()
    curve: list[int] = []
    try:
        batches = [list(range(len(texts)))] if one_run else [[i] for i in range(len(texts))]
        for batch in batches:
            result = await rag.ainsert([texts[i] for i in batch], file_paths=[paths[i] for i in batch])
            if result.progress.docs_failed:
                raise RuntimeError(f"lightrag_pg failed: {result.progress.failures}")
            curve.append(llm.asked["summary"])
    finally:
        await rag.finalize()
    return curve


def table(rows: dict[str, MeteredLLM]) -> None:
    names = list(rows)
    print(f"{'LLM input during indexing':<26}" + "".join(f"{n:>28}" for n in names))
    for kind in KINDS:
        cells = "".join(
            f"{rows[n].asked[kind]:>10} calls {rows[n].chars[kind] / 1000:>8.0f}k chars" for n in names
        )
        print(f"{kind:<26}{cells}")
    totals = "".join(f"{sum(rows[n].chars[k] for k in KINDS) / 1000:>26.0f}k chars" for n in names)
    print(f"{'total':<26}" + totals.replace("k chars", "k", 0))
    if "upstream" in rows:
        up = rows["upstream"]
        for n in names:
            if n == "upstream":
                continue
            ours = rows[n]
            ratio = sum(ours.chars[k] for k in KINDS) / max(1, sum(up.chars[k] for k in KINDS))
            calls = ours.asked["summary"] / max(1, up.asked["summary"])
            print(f"{n}: input chars {ratio:.2f}x upstream's, summary calls {calls:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--words", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-upstream", action="store_true", help="lightrag_pg only")
    parser.add_argument(
        "--cache", type=Path, default=UPSTREAM_CACHE, help="where upstream's virtualenv lives"
    )
    args = parser.parse_args()
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    paths = [f"doc-{i:04d}.txt" for i in range(len(texts))]
    rows: dict[str, MeteredLLM] = {}
    curves: dict[str, list[int]] = {}
    with embedded_server() as (dsn, pg_env):
        rows["ours, one insert"] = MeteredLLM(vocab)
        asyncio.run(run_ours(dsn, texts, paths, rows["ours, one insert"], one_run=True))
        rows["ours, doc by doc"] = MeteredLLM(vocab)
        curves["ours, doc by doc"] = asyncio.run(run_ours(dsn, texts, paths, rows["ours, doc by doc"], False))
        if not args.no_upstream:
            python = upstream_python(args.cache)
            up = rows["upstream"] = MeteredLLM(vocab)
            curve: list[int] = []
            with tempfile.TemporaryDirectory(prefix="lightrag-sum-") as tmp:
                env = {**pg_env, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache(args.cache))}
                run_upstream(
                    python, env, Path(tmp), texts, paths, [], up, "hashed", {},
                    on_inserted=lambda: curve.append(up.asked["summary"]),
                )  # fmt: skip
            curves["upstream"] = curve
    print(f"{args.docs} documents of {args.words} words, summaries on (both systems' defaults)\n")
    table(rows)
    print("\nsummary calls after each tenth of the documents (one document per insert)")
    step = max(1, args.docs // 10)
    print(f"{'documents':<20}" + "".join(f"{i:>6}" for i in range(step, args.docs + 1, step)))
    for name, c in curves.items():
        print(
            f"{name:<20}" + "".join(f"{c[i - 1]:>6}" for i in range(step, args.docs + 1, step) if i <= len(c))
        )


if __name__ == "__main__":
    main()
