"""Differential benchmark: lightrag_pg against upstream LightRAG on the same data.

Both systems index the same generated corpus (:mod:`bench.corpus`) in one
embedded PostgreSQL server, with the same scripted LLM answers and the same
deterministic embeddings (hashed bags of words; :func:`bench.common.weighted_vectors` with
``--embedding weighted``), one document and one chunk at a time. Then each
question is asked in every mode through ``aquery_data`` with the same explicit
keywords (lightrag_pg's lexical search off: upstream has none), and the
retrieved entities, relations (unordered pairs) and chunks (by content) are
compared: Jaccard per question, mean per mode.

Every row only one system returned gets a cause
(:data:`bench.differential_compare.CAUSES`), read from both systems' own
distances, degrees, weights and token counts; the table also gives a tie-aware
Jaccard, which counts rows kept or dropped only by the order of equal keys (an
order upstream leaves to its index or graph scan) as agreeing. ``--summaries
off`` keeps both systems from summarising descriptions, so both index the same
graph (upstream's incremental summaries otherwise make its descriptions, hence
vectors and token counts, differ).

The chunk budget of a query is what the answer prompt leaves of
``max_total_tokens``, and lightrag_pg's prompts are its own (and shorter than
upstream's), so upstream is given lightrag_pg's prompt templates
(:data:`bench.common.SHARED_PROMPTS`): the comparison is of retrieval, not of prompt lengths.

Upstream (``lightrag-hku``, version :data:`UPSTREAM_VERSION`) is installed in
its own virtualenv under the cache directory and runs there as a subprocess
(:mod:`bench.upstream_runner`, driven by :func:`bench.common.run_upstream`) on its
PostgreSQL storages; it is never a dependency of lightrag_pg. The runner asks this
process for every LLM answer and embedding, so one piece of code answers both systems: upstream's prompts
are rewritten into lightrag_pg's before :class:`bench.corpus.CorpusLLM` sees
them.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    DEFAULT_CACHE,
    EMBEDDINGS,
    HASHED_DIM,
    SERIAL,
    UPSTREAM_VERSION,
    Query,
    SharedLLM,
    embedded_server,
    embedder,
    embedding_func,
    graph_from_rows,
    run_upstream,
    tiktoken_cache,
    upstream_python,
    workspace_name,
)
from bench.corpus import CorpusLLM, documents, questions, vocabulary
from bench.differential_compare import (
    Difference,
    Distances,
    Graph,
    Retrieved,
    View,
    cut_summary,
    explain,
    jaccard,
    tie_aware_jaccard,
    ties_of,
)
from lightrag_pg import LightRAG, QueryParam

MODES: tuple[str, ...] = ("local", "global", "hybrid", "mix", "naive")
# Never ask the LLM for a description summary: descriptions are the joined fragments
# in both systems (the same set, in each system's order), so the indexed graphs hold
# the same vectors and the comparison isolates retrieval.
NO_SUMMARIES: dict[str, int] = {"force_llm_summary_on_merge": 10**6, "summary_max_tokens": 10**6}
# Both systems' query defaults (lightrag_pg's equal upstream 1.5.7's; tests pin that).
TOP_K = QueryParam().top_k
CHUNK_TOP_K = QueryParam().chunk_top_k
COSINE_THRESHOLD = 0.2


def compare_graphs(ours: Graph, theirs: Graph) -> list[str]:
    """Lines saying how the two indexed graphs differ (names, types, descriptions, weights, keywords)."""
    lines = []
    sides: tuple[tuple[str, dict[Any, Any], dict[Any, Any], tuple[str, ...]], ...] = (
        ("entities", ours.entities, theirs.entities, ("type", "description")),
        ("relations", ours.relations, theirs.relations, ("weight", "keywords", "description")),
    )
    for label, a, b, fields in sides:
        common = a.keys() & b.keys()
        counts = (
            f"{field} differ on {sum(a[k][i] != b[k][i] for k in common)}" for i, field in enumerate(fields)
        )
        lines.append(f"{label}: ours {len(a)}, upstream {len(b)}, common {len(common)}; " + ", ".join(counts))
    return lines


def _distances(entities: Sequence[Any], relations: Sequence[Any], chunks: Sequence[Any]) -> Distances:
    """:class:`Distances` from (key..., d, at_limit) rows of the three searches."""
    out: list[dict[Any, float]] = [{}, {}, {}]
    at_limit: set[tuple[str, Any]] = set()
    for i, (kind, rows) in enumerate((("entities", entities), ("relations", relations), ("chunks", chunks))):
        for r in rows:
            key = _pair(r[0], r[1]) if kind == "relations" else r[0]
            out[i][key] = min(round(float(r["d"]), 6), out[i].get(key, 2.0))
            if r["at_limit"]:
                at_limit.add((kind, key))
    return Distances(out[0], out[1], out[2], at_limit=frozenset(at_limit))


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def query_vectors(query: Query, kind: str) -> list[str]:
    """The low-level keyword, high-level keyword and question vectors of ``query``, as pgvector text."""
    texts = [", ".join(query.ll_keywords), ", ".join(query.hl_keywords), query.question]
    return ["[" + ",".join(map(str, v.tolist())) + "]" for v in embedder(kind)(texts, HASHED_DIM)]


# the distance, and whether it is exactly the threshold's limit (where ``<=`` and ``<`` part)
_D = "{col} <=> $1::text::vector AS d, ({col} <=> $1::text::vector) = 1 - $2::float8 AS at_limit"


async def search_distances(conn: Any, query: Query, kind: str) -> Distances:
    """Every entity's, relation's and chunk's distance to ``query`` in lightrag_pg's tables, by pgvector."""
    ll, hl, q = query_vectors(query, kind)
    d = _D.format(col="embedding")
    t = COSINE_THRESHOLD
    return _distances(
        await conn.fetch(f"SELECT name, {d} FROM entity_vectors", ll, t),
        await conn.fetch(f"SELECT src, tgt, {d} FROM relation_vectors", hl, t),
        await conn.fetch(
            f"SELECT c.content, {d.replace('embedding', 'v.embedding')}"
            " FROM chunk_vectors v JOIN text_chunks c ON c.id = v.chunk_id",
            q,
            t,
        ),
    )


def upstream_table(base: str, model_name: str) -> str:
    """Upstream's vector table of ``base`` for an embedding model (its name and dimension as a suffix)."""
    return f"{base}_{re.sub(r'[^a-z0-9_]', '_', model_name.lower())}_{HASHED_DIM}d"


