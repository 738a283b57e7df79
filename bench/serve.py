"""HTTP load on ``lightrag-pg serve``: concurrent ``/query/data`` clients, alone and during uploads.

The server runs in its own process (uvicorn, the app of ``lightrag_pg.server``)
with the instant corpus LLM and hashed embeddings, so the figures are those of
the server, lightrag_pg and PostgreSQL. The bench workspace is built through
``/documents/texts``; then ``--clients`` clients call ``/query/data`` for
``--seconds``, first alone, then beside ``--long-clients`` clients asking
100,000-character questions (the ordinary clients' p95 against the run alone), then
while ``--uploads`` files are uploaded through ``/documents/upload`` and indexed.
``--fairness`` runs another phase instead: workspace B receives ``--small-docs``
one-line documents, one every ``--small-interval`` seconds, first alone, then
while workspace A indexes ``--big-docs`` texts of ``--big-mb`` MB; it reports B's
time from upload to ``processed`` in both, their ratio, and how often A's
``pipeline_status`` message moved.
Every run reports how long the server took to exit after SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import asyncpg
import httpx
import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import choose_embedding, database, workspace_name
from bench.corpus import CorpusLLM, document, documents, questions, vocabulary
from lightrag_pg import LightRAG
from lightrag_pg.db.embedded import DSN_ENV
from lightrag_pg.db.workspace import drop_workspace, workspace_exists

MODES = ("mix", "local", "global", "hybrid", "naive")


def serve(args: argparse.Namespace) -> None:
    """The server process: uvicorn with the corpus LLM (``--role server``)."""
    import uvicorn

    from lightrag_pg.db.pool import SharedPool
    from lightrag_pg.server import ServerSettings, create_app

    vocab = vocabulary(seed=args.seed)
    offline = args.extractor == "nlp"
    embedding = choose_embedding("local" if offline else "hashed")

    def factory(workspace: str, pool: SharedPool) -> LightRAG:
        if offline:
            return LightRAG(workspace=workspace, embedding_func=embedding, extractor="nlp", pool=pool)
        return LightRAG(
            workspace=workspace, llm_model_func=CorpusLLM(vocab), embedding_func=embedding, pool=pool
        )

    settings = ServerSettings(
        dsn=args.dsn,
        default_workspace=args.workspace,
        port=args.port,
        input_dir=Path(args.input_dir),
        pool_size=args.pool,
        workspace_pool_size=args.share,
        allow_create=True,
    )
    uvicorn.run(create_app(settings, factory), host="127.0.0.1", port=args.port, log_level="warning")


@dataclass
class Load:
    """Latencies (ms) and errors of one load phase."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def report(self, label: str) -> str:
        lat = np.array(self.latencies_ms or [0.0])
        return (
            f"{label:<28}{len(self.latencies_ms) / self.seconds:>8.1f} req/s"
            f"   p50 {np.percentile(lat, 50):7.1f} ms   p95 {np.percentile(lat, 95):7.1f} ms"
            f"   p99 {np.percentile(lat, 99):7.1f} ms   errors {len(self.errors)}"
        )


async def query_load(url: str, asked: list[str], clients: int, seconds: float) -> Load:
    """``clients`` loops calling ``/query/data`` until ``seconds`` have passed."""
    load = Load()
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:

        async def one_client(index: int) -> None:
            rng = random.Random(index)
            while time.perf_counter() < deadline:
                body = {"query": rng.choice(asked), "mode": rng.choice(MODES)}
                started = time.perf_counter()
                try:
                    response = await client.post("/query/data", json=body)
                    if response.status_code != 200:
                        load.errors.append(f"{response.status_code}: {response.text[:200]}")
                        continue
                except httpx.HTTPError as exc:
                    load.errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                load.latencies_ms.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(one_client(i) for i in range(clients)))
        load.seconds = time.perf_counter() - started
    return load


LONG_QUESTION_CHARS = 100_000


async def long_question_load(url: str, texts: list[str], clients: int, seconds: float) -> Load:
    """``clients`` loops asking ``/query/data`` new 100,000-character questions (slices of
    the corpus, as pasted text) until ``seconds`` have passed."""
    load = Load()
    whole = "\n\n".join(texts)
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:

        async def one_client(index: int) -> None:
            rng = random.Random(f"long:{index}")
            while time.perf_counter() < deadline:
                start = rng.randrange(len(whole) - LONG_QUESTION_CHARS)
                body = {"query": whole[start : start + LONG_QUESTION_CHARS], "mode": "mix"}
                started = time.perf_counter()
                try:
                    response = await client.post("/query/data", json=body)
                except httpx.HTTPError as exc:
                    load.errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                if response.status_code != 200:
                    load.errors.append(f"{response.status_code}: {response.text[:200]}")
                    continue
                load.latencies_ms.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(one_client(i) for i in range(clients)))
        load.seconds = time.perf_counter() - started
    return load


