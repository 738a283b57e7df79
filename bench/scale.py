"""Scale: bulk-load a synthetic workspace with COPY, build its indexes, time retrieval per mode.

The workspace is created by the project's own migrations, so its tables, keys,
indexes and triggers are the real ones. Before the load every key, index and
foreign key of the workspace is dropped and the AGE mirror triggers are
disabled (their definitions are read back from the catalog first); the rows
go in with binary COPY; then everything is recreated from those definitions
(HNSW indexes timed on their own), the triggers are enabled again and the AGE
graph is filled in two set-based statements that write what the triggers
would have written (``--graph skip`` leaves it empty: retrieval never reads it).

The data: ``--entities`` entities in topics (a vector is its topic's centroid
plus noise), ``--relations`` distinct relations whose endpoints are drawn with
probability proportional to ``(popularity rank + 1) ** -skew`` (a power-law
degree tail of exponent ``1 + 1 / skew``, 2.25 by default), ``--chunks`` chunks
of about ``--chunk-tokens`` tokens in documents of ten chunks. Each entity
lists as many chunks of its topic as it has relations (at most 300, as the
merge caps them) and has a description that grows with its mentions (as
merged descriptions do, up to a summary's length); each relation lists a few
chunks. ``context_tokens`` holds the exact token count of each row's context
line, as the writer stores it, and ``text_chunks.tokens`` the exact count of
each chunk.

Retrieval goes through the real query path, ``LightRAG.aquery_data`` with
keywords given (no LLM); the embedding function returns vectors drawn from
the data: the low-level keywords near an entity chosen with probability
proportional to its popularity, the high-level keywords near one of its
relations, the question near one of its chunks.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lightrag_pg import EmbeddingFunc, LightRAG, QueryParam
from lightrag_pg.config import Settings
from lightrag_pg.db.embedded import DSN_ENV, embedded_dsn, server_status, stop_server
from lightrag_pg.db.identifiers import graph_name, graph_of, schema_of
from lightrag_pg.db.sqlfile import load_queries, render
from lightrag_pg.db.workspace import create_workspace, drop_workspace, workspace_exists
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.store.rows import entity_context_line, relation_context_line

SQL = load_queries("bench", "scale.sql")

MODES: tuple[str, ...] = ("local", "global", "hybrid", "mix", "naive")
FULL = {"entities": 1_000_000, "relations": 3_000_000, "chunks": 300_000, "dim": 384}
QUICK = {"entities": 1_000, "relations": 3_000, "chunks": 300, "dim": 384}
ENTITY_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "CONCEPT", "TECHNOLOGY", "PRODUCT", "CATEGORY")
CHUNKS_PER_DOC = 10
MAX_SOURCE_IDS = 300
BATCH = 20_000
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "an", "el", "or", "is", "um", "ba", "de")


def _words(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` distinct lower-case pseudo-words of two to four syllables."""
    found: dict[str, None] = {}
    while len(found) < count:
        length = int(rng.integers(2, 5))
        found["".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), length))] = None
    return np.array(list(found), dtype=object)


@dataclass
class Text:
    """A long space-separated text of pseudo-words and the exact token count of any slice of it.

    A slice of whole words costs the tokens of its first word plus those of
    `` word`` for each later one: each space-led word is its own pre-token.
    """

    text: str
    starts: np.ndarray  # character offset of every word, and the text's length + 1 at the end
    spaced: np.ndarray  # cumulative tokens of " word" up to each word
    bare: np.ndarray  # tokens of each word without its leading space

    @classmethod
    def build(cls, rng: np.random.Generator, words: int, vocabulary: np.ndarray, tokenizer: Any) -> Text:
        """A text of ``words`` words drawn from ``vocabulary`` with a Zipf-like frequency."""
        weights = 1.0 / np.arange(1, len(vocabulary) + 1)
        picks = rng.choice(len(vocabulary), size=words, p=weights / weights.sum())
        chosen = vocabulary[picks]
        lengths = np.fromiter((len(w) for w in chosen), dtype=np.int64, count=words)
        starts = np.concatenate(([0], np.cumsum(lengths + 1)))
        spaced_counts = np.array([tokenizer.count(" " + w) for w in vocabulary], dtype=np.int64)
        bare_counts = np.array([tokenizer.count(w) for w in vocabulary], dtype=np.int64)
        return cls(
            " ".join(chosen),
            starts,
            np.concatenate(([0], np.cumsum(spaced_counts[picks]))),
            bare_counts[picks],
        )

    @property
    def words(self) -> int:
        return len(self.starts) - 1

    def words_for(self, tokens: int) -> int:
        """How many words make about ``tokens`` tokens in this text."""
        return max(1, round(tokens * self.words / int(self.spaced[-1])))

    def piece(self, first: int, count: int) -> tuple[str, int]:
        """Words ``first`` .. ``first + count - 1`` and their exact token count."""
        first %= self.words - count
        tokens = int(self.spaced[first + count] - self.spaced[first + 1] + self.bare[first])
        return self.text[self.starts[first] : self.starts[first + count] - 1], tokens


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _noisy(rng: np.random.Generator, base: np.ndarray, scale: float) -> np.ndarray:
    noise = rng.standard_normal(base.shape).astype(np.float32) * (scale / np.sqrt(base.shape[-1]))
    return _unit(base + noise)