async def index_missed(conn: Any, table: str, keys: str, workspace: str, vector: str) -> set[Any]:
    """Rows upstream's own top-k search (its SQL, its HNSW index) skips though they are nearer than its cut.

    The search is run as upstream sends it, then again with index scans off (exact);
    a row of the exact result strictly nearer than the exact cut that the index scan
    did not return was missed by the approximate index.
    """
    sql = (
        f"SELECT {keys}, content_vector <=> $2::text::vector AS d FROM {table}"
        " WHERE workspace = $1 AND content_vector <=> $2::text::vector < $3"
        " ORDER BY content_vector <=> $2::text::vector LIMIT $4"
    )
    args = (workspace, vector, 1 - COSINE_THRESHOLD, TOP_K)
    indexed = await conn.fetch(sql, *args)
    async with conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        exact = await conn.fetch(sql, *args)

    def key(r: Any) -> Any:
        return _pair(r[0], r[1]) if keys.count(",") else r[0]

    cut = exact[-1]["d"] if len(exact) == TOP_K else 2.0
    return {key(r) for r in exact if r["d"] < cut} - {key(r) for r in indexed}


async def upstream_distances(
    dsn: str, workspace: str, queries: Sequence[Query], kind: str
) -> list[Distances]:
    """Per query, the same distances as :func:`search_distances` in upstream's vector tables, and
    the rows its entity and relation searches missed (:func:`index_missed`)."""
    import asyncpg

    model = f"{kind}-bow-{HASHED_DIM}"
    entity_t, relation_t, chunk_t = (
        upstream_table(f"lightrag_vdb_{b}", model) for b in ("entity", "relation", "chunks")
    )
    d = _D.format(col="content_vector")
    t = COSINE_THRESHOLD
    conn = await asyncpg.connect(dsn)
    try:
        out = []
        for query in queries:
            ll, hl, q = query_vectors(query, kind)
            found = _distances(
                await conn.fetch(
                    f"SELECT entity_name, {d} FROM {entity_t} WHERE workspace = $3", ll, t, workspace
                ),
                await conn.fetch(
                    f"SELECT source_id, target_id, {d} FROM {relation_t} WHERE workspace = $3",
                    hl,
                    t,
                    workspace,
                ),
                await conn.fetch(f"SELECT content, {d} FROM {chunk_t} WHERE workspace = $3", q, t, workspace),
            )
            missed = {
                ("entities", k) for k in await index_missed(conn, entity_t, "entity_name", workspace, ll)
            }
            missed |= {
                ("relations", k)
                for k in await index_missed(conn, relation_t, "source_id, target_id", workspace, hl)
            }
            out.append(dataclasses.replace(found, index_missed=frozenset(missed)))
        return out
    finally:
        await conn.close()