async def beside_long_questions(
    url: str, asked: list[str], texts: list[str], args: argparse.Namespace, alone: Load
) -> None:
    """The ordinary clients again, beside ``--long-clients`` clients asking long questions;
    prints both and the ordinary clients' p95 as a multiple of theirs alone."""
    ordinary, long = await asyncio.gather(
        query_load(url, asked, args.clients, args.seconds),
        long_question_load(url, texts, args.long_clients, args.seconds),
    )
    print(ordinary.report(f"  beside {args.long_clients} long questions"))
    print(long.report(f"  {args.long_clients} x {LONG_QUESTION_CHARS:,} chars"))
    p95_alone = float(np.percentile(alone.latencies_ms or [0.0], 95))
    p95_beside = float(np.percentile(ordinary.latencies_ms or [0.0], 95))
    print(f"ordinary p95 beside long questions: x{p95_beside / max(p95_alone, 1e-9):.2f} of alone")
    for error in (ordinary.errors + long.errors)[:5]:
        print(f"error: {error}")


async def wait_processed(client: httpx.AsyncClient, count: int, timeout: float) -> float:
    """Seconds until ``count`` documents are processed (or failed); raises on timeout."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        counts = (await client.get("/documents/status_counts")).json()["status_counts"]
        if counts.get("processed", 0) + counts.get("failed", 0) >= count:
            if counts.get("failed"):
                raise RuntimeError(f"{counts['failed']} documents failed")
            return time.perf_counter() - started
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{count} documents not processed after {timeout} s")


async def upload_all(url: str, texts: list[str]) -> float:
    """Upload ``texts`` as files, four at a time; the seconds it took to send them."""
    started = time.perf_counter()
    gate = asyncio.Semaphore(4)
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:

        async def one(i: int, text: str) -> None:
            async with gate:
                files = {"file": (f"upload_{i:03d}.txt", text.encode())}
                response = await client.post("/documents/upload", files=files)
                response.raise_for_status()

        await asyncio.gather(*(one(i, t) for i, t in enumerate(texts)))
    return time.perf_counter() - started


async def drive(args: argparse.Namespace, url: str) -> None:
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs + args.uploads, args.words, args.seed, vocab)
    base, extra = texts[: args.docs], texts[args.docs :]
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        started = time.perf_counter()
        for i in range(0, len(base), 50):
            (await client.post("/documents/texts", json={"texts": base[i : i + 50]})).raise_for_status()
        await wait_processed(client, args.docs, timeout=3600)
        built = time.perf_counter() - started
        print(f"built {args.docs} docs x ~{args.words} words through the API in {built:.1f} s")
    asked = questions(2000, base, vocab, seed=args.seed + 1)
    alone = await query_load(url, asked, args.clients, args.seconds)
    print(alone.report(f"/query/data, {args.clients} clients"))
    if args.long_clients:
        await beside_long_questions(url, asked, base, args, alone)

    async def uploads() -> tuple[float, float]:
        sent = await upload_all(url, extra)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            indexed = await wait_processed(client, args.docs + args.uploads, timeout=3600)
        return sent, sent + indexed

    upload_task = asyncio.create_task(uploads())
    during = await query_load(url, asked, args.clients, args.seconds)
    sent, indexed = await upload_task
    print(during.report(f"  during {args.uploads} uploads"))
    print(f"{args.uploads} uploads sent in {sent:.1f} s, all indexed after {indexed:.1f} s")
    for error in (alone.errors + during.errors)[:5]:
        print(f"error: {error}")


async def watch_messages(client: httpx.AsyncClient, stop: asyncio.Event) -> list[float]:
    """Times at which the default workspace's ``pipeline_status`` message changed, until ``stop``."""
    changes: list[float] = []
    last = None
    while not stop.is_set():
        message = (await client.get("/documents/pipeline_status")).json()["latest_message"]
        if message != last:
            changes.append(time.perf_counter())
            last = message
        await asyncio.sleep(0.25)
    return changes


async def small_documents(
    client: httpx.AsyncClient, texts: list[str], headers: dict[str, str], interval: float
) -> np.ndarray:
    """Post ``texts`` one every ``interval`` seconds; each one's seconds from the upload to
    the ``updated_at`` of its ``processed`` status (one status poll every half second for
    all of them, so polling neither loads the server nor rounds the figures)."""
    posted: dict[str, float] = {}

    async def one(i: int) -> None:
        await asyncio.sleep(i * interval)
        began = time.time()
        response = await client.post("/documents/text", json={"text": texts[i]}, headers=headers)
        posted[response.json()["track_id"]] = began

    await asyncio.gather(*(one(i) for i in range(len(texts))))
    while True:
        body = {"page_size": 200, "sort_field": "created_at", "sort_direction": "desc"}
        docs = (await client.post("/documents/paginated", json=body, headers=headers)).json()["documents"]
        mine = [d for d in docs if d["track_id"] in posted]
        if len(mine) == len(texts) and all(d["status"] in ("processed", "failed") for d in mine):
            break
        await asyncio.sleep(0.5)
    if any(d["status"] == "failed" for d in mine):
        raise RuntimeError(f"{sum(d['status'] == 'failed' for d in mine)} documents failed")
    done = [datetime.fromisoformat(d["updated_at"]).timestamp() - posted[d["track_id"]] for d in mine]
    return np.array(done)