def _md5(prefix: str, seed: int, i: int) -> str:
    return prefix + hashlib.md5(f"{seed}:{prefix}{i}".encode()).hexdigest()


def _windows(
    rng: np.random.Generator, topics: np.ndarray, counts: np.ndarray, members: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """For each item: ``counts[i]`` distinct members of its topic, a window at a random offset."""
    out = []
    for topic, count in zip(topics.tolist(), counts.tolist(), strict=True):
        pool = members[topic]
        k = min(count, len(pool))
        start = int(rng.integers(len(pool)))
        out.append(pool[(start + np.arange(k)) % len(pool)])
    return out


@dataclass
class Workspace:
    """The generated data: everything the tables and the queries need."""

    seed: int
    dim: int
    names: np.ndarray
    topics: np.ndarray
    entity_vectors: np.ndarray
    centroids: np.ndarray
    popularity: np.ndarray  # probability of each entity being an endpoint (and a query's anchor)
    src: np.ndarray
    tgt: np.ndarray
    mentions: np.ndarray  # per relation: chunks it was extracted from
    degree: np.ndarray
    chunk_topics: np.ndarray
    chunk_members: list[np.ndarray]
    chunk_ids: list[str]
    entity_sources: list[np.ndarray] = field(default_factory=list)
    relation_sources: list[np.ndarray] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return len(self.chunk_ids)


def _relation_pairs(
    rng: np.random.Generator, order: np.ndarray, popularity: np.ndarray, wanted: int
) -> tuple[np.ndarray, np.ndarray]:
    """``wanted`` distinct unordered pairs of entities drawn by popularity, as (src, tgt) with
    src before tgt in byte order of their names (``order``: each entity's rank in that order)."""
    cumulative = np.cumsum(popularity)
    cumulative /= cumulative[-1]
    n = len(popularity)
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < wanted:
        draw = int((wanted - len(keys)) * 1.3) + 16
        a = np.searchsorted(cumulative, rng.random(draw), side="right").clip(0, n - 1)
        b = np.searchsorted(cumulative, rng.random(draw), side="right").clip(0, n - 1)
        a, b = a[a != b], b[a != b]
        low = np.where(order[a] < order[b], a, b)
        high = np.where(order[a] < order[b], b, a)
        keys = np.unique(np.concatenate((keys, low.astype(np.int64) * n + high)))
    keys = rng.permutation(keys)[:wanted]
    return (keys // n).astype(np.int64), (keys % n).astype(np.int64)


def generate(entities: int, relations: int, chunks: int, dim: int, skew: float, seed: int) -> Workspace:
    """Draw the workspace's structure (names, topics, vectors, edges, sources); texts come later."""
    rng = np.random.default_rng(seed)
    if relations > entities * (entities - 1) // 2:
        raise SystemExit("more relations than entity pairs")
    topic_count = max(4, entities // 500)
    centroids = _unit(rng.standard_normal((topic_count, dim)).astype(np.float32))
    topics = rng.integers(0, topic_count, entities)
    entity_vectors = np.empty((entities, dim), dtype=np.float32)
    for lo in range(0, entities, 100_000):
        hi = min(lo + 100_000, entities)
        entity_vectors[lo:hi] = _noisy(rng, centroids[topics[lo:hi]], 1.0)
    vocabulary = _words(rng, 4000)
    first = vocabulary[rng.integers(0, len(vocabulary), entities)]
    second = vocabulary[rng.integers(0, len(vocabulary), entities)]
    names = np.array(
        [
            f"{a.capitalize()} {b.capitalize()} {i}"
            for i, (a, b) in enumerate(zip(first, second, strict=True))
        ],
        dtype=object,
    )
    order = np.empty(entities, dtype=np.int64)
    order[sorted(range(entities), key=lambda i: names[i].encode())] = np.arange(entities)
    rank = rng.permutation(entities)
    popularity = (rank + 1.0) ** -skew
    popularity /= popularity.sum()
    src, tgt = _relation_pairs(rng, order, popularity, relations)
    degree = np.bincount(src, minlength=entities) + np.bincount(tgt, minlength=entities)
    mentions = 1 + rng.geometric(0.6, relations) - 1
    chunk_topics = rng.integers(0, topic_count, chunks)
    chunk_topics[:topic_count] = np.arange(min(topic_count, chunks))  # every topic has a chunk
    members = [np.flatnonzero(chunk_topics == t) for t in range(topic_count)]
    empty = [t for t, m in enumerate(members) if len(m) == 0]
    for t in empty:
        members[t] = np.array([t % chunks])
    ws = Workspace(
        seed,
        dim,
        names,
        topics,
        entity_vectors,
        centroids,
        popularity,
        src,
        tgt,
        mentions,
        degree,
        chunk_topics,
        members,
        [_md5("chunk-", seed, i) for i in range(chunks)],
    )
    ws.entity_sources = _windows(rng, topics, np.clip(degree, 1, MAX_SOURCE_IDS), members)
    ws.relation_sources = _windows(rng, topics[src], np.clip(mentions, 1, MAX_SOURCE_IDS), members)
    return ws


def chunk_vectors(ws: Workspace, lo: int, hi: int) -> np.ndarray:
    """Vectors of chunks ``lo`` .. ``hi - 1`` (deterministic per batch)."""
    rng = np.random.default_rng((ws.seed, 1, lo))
    return _noisy(rng, ws.centroids[ws.chunk_topics[lo:hi]], 1.0)


def relation_vectors(ws: Workspace, lo: int, hi: int) -> np.ndarray:
    """Vectors of relations ``lo`` .. ``hi - 1``: near both endpoints (deterministic per batch)."""
    rng = np.random.default_rng((ws.seed, 2, lo))
    both = ws.entity_vectors[ws.src[lo:hi]] + ws.entity_vectors[ws.tgt[lo:hi]]
    return _noisy(rng, both, 1.0)


@dataclass
class Timings:
    """Seconds spent per step, in order."""

    steps: list[tuple[str, float]] = field(default_factory=list)

    def add(self, name: str, started: float) -> float:
        now = time.perf_counter()
        self.steps.append((name, now - started))
        print(f"  {name:<48}{now - started:>9.1f} s", flush=True)
        return now


class Loader:
    """Writes the generated rows with binary COPY, batch by batch."""

    def __init__(
        self,
        conn: asyncpg.Connection,
        workspace: str,
        ws: Workspace,
        text: Text,
        tokenizer: Any,
        chunk_words: int,
    ) -> None:
        self.conn, self.schema, self.ws, self.text = conn, workspace, ws, text
        self.tokenizer = tokenizer
        self.chunk_words = chunk_words
        self.rng = np.random.default_rng((ws.seed, 3))
        self.copying = 0.0  # seconds spent waiting on COPY (the rest of a load is generating rows)

    async def copy(self, table: str, columns: Sequence[str], rows: Iterator[list[tuple[Any, ...]]]) -> int:
        written = 0
        for batch in rows:
            started = time.perf_counter()
            await self.conn.copy_records_to_table(
                table, records=batch, columns=list(columns), schema_name=self.schema
            )
            self.copying += time.perf_counter() - started
            written += len(batch)
        return written

    def _file(self, doc: int) -> str:
        return f"corpus/section-{doc // 100:05d}/doc-{doc:07d}.txt"

    def documents(self) -> Iterator[list[tuple[Any, ...]]]:
        """full_docs rows: a document is the text of its ten chunks."""
        docs = (self.ws.chunks + CHUNKS_PER_DOC - 1) // CHUNKS_PER_DOC
        for lo in range(0, docs, BATCH // CHUNKS_PER_DOC):
            batch = []
            for d in range(lo, min(docs, lo + BATCH // CHUNKS_PER_DOC)):
                parts = [
                    self._chunk_text(c)[0]
                    for c in range(d * CHUNKS_PER_DOC, min(self.ws.chunks, (d + 1) * CHUNKS_PER_DOC))
                ]
                batch.append((_md5("doc-", self.ws.seed, d), "\n\n".join(parts), self._file(d)))
            yield batch

    def statuses(self) -> Iterator[list[tuple[Any, ...]]]:
        """doc_status rows: every document processed."""
        docs = (self.ws.chunks + CHUNKS_PER_DOC - 1) // CHUNKS_PER_DOC
        for lo in range(0, docs, BATCH):
            batch = []
            for d in range(lo, min(docs, lo + BATCH)):
                ids = self.ws.chunk_ids[d * CHUNKS_PER_DOC : (d + 1) * CHUNKS_PER_DOC]
                summary = self._chunk_text(d * CHUNKS_PER_DOC)[0][:100]
                batch.append(
                    (
                        _md5("doc-", self.ws.seed, d),
                        "processed",
                        summary,
                        len(ids) * self.chunk_words * 6,
                        len(ids),
                        ids,
                        self._file(d),
                    )
                )
            yield batch

    def _chunk_text(self, c: int) -> tuple[str, int]:
        return self.text.piece(c * 7919, self.chunk_words)

    def chunks(self) -> Iterator[list[tuple[Any, ...]]]:
        """text_chunks rows."""
        for lo in range(0, self.ws.chunks, BATCH):
            batch = []
            for c in range(lo, min(self.ws.chunks, lo + BATCH)):
                content, tokens = self._chunk_text(c)
                d = c // CHUNKS_PER_DOC
                batch.append(
                    (
                        self.ws.chunk_ids[c],
                        _md5("doc-", self.ws.seed, d),
                        c % CHUNKS_PER_DOC,
                        tokens,
                        content,
                        self._file(d),
                    )
                )
            yield batch

    def chunk_vectors(self) -> Iterator[list[tuple[Any, ...]]]:
        """chunk_vectors rows."""
        for lo in range(0, self.ws.chunks, BATCH):
            hi = min(self.ws.chunks, lo + BATCH)
            yield list(zip(self.ws.chunk_ids[lo:hi], chunk_vectors(self.ws, lo, hi), strict=True))

    def _description(self, salt: int, i: int, mentions: int, base: int, per: int, cap: int) -> str:
        """Row ``i``'s description: ``base`` words, ``per`` more per further mention, at most ``cap``."""
        words = min(base + per * (mentions - 1), cap)
        return self.text.piece(i * 104_729 + salt, words)[0]

    def _keywords(self, j: int) -> str:
        return ", ".join(self.text.piece(j * 15_485_863 + 7, 3)[0].split())

    def _sources(self, chunks: np.ndarray) -> tuple[list[str], list[str]]:
        ids = [self.ws.chunk_ids[c] for c in chunks.tolist()]
        files = list(dict.fromkeys(self._file(c // CHUNKS_PER_DOC) for c in chunks.tolist()))
        return ids, files

    def entities(self) -> Iterator[list[tuple[Any, ...]]]:
        """entities rows: descriptions grow with mentions, up to a summary's length; the
        degree is the number of generated relations touching the entity (the relations
        triggers are off during the load)."""
        n = len(self.ws.names)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            rows = []
            for i in range(lo, hi):
                mentions = int(max(1, self.ws.degree[i]))
                kind = ENTITY_TYPES[i % len(ENTITY_TYPES)]
                description = self._description(0, i, mentions, 25, 12, 380)
                ids, files = self._sources(self.ws.entity_sources[i])
                degree = int(self.ws.degree[i])
                rows.append([self.ws.names[i], kind, description, ids, files, mentions, degree])
            lines = [entity_context_line(r[0], r[1], r[2]) for r in rows]
            counts = self.tokenizer.encoding.encode_ordinary_batch(lines, num_threads=1)
            yield [(*r[:6], len(t), r[6]) for r, t in zip(rows, counts, strict=True)]

    def entity_vectors(self) -> Iterator[list[tuple[Any, ...]]]:
        """entity_vectors rows (content: name and description, as embedded)."""
        n = len(self.ws.names)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            rows = []
            for i in range(lo, hi):
                mentions = int(max(1, self.ws.degree[i]))
                content = f"{self.ws.names[i]}\n{self._description(0, i, mentions, 25, 12, 380)}"
                rows.append((self.ws.names[i], content, self.ws.entity_vectors[i]))
            yield rows

    def relations(self) -> Iterator[list[tuple[Any, ...]]]:
        """relations rows, endpoints in byte order of their names."""
        n = len(self.ws.src)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            rows = []
            for j in range(lo, hi):
                mentions = int(self.ws.mentions[j])
                src, tgt = self.ws.names[self.ws.src[j]], self.ws.names[self.ws.tgt[j]]
                description = self._description(1, j, mentions, 18, 10, 200)
                keywords = self._keywords(j)
                weight = float(np.round(self.rng.uniform(1, 10) * mentions, 1))
                ids, files = self._sources(self.ws.relation_sources[j])
                rows.append([src, tgt, keywords, description, weight, ids, files, mentions])
            lines = [relation_context_line(r[0], r[1], r[3]) for r in rows]
            counts = self.tokenizer.encoding.encode_ordinary_batch(lines, num_threads=1)
            yield [(*r, len(t)) for r, t in zip(rows, counts, strict=True)]

    def relation_vectors(self) -> Iterator[list[tuple[Any, ...]]]:
        """relation_vectors rows."""
        n = len(self.ws.src)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            vectors = relation_vectors(self.ws, lo, hi)
            rows = []
            for j in range(lo, hi):
                src, tgt = self.ws.names[self.ws.src[j]], self.ws.names[self.ws.tgt[j]]
                description = self._description(1, j, int(self.ws.mentions[j]), 18, 10, 200)
                content = f"{self._keywords(j)}\t{src}\n{tgt}\n{description}"
                rows.append((src, tgt, content, vectors[j - lo]))
            yield rows


async def deferrable(conn: asyncpg.Connection, workspace: str) -> list[asyncpg.Record]:
    """The workspace's keys, indexes, foreign keys and triggers, in rebuild order."""
    return list(await conn.fetch(SQL["deferrable"], workspace))


async def load(
    conn: asyncpg.Connection,
    workspace: str,
    ws: Workspace,
    text: Text,
    tokenizer: Any,
    chunk_words: int,
    timings: Timings,
) -> None:
    """COPY every table the workspace's retrieval reads (plus documents and their status)."""
    loader = Loader(conn, workspace, ws, text, tokenizer, chunk_words)
    steps = (
        ("full_docs", ("id", "content", "file_path"), loader.documents()),
        (
            "doc_status",
            ("id", "status", "content_summary", "content_length", "chunks_count", "chunks_list", "file_path"),
            loader.statuses(),
        ),
        (
            "text_chunks",
            ("id", "doc_id", "chunk_order_index", "tokens", "content", "file_path"),
            loader.chunks(),
        ),
        ("chunk_vectors", ("chunk_id", "embedding"), loader.chunk_vectors()),
        (
            "entities",
            (
                "name",
                "entity_type",
                "description",
                "source_ids",
                "file_paths",
                "version",
                "context_tokens",
                "degree",
            ),
            loader.entities(),
        ),
        ("entity_vectors", ("name", "content", "embedding"), loader.entity_vectors()),
        (
            "relations",
            (
                "src",
                "tgt",
                "keywords",
                "description",
                "weight",
                "source_ids",
                "file_paths",
                "version",
                "context_tokens",
            ),
            loader.relations(),
        ),
        ("relation_vectors", ("src", "tgt", "content", "embedding"), loader.relation_vectors()),
    )
    for table, columns, rows in steps:
        started = time.perf_counter()
        waited = loader.copying
        written = await loader.copy(table, columns, rows)
        timings.add(f"copy {table} ({written:,} rows; COPY {loader.copying - waited:.1f} s)", started)


async def mirror_graph(conn: asyncpg.Connection, workspace: str, timings: Timings) -> bool:
    """Fill the (empty) AGE graph as the triggers would have; False if the workspace has none."""
    if not await conn.fetchval(render(SQL["graph_enabled"], schema=schema_of(workspace))):
        return False
    labels = {r["name"]: int(r["id"]) for r in await conn.fetch(SQL["label_ids"], graph_name(workspace))}
    names = {
        "schema": schema_of(workspace),
        "graph": graph_of(workspace),
        "vlabel": labels["entity"],
        "elabel": labels["DIRECTED"],
    }
    for block in ("mirror_entities", "mirror_relations"):
        started = time.perf_counter()
        await conn.execute(render(SQL[block], **names))
        timings.add(f"AGE mirror: {block}", started)
    return True


async def build(
    dsn: str, args: argparse.Namespace, ws: Workspace, text: Text, tokenizer: Any, timings: Timings
) -> None:
    """Create the workspace by migration, take its keys, indexes and triggers off, load, put them back."""
    conn = await asyncpg.connect(dsn)
    try:
        if await workspace_exists(conn, args.workspace):
            await drop_workspace(conn, args.workspace)
        started = time.perf_counter()
        await create_workspace(conn, dsn, args.workspace, args.dim, "synthetic")
        started = timings.add("create workspace (migrations)", started)
        await register_vector(conn)
        objects = await deferrable(conn, args.workspace)
        for o in reversed(objects):
            await conn.execute(o["drop_ddl"])
        timings.add(f"drop {len(objects)} keys/indexes/foreign keys, disable triggers", started)
        await conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
        await conn.execute(f"SET max_parallel_maintenance_workers = {int(args.workers)}")
        await conn.execute("SET synchronous_commit = off")
        load_started = time.perf_counter()
        chunk_words = text.words_for(args.chunk_tokens)
        await load(conn, args.workspace, ws, text, tokenizer, chunk_words, timings)
        terms = bool(await conn.fetchval(SQL["has_chunk_terms"], args.workspace))
        if terms:
            started = time.perf_counter()
            await conn.execute(render(SQL["fill_chunk_terms"], schema=schema_of(args.workspace)))
            await conn.execute(render(SQL["fill_corpus_counts"], schema=schema_of(args.workspace)))
            timings.add("chunk_terms and corpus_counts (as the triggers write them)", started)
        timings.add("load total", load_started)
        index_started = time.perf_counter()
        for o in objects:
            started = time.perf_counter()
            await conn.execute(o["create_ddl"])
            timings.add(f"{o['kind']} {o['name']}", started)
        timings.add("index build total", index_started)
        if args.graph == "mirror":
            started = time.perf_counter()
            if await mirror_graph(conn, args.workspace, timings):
                timings.add("AGE mirror total", started)
        started = time.perf_counter()
        await conn.execute(f"VACUUM (ANALYZE) {schema_of(args.workspace).quoted}.relations")
        tables = ("entities", "entity_vectors", "relation_vectors", "text_chunks", "chunk_vectors")
        for table in (*tables, *(("chunk_terms",) if terms else ())):
            await conn.execute(f"VACUUM (ANALYZE) {schema_of(args.workspace).quoted}.{table}")
        timings.add("vacuum analyze", started)
    finally:
        await conn.close()


@dataclass
class Query:
    """One generated question: its anchor entity and its three vectors."""

    key: int
    anchor: int
    ll: np.ndarray
    hl: np.ndarray
    question: np.ndarray


def queries(ws: Workspace, count: int, seed: int) -> list[Query]:
    """Questions drawn from the data: anchors by popularity, vectors near what they are about."""
    rng = np.random.default_rng((seed, 4))
    cumulative = np.cumsum(ws.popularity)
    anchors = np.searchsorted(cumulative / cumulative[-1], rng.random(count), side="right").clip(
        0, len(ws.names) - 1
    )
    touching = {}
    wanted = set(anchors.tolist())
    for j in np.flatnonzero(np.isin(ws.src, anchors) | np.isin(ws.tgt, anchors)).tolist():
        for end in (int(ws.src[j]), int(ws.tgt[j])):
            if end in wanted and end not in touching:
                touching[end] = j
    out = []
    for key, a in enumerate(anchors.tolist()):
        j = touching.get(a, int(rng.integers(len(ws.src))))
        sources = ws.entity_sources[a]
        chunk = int(sources[int(rng.integers(len(sources)))])
        rel = relation_vectors(ws, j, j + 1)[0]
        out.append(
            Query(
                key,
                a,
                _noisy(rng, ws.entity_vectors[a][None, :], 0.5)[0],
                _noisy(rng, rel[None, :], 0.5)[0],
                _noisy(rng, chunk_vectors(ws, chunk, chunk + 1), 0.5)[0],
            )
        )
    return out


def lookup_embedding(dim: int, table: dict[str, np.ndarray]) -> EmbeddingFunc:
    """An embedding function answering from ``table`` (text -> vector); other texts get a fixed vector."""
    fallback = np.zeros(dim, dtype=np.float32)
    fallback[0] = 1.0

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([table.get(t, fallback) for t in texts])

    return EmbeddingFunc(dim, embed, model_name="synthetic")


async def no_llm(prompt: str, **kwargs: object) -> str:
    """Keywords are given with every query; anything asking the LLM is a bug of the bench."""
    raise RuntimeError(f"the scale bench does not answer prompts: {prompt[:60]!r}")


@dataclass
class ModeFigures:
    """Latencies (ms) and result sizes of one mode; ``statement``: the search stage of
    ``aquery_data``'s own timings (connection checkout, the retrieval statement, its rows
    decoded), the rest being Python: keyword plan, embedding look-up, context building."""

    mode: str
    latencies: list[float]
    statement: list[float]
    entities: list[int]
    relations: list[int]
    chunks: list[int]


async def time_queries(
    rag: LightRAG, asked: Sequence[Query], warm: Sequence[Query], mode: str
) -> ModeFigures:
    """Warm up on ``warm``, then time ``aquery_data`` on ``asked`` one at a time."""
    figures = ModeFigures(mode, [], [], [], [], [])
    for timed, batch in ((False, warm), (True, asked)):
        for q in batch:
            i = q.key
            param = QueryParam(
                mode=mode, only_need_context=True, ll_keywords=[f"ll {i}"], hl_keywords=[f"hl {i}"]
            )  # type: ignore[arg-type]
            started = time.perf_counter()
            result = await rag.aquery_data(f"question {i}", param)
            elapsed = (time.perf_counter() - started) * 1000
            if result.get("status") != "success":
                raise RuntimeError(f"{mode} query failed: {result.get('message')}")
            if timed:
                data = result["data"]
                figures.latencies.append(elapsed)
                stages = result["metadata"]["timings_ms"]
                figures.statement.append(stages["search"] - stages["embed"])
                figures.entities.append(len(data.get("entities", [])))
                figures.relations.append(len(data.get("relationships", [])))
                figures.chunks.append(len(data.get("chunks", [])))
    return figures


def embedding_table(qs: Sequence[Query]) -> dict[str, np.ndarray]:
    """The vectors of every query's three texts (keyed as :func:`time_queries` writes them)."""
    table: dict[str, np.ndarray] = {}
    for q in qs:
        i = q.key
        table[f"ll {i}"], table[f"hl {i}"], table[f"question {i}"] = q.ll, q.hl, q.question
    return table


def _mb(n: float) -> str:
    return f"{n / 2**20:,.1f} MB"


def server_memory(data_dir: Path | None) -> str | None:
    """RSS of the embedded server's postmaster and of its largest child process."""
    if data_dir is None:
        return None
    status = server_status(data_dir)
    if status.pid is None:
        return None
    import psutil

    main = psutil.Process(status.pid)
    children = main.children()
    rss = [c.memory_info().rss for c in children]
    return (
        f"postmaster RSS {_mb(main.memory_info().rss)}, {len(children)} children, "
        f"largest child RSS {_mb(max(rss, default=0))}, sum of children RSS {_mb(sum(rss))} "
        "(RSS counts the shared buffers each process touched)"
    )


async def measure(dsn: str, args: argparse.Namespace, ws: Workspace) -> list[ModeFigures]:
    """Time every mode through ``LightRAG.aquery_data``; print sizes, settings and the baseline."""
    asked = queries(ws, args.queries + args.warmup, args.seed)
    warm, timed = asked[: args.warmup], asked[args.warmup :]
    rag = LightRAG(
        dsn=dsn,
        workspace=args.workspace,
        llm_model_func=no_llm,
        embedding_func=lookup_embedding(args.dim, embedding_table(asked)),
    )
    await rag.initialize()
    results = []
    try:
        for mode in MODES:
            results.append(await time_queries(rag, timed, warm, mode))
        async with rag.pool.acquire() as conn:
            search = []
            for q in timed:
                started = time.perf_counter()
                await conn.fetch(SQL["bare_top_k"], q.ll, QueryParam().top_k)
                search.append((time.perf_counter() - started) * 1000)
            counts = await conn.fetchrow(render(SQL["counts"], schema=schema_of(args.workspace)))
            sizes = await conn.fetch(SQL["sizes"], args.workspace, graph_name(args.workspace))
            settings = await conn.fetch(SQL["settings"])
    finally:
        await rag.finalize()
    anchor_degree = ws.degree[[q.anchor for q in timed]]
    print(f"\nrows: {dict(counts)}")
    print(
        f"degree: mean {ws.degree.mean():.1f}, median {np.median(ws.degree):.0f}, "
        f"p99 {np.percentile(ws.degree, 99):.0f}, max {ws.degree.max():,}; "
        f"query anchors: median degree {np.median(anchor_degree):.0f}, max {anchor_degree.max():,}"
    )
    print(
        f"\n{'mode':<8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'stmt p50':>10}{'stmt p95':>10}"
        f"{'entities':>10}{'relations':>11}{'chunks':>8}"
    )
    for f in results:
        print(
            f"{f.mode:<8}{np.percentile(f.latencies, 50):>9.2f}{np.percentile(f.latencies, 95):>9.2f}"
            f"{max(f.latencies):>9.1f}{np.percentile(f.statement, 50):>10.2f}"
            f"{np.percentile(f.statement, 95):>10.2f}{np.mean(f.entities):>10.1f}"
            f"{np.mean(f.relations):>11.1f}{np.mean(f.chunks):>8.1f}"
        )
    print(
        f"bare entity top-k ({QueryParam().top_k}): p50 {np.percentile(search, 50):.2f} ms, "
        f"p95 {np.percentile(search, 95):.2f} ms"
    )
    print("\nsizes (table = heap + TOAST; index size per index):")
    for r in sizes:
        extra = f", indexes {_mb(r['index_bytes'])}" if r["index_bytes"] is not None else ""
        rows = f" ~{r['row_estimate']:,} rows" if (r["row_estimate"] or -1) >= 0 else ""
        print(f"  {r['schema_name']}.{r['name']:<34}{r['kind']:>7} {_mb(r['bytes']):>12}{extra}{rows}")
    print("query session settings: " + ", ".join(f"{r['name']}={r['value']}" for r in settings))
    memory = server_memory(args.data_dir_used)
    if memory:
        print(f"server memory: {memory}")
    return results


def configure_server(data_dir: Path, args: argparse.Namespace) -> str:
    """Start the embedded server in ``data_dir`` with the bench's settings (restarting it once)."""
    dsn = embedded_dsn(data_dir)

    async def alter() -> None:
        conn = await asyncpg.connect(dsn)
        try:
            for name, value in (
                ("shared_buffers", args.shared_buffers),
                ("max_wal_size", "16GB"),
                ("checkpoint_timeout", "30min"),
                ("effective_cache_size", "8GB"),
            ):
                await conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        finally:
            await conn.close()

    asyncio.run(alter())
    stop_server(data_dir)
    return embedded_dsn(data_dir)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=FULL["entities"])
    parser.add_argument("--relations", type=int, default=FULL["relations"])
    parser.add_argument("--chunks", type=int, default=FULL["chunks"])
    parser.add_argument("--dim", type=int, default=FULL["dim"])
    parser.add_argument("--quick", action="store_true", help=f"a smoke test: {QUICK}")
    parser.add_argument(
        "--skew", type=float, default=0.8, help="endpoint popularity exponent (degree tail 1 + 1/skew)"
    )
    parser.add_argument("--chunk-tokens", type=int, default=1100, help="tokens per chunk (whole words)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per mode")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up queries per mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workspace", default="scale_bench")
    parser.add_argument(
        "--graph",
        choices=("mirror", "skip"),
        default="mirror",
        help="fill the AGE mirror after the load, or leave it empty",
    )
    parser.add_argument("--maintenance-work-mem", default="4GB")
    parser.add_argument(
        "--workers", type=int, default=1, help="max_parallel_maintenance_workers for the index builds"
    )
    parser.add_argument("--shared-buffers", default="2GB", help="embedded server only")
    parser.add_argument(
        "--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else an embedded server)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="embedded server's data directory (kept); default a temporary one",
    )
    parser.add_argument(
        "--query-only", action="store_true", help="reuse the built workspace (same sizes and seed)"
    )
    args = parser.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
        args.chunk_tokens, args.queries, args.warmup = 200, 20, 3
    return args


def run(args: argparse.Namespace, dsn: str) -> list[ModeFigures]:
    """Generate, build (unless ``--query-only``) and measure."""
    tokenizer = get_tokenizer(Settings().tokenizer_name)
    timings = Timings()
    print(
        f"scale bench: {args.entities:,} entities, {args.relations:,} relations, {args.chunks:,} chunks, "
        f"dim {args.dim}; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    started = time.perf_counter()
    ws = generate(args.entities, args.relations, args.chunks, args.dim, args.skew, args.seed)
    text = Text.build(
        np.random.default_rng((args.seed, 5)),
        max(200_000, min(args.chunks, 2_000) * args.chunk_tokens),
        _words(np.random.default_rng((args.seed, 6)), 6000),
        tokenizer,
    )
    timings.add("generate structure and vectors", started)
    if not args.query_only:
        asyncio.run(build(dsn, args, ws, text, tokenizer, timings))
    results = asyncio.run(measure(dsn, args, ws))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return results


def main(argv: Sequence[str] | None = None) -> None:
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    args = parse_args(argv)
    args.data_dir_used = None
    dsn = args.dsn or os.environ.get(DSN_ENV)
    if dsn:
        run(args, dsn)
        return
    if args.data_dir is not None:
        args.data_dir_used = args.data_dir.resolve()
        run(args, configure_server(args.data_dir_used, args))
        return
    with tempfile.TemporaryDirectory(prefix="lightrag-pg-scale-") as tmp:
        args.data_dir_used = Path(tmp) / "pgdata"
        try:
            run(args, configure_server(args.data_dir_used, args))
        finally:
            stop_server(args.data_dir_used)


if __name__ == "__main__":
    main()