def plan(queries_per_mode: Sequence[str], llm: CorpusLLM) -> list[Query]:
    """Every question in every mode, with the scripted keywords of the question."""
    out: list[Query] = []
    for mode in MODES:
        for question in queries_per_mode:
            keywords = json.loads(llm.keywords_answer(question))
            out.append(Query(question, mode, keywords["high_level_keywords"], keywords["low_level_keywords"]))
    return out


def param_of(query: Query) -> QueryParam:
    """The lightrag_pg query parameters of ``query``: lexical search off, as upstream has none."""
    return QueryParam(
        mode=query.mode,  # type: ignore[arg-type]
        hl_keywords=list(query.hl_keywords),
        ll_keywords=list(query.ll_keywords),
        enable_rerank=False,
        lexical=False,
    )


async def run_ours(
    dsn: str,
    texts: Sequence[str],
    paths: Sequence[str],
    queries: Sequence[Query],
    llm: CorpusLLM,
    kind: str,
    settings: dict[str, Any],
) -> tuple[list[dict[str, Any]], Graph, list[Distances]]:
    """Index ``texts`` one document at a time with lightrag_pg, then answer ``queries``.

    Also returns the graph and, per query, the vector distances its searches saw.
    """
    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name("diff_ours"),
        llm_model_func=llm,
        embedding_func=embedding_func(kind),
        **SERIAL,
        **settings,
    )
    await rag.initialize()
    try:
        for text, path in zip(texts, paths, strict=True):
            result = await rag.ainsert([text], file_paths=[path])
            if result.progress.docs_failed:
                raise RuntimeError(f"lightrag_pg failed on {path}: {result.progress.failures}")
        results = [await rag.aquery_data(q.question, param_of(q)) for q in queries]
        async with rag.pool.acquire() as conn:
            graph = graph_from_rows(
                await conn.fetch("SELECT name, entity_type, description FROM entities"),
                await conn.fetch("SELECT src, tgt, weight, keywords, description FROM relations"),
            )
            distances = [await search_distances(conn, q, kind) for q in queries]
        return results, graph, distances
    finally:
        await rag.finalize()


# --- comparison -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    """One query as both systems saw and answered it, and why their rows differ."""

    query: Query
    ours: View
    theirs: View
    differences: tuple[Difference, ...]

    @classmethod
    def of(cls, query: Query, ours: View, theirs: View) -> Comparison:
        """Compare the two views of ``query`` (upstream's query defaults: ``top_k``, threshold)."""
        differences = explain(query.mode, ours, theirs, TOP_K, COSINE_THRESHOLD, CHUNK_TOP_K)
        return cls(query, ours, theirs, tuple(differences))

    @property
    def scores(self) -> tuple[float, float, float]:
        """Raw Jaccard of (entities, relations, chunks)."""
        a, b = self.ours.got, self.theirs.got
        return jaccard(a.entities, b.entities), jaccard(a.relations, b.relations), jaccard(a.chunks, b.chunks)

    @property
    def tie_aware_scores(self) -> tuple[float, float, float]:
        """:attr:`scores` with rows tied at a cut, in both systems, counted as agreeing."""
        a, b = self.ours.got, self.theirs.got
        return (
            tie_aware_jaccard(a.entities, b.entities, ties_of(self.differences, "entities")),
            tie_aware_jaccard(a.relations, b.relations, ties_of(self.differences, "relations")),
            jaccard(a.chunks, b.chunks),
        )


def context_tokens(result: dict[str, Any]) -> dict[str, int]:
    """Tokens of the entity and relation context of an answer, rendered as upstream 1.5.7 budgets them.

    One JSON object per line (entity: name, type, description; relation: the two
    names and the description), lines joined by newlines; counted with
    ``o200k_base``, both systems' tokenizer.
    """
    from lightrag_pg.llm.tokenizer import get_tokenizer

    count = get_tokenizer().count
    data = result.get("data") or {}
    entities = [
        {"entity": e["entity_name"], "type": e.get("entity_type"), "description": e.get("description")}
        for e in data.get("entities", [])
    ]
    relations = [
        {"entity1": r["src_id"], "entity2": r["tgt_id"], "description": r.get("description")}
        for r in data.get("relationships", [])
    ]
    return {
        kind: count("\n".join(json.dumps(row, ensure_ascii=False) for row in rows))
        for kind, rows in (("entities", entities), ("relations", relations))
    }