def percentiles(label: str, waits: np.ndarray) -> str:
    return (
        f"{label:<34}{len(waits)} docs, time to processed p50 {np.percentile(waits, 50):6.2f} s"
        f"   p95 {np.percentile(waits, 95):6.2f} s   max {waits.max():6.2f} s"
    )


async def fairness(args: argparse.Namespace, url: str) -> None:
    """Workspace B's one-line documents alone, then while workspace A indexes big texts."""
    vocab = vocabulary(seed=args.seed)
    words = int(args.big_mb * 1_000_000 / 6.8)  # about 6.8 characters per generated word
    small = [
        document(10_000 + i, 8, args.seed, vocab).split(". ")[0] + "." for i in range(2 * args.small_docs + 1)
    ]
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:
        health = (await client.get("/health")).json()
        other = {"LIGHTRAG-WORKSPACE": f"{health['configuration']['workspace']}_b"}
        await small_documents(client, small[:1], other, 0)  # loads the models
        alone = await small_documents(client, small[1 : args.small_docs + 1], other, args.small_interval)
        print(percentiles("workspace B alone:", alone))
        started = time.perf_counter()
        size = 0
        for i in range(args.big_docs):
            text = document(i, words, args.seed, vocab)
            size += len(text)
            body = {"text": text, "file_source": f"big_{i}.txt"}
            (await client.post("/documents/text", json=body)).raise_for_status()
        sent = time.perf_counter() - started
        print(f"workspace A: {args.big_docs} texts, {size / 1e6:.1f} MB, sent in {sent:.1f} s")
        while not (await client.get("/documents/pipeline_status")).json()["busy"]:
            await asyncio.sleep(0.2)
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_messages(client, stop))
        during = await small_documents(client, small[args.small_docs + 1 :], other, args.small_interval)
        stop.set()
        changes = await watcher
        status = (await client.get("/documents/pipeline_status")).json()
    print(percentiles("workspace B while A indexes:", during))
    print(f"p95 while A indexes / alone: {np.percentile(during, 95) / np.percentile(alone, 95):.2f}")
    gaps = np.diff(changes) if len(changes) > 1 else np.array([float("nan")])
    print(
        f"A's pipeline_status message changed {len(changes)} times in {changes[-1] - changes[0]:.0f} s, "
        f"longest still {gaps.max():.1f} s; last: {status['latest_message']!r}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=200, help="documents in the bench workspace")
    parser.add_argument("--uploads", type=int, default=50, help="files uploaded during the second phase")
    parser.add_argument("--clients", type=int, default=32, help="concurrent query clients")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each load phase")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument(
        "--long-clients", type=int, default=8, help="clients asking 100,000-character questions (0: none)"
    )
    parser.add_argument("--pool", type=int, default=16, help="connections in the server's shared pool")
    parser.add_argument("--share", type=int, default=8, help="of which one workspace holds at most")
    parser.add_argument("--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else embedded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fairness", action="store_true", help="run the two-workspace phase instead")
    parser.add_argument("--big-docs", type=int, default=8, help="--fairness: texts indexed in workspace A")
    parser.add_argument("--big-mb", type=float, default=10.0, help="--fairness: MB per text of workspace A")
    parser.add_argument(
        "--small-docs", type=int, default=21, help="--fairness: one-line docs for workspace B"
    )
    parser.add_argument("--small-interval", type=float, default=1.0, help="--fairness: seconds between them")
    parser.add_argument(
        "--extractor", choices=("llm", "nlp"), default="llm", help="the corpus LLM, or offline spaCy + MiniLM"
    )
    parser.add_argument("--role", choices=("drive", "server"), default="drive", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--input-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "server":
        serve(args)
        return
    with database(args.dsn) as dsn, tempfile.TemporaryDirectory() as inputs:
        port, workspace = free_port(), workspace_name("bench_serve")
        command = [sys.executable, __file__, "--role", "server", "--dsn", dsn, "--port", str(port)]
        command += ["--workspace", workspace, "--input-dir", inputs]
        command += ["--pool", str(args.pool), "--share", str(args.share), "--seed", str(args.seed)]
        command += ["--extractor", args.extractor]
        server = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            asyncio.run(fairness(args, url) if args.fairness else drive(args, url))
        finally:
            stopping = time.perf_counter()
            server.terminate()
            try:
                server.wait(timeout=120)
                print(f"server exited {time.perf_counter() - stopping:.1f} s after SIGTERM")
            except subprocess.TimeoutExpired:
                server.kill()
                print("server still running 120 s after SIGTERM; killed")
            asyncio.run(_drop(dsn, workspace))
            asyncio.run(_drop(dsn, f"{workspace}_b"))


async def _drop(dsn: str, workspace: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        if await workspace_exists(conn, workspace):
            await drop_workspace(conn, workspace)
    finally:
        await conn.close()


if __name__ == "__main__":
    main()