def retrieved(result: dict[str, Any]) -> Retrieved:
    """:meth:`Retrieved.from_data` with :func:`context_tokens`."""
    return dataclasses.replace(Retrieved.from_data(result), tokens=context_tokens(result))


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean (0.0 for no values)."""
    return sum(values) / len(values) if values else 0.0


def report(comparisons: Sequence[Comparison]) -> None:
    """Print the raw and tie-aware Jaccard tables per mode, with mean sizes on each side and
    the mean tokens per kept entity and relation line (longer lines, not another count,
    make a budget keep fewer rows)."""
    print(
        f"{'mode':<8}{'entities':>9}{'min':>6}{'relations':>11}{'min':>6}{'chunks':>8}{'min':>6}"
        f"   tie-aware e / r / c     sizes ours/upstream (e, r, c)   tokens per line (e, r)"
    )
    for mode in MODES:
        rows = [c for c in comparisons if c.query.mode == mode]
        cols = [[c.scores[i] for c in rows] for i in range(3)]
        tied = [mean([c.tie_aware_scores[i] for c in rows]) for i in range(3)]
        sizes = " ".join(
            f"{mean([len(getattr(c.ours.got, f)) for c in rows]):.1f}/"
            f"{mean([len(getattr(c.theirs.got, f)) for c in rows]):.1f}"
            for f in ("entities", "relations", "chunks")
        )
        per_line = " ".join(
            f"{per_row(rows, 'ours', f):.0f}/{per_row(rows, 'theirs', f):.0f}"
            for f in ("entities", "relations")
        )
        print(
            f"{mode:<8}{mean(cols[0]):>9.3f}{min(cols[0]):>6.2f}{mean(cols[1]):>11.3f}{min(cols[1]):>6.2f}"
            f"{mean(cols[2]):>8.3f}{min(cols[2]):>6.2f}   {tied[0]:.3f} / {tied[1]:.3f} / {tied[2]:.3f}"
            f"   {sizes}   {per_line}"
        )


def per_row(comparisons: Sequence[Comparison], side: str, kind: str) -> float:
    """Context tokens per kept ``kind`` row of one side, over ``comparisons``."""
    views = [getattr(c, side).got for c in comparisons]
    rows = sum(len(getattr(v, kind)) for v in views)
    return sum(v.tokens.get(kind, 0) for v in views) / rows if rows else 0.0


def report_causes(comparisons: Sequence[Comparison]) -> None:
    """Per mode and kind: rows only one system returned, counted by cause."""
    print("rows only one system returned, by cause (ours + upstream):")
    for mode in MODES:
        parts = []
        for kind in ("entities", "relations", "chunks"):
            counts: dict[str, list[int]] = {}
            for c in comparisons:
                if c.query.mode != mode:
                    continue
                for d in c.differences:
                    if d.kind == kind:
                        counts.setdefault(d.cause, [0, 0])[d.kept_by != "ours"] += 1
            if counts:
                parts.append(f"{kind}: " + ", ".join(f"{k} {o}+{u}" for k, (o, u) in sorted(counts.items())))
        print(f"  {mode:<8}" + ("; ".join(parts) or "none"))


def boundary_rows(comparisons: Sequence[Comparison]) -> tuple[int, int]:
    """Rows at exactly ``1 - threshold`` from a query, where lightrag_pg's ``<=`` and upstream's ``<`` part.

    Returns (all such rows, those of them lightrag_pg returned), over every query.
    """
    rows = returned = 0
    for c in comparisons:
        got = c.ours.got
        for kind, key in c.ours.distances.at_limit:
            rows += 1
            returned += (
                key in {"entities": got.entities, "relations": got.relations, "chunks": got.chunks}[kind]
            )
    return rows, returned


def details(comparisons: Sequence[Comparison]) -> list[dict[str, Any]]:
    """Per query: scores, where each system cut, and every differing row with its cause and keys."""
    out = []
    for c in comparisons:
        out.append(
            {
                "mode": c.query.mode,
                "question": c.query.question,
                "hl_keywords": c.query.hl_keywords,
                "ll_keywords": c.query.ll_keywords,
                "jaccard": dict(zip(("entities", "relations", "chunks"), c.scores, strict=True)),
                "tie_aware": dict(zip(("entities", "relations", "chunks"), c.tie_aware_scores, strict=True)),
                "cuts": {
                    "ours": cut_summary(c.query.mode, c.ours, TOP_K, COSINE_THRESHOLD),
                    "upstream": cut_summary(c.query.mode, c.theirs, TOP_K, COSINE_THRESHOLD),
                },
                "differences": [dataclasses.asdict(d) for d in c.differences],
            }
        )
    return out


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=10, help="documents in the corpus")
    parser.add_argument("--questions", type=int, default=10, help="questions, each asked in every mode")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--embedding",
        choices=EMBEDDINGS,
        default="hashed",
        help="plain hashed bags of words, or word-weighted ones (few exact distance ties)",
    )
    parser.add_argument(
        "--summaries",
        choices=("on", "off"),
        default="on",
        help="off: descriptions are never summarised, in either system (compares retrieval on equal graphs)",
    )
    parser.add_argument(
        "--upstream",
        choices=("sequential", "parallel", "both"),
        default="sequential",
        help="upstream one document and one call at a time, with its default parallelism, or both"
        " (both: each is compared with lightrag_pg, and the two with each other)",
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where upstream's virtualenv lives")
    parser.add_argument("--out", type=Path, default=None, help="write per-query details (JSON) here")
    args = parser.parse_args()

    python = upstream_python(args.cache)
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    paths = [f"doc-{i:04d}.txt" for i in range(len(texts))]
    llm = SharedLLM(vocab)
    queries = plan(questions(args.questions, texts, vocab, seed=args.seed + 1), llm)
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache(args.cache))}
    settings = NO_SUMMARIES if args.summaries == "off" else {}
    runs = ("sequential", "parallel") if args.upstream == "both" else (args.upstream,)
    timings: dict[str, float] = {}
    upstream: dict[str, tuple[list[dict[str, Any]], Graph, list[Distances]]] = {}
    with embedded_server() as (dsn, pg_env), tempfile.TemporaryDirectory(prefix="lightrag-diff-") as tmp:
        started = time.perf_counter()
        ours, our_graph, our_distances = asyncio.run(
            run_ours(dsn, texts, paths, queries, llm, args.embedding, settings)
        )
        timings["lightrag_pg"] = time.perf_counter() - started
        for run in runs:
            started = time.perf_counter()
            results, graph, workspace = run_upstream(
                python,
                {**env, **pg_env},
                Path(tmp),
                texts,
                paths,
                queries,
                llm,
                args.embedding,
                settings,
                parallel=run == "parallel",
            )
            timings[f"upstream {run}"] = time.perf_counter() - started
            distances = asyncio.run(upstream_distances(dsn, workspace, queries, args.embedding))
            upstream[run] = (results, graph, distances)
    print(
        f"{args.docs} docs x ~{args.words} words, {args.questions} questions x {len(MODES)} modes, "
        f"{args.embedding} embedding, summaries {args.summaries}, lexical search off; "
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        + f" (upstream {UPSTREAM_VERSION}); load {os.getloadavg()}"
    )
    if llm.untranslated:
        unknown = llm.untranslated
        print(f"warning: {len(unknown)} upstream prompts not recognised, e.g. {unknown[0]!r}")
    ours_views = [View(our_graph, od, retrieved(a)) for a, od in zip(ours, our_distances, strict=True)]
    tables: dict[str, list[Comparison]] = {}
    for run, (theirs, their_graph, their_distances) in upstream.items():
        theirs_views = [
            View(their_graph, td, retrieved(b), strict=True)
            for b, td in zip(theirs, their_distances, strict=True)
        ]
        tables[f"lightrag_pg against upstream {run}"] = [
            Comparison.of(q, o, t) for q, o, t in zip(queries, ours_views, theirs_views, strict=True)
        ]
        if run == "parallel" and "sequential" in upstream:
            seq, seq_graph, seq_distances = upstream["sequential"]
            seq_views = [
                View(seq_graph, td, retrieved(b), strict=True)
                for b, td in zip(seq, seq_distances, strict=True)
            ]
            tables["upstream sequential against upstream parallel"] = [
                Comparison.of(q, a, t) for q, a, t in zip(queries, seq_views, theirs_views, strict=True)
            ]
    for title, comparisons in tables.items():
        print(f"== {title}")
        report(comparisons)
        report_causes(comparisons)
    comparisons = next(iter(tables.values()))
    their_graph = next(iter(upstream.values()))[1]
    rows, returned = boundary_rows(comparisons)
    print(
        f"rows at exactly distance 1 - threshold ({1 - COSINE_THRESHOLD:g}), where <= and < part:"
        f" {rows} over all queries, {returned} of them returned by lightrag_pg"
    )
    print("indexed graphs:", *compare_graphs(our_graph, their_graph), sep="\n  ")
    if args.out:
        args.out.write_text(json.dumps(details(comparisons), indent=1, default=str))


if __name__ == "__main__":
    main()
