"""Run upstream LightRAG (``lightrag-hku``) for the differential benchmark.

This script runs with the Python of a separate virtualenv holding
``lightrag-hku``; it imports nothing from lightrag_pg, and lightrag_pg never
imports it. ``bench/common.py`` starts it and drives it over two pipes
of JSON lines (file descriptors given on the command line):

* the runner asks, the harness answers: ``{"kind": "llm", "id", "prompt", "system_prompt",
  "history"}`` (the contents of the earlier turns sent with the prompt)
  gets ``{"id", "answer"}``, ``{"kind": "embed", "id", "texts"}`` gets ``{"id", "vectors"}``,
  so both systems get their LLM answers and embeddings from the same code; several
  requests may be in flight, each answer names the request it answers;
* the runner reports ``{"kind": "inserted", "doc"}`` after each document,
  ``{"kind": "graph", "entities", "relations"}`` once all are in,
  ``{"kind": "result", "index", "data"}`` after each query, and
  ``{"kind": "done"}`` or ``{"kind": "error", "message"}`` at the end.

The job (workspace, documents, queries, the answer-prompt templates both
systems budget against, and settings such as the summary thresholds) is a JSON file. ``"storage"``
picks upstream's storages: ``postgres`` (the default: its ``LIGHTRAG_*`` tables and an AGE
graph), ``pgtable`` (the same tables with its plain-table graph) or ``files`` (its default JSON,
nano-vectordb and GraphML files in the working directory). The database comes
from upstream's own ``POSTGRES_*`` environment variables, set by the harness. A job without
documents only queries what the working directory or database already holds.
Documents are inserted one at a time, with one LLM and one embedding call in
flight, so the result does not depend on scheduling; with ``"parallel": true`` in the
job they are inserted in one call with upstream's default parallelism instead (its
descriptions then depend on timing, as they do for its users).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import traceback
from typing import Any

import numpy as np
from lightrag import LightRAG, QueryParam
from lightrag.prompt import PROMPTS
from lightrag.utils import EmbeddingFunc

STORAGES: dict[str, dict[str, str]] = {
    "postgres": {
        "kv_storage": "PGKVStorage",
        "vector_storage": "PGVectorStorage",
        "graph_storage": "PGGraphStorage",
        "doc_status_storage": "PGDocStatusStorage",
    },
    "pgtable": {
        "kv_storage": "PGKVStorage",
        "vector_storage": "PGVectorStorage",
        "graph_storage": "PGTableGraphStorage",
        "doc_status_storage": "PGDocStatusStorage",
    },
    "files": {
        "kv_storage": "JsonKVStorage",
        "vector_storage": "NanoVectorDBStorage",
        "graph_storage": "NetworkXStorage",
        "doc_status_storage": "JsonDocStatusStorage",
    },
}


class Channel:
    """Request/answer exchange with the harness over two pipes; requests may overlap."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self._out = os.fdopen(write_fd, "w", encoding="utf-8")
        self._in = os.fdopen(read_fd, "r", encoding="utf-8")
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def send(self, message: dict[str, Any]) -> None:
        """Send one message."""
        with self._lock:
            self._out.write(json.dumps(message) + "\n")
            self._out.flush()

    def start(self) -> None:
        """Read answers on a thread, handing each to the request it names."""
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._loop is not None
        for line in self._in:
            answer = json.loads(line)
            self._loop.call_soon_threadsafe(self._resolve, answer)
        self._loop.call_soon_threadsafe(self._resolve, None)

    def _resolve(self, answer: dict[str, Any] | None) -> None:
        if answer is None:
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(RuntimeError("the harness closed the channel"))
            return
        future = self._waiting.pop(answer["id"], None)
        if future is not None and not future.done():
            future.set_result(answer)

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its answer (other requests may be answered meanwhile)."""
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self.send({**message, "id": request_id})
        return await future


def build(job: dict[str, Any], channel: Channel) -> LightRAG:
    """An upstream LightRAG on its PostgreSQL storages, answering through ``channel``."""

    async def llm(
        prompt: str, system_prompt: str | None = None, history_messages: Any = None, **_: Any
    ) -> str:
        history = [str(m.get("content", "")) for m in history_messages or ()]
        message = {"kind": "llm", "prompt": prompt, "system_prompt": system_prompt, "history": history}
        answer = await channel.ask(message)
        return answer["answer"]

    async def embed(texts: list[str], **_: Any) -> np.ndarray:
        vectors = (await channel.ask({"kind": "embed", "texts": list(texts)}))["vectors"]
        return np.asarray(vectors, dtype=np.float32)

    serial: dict[str, Any] = {
        "llm_model_max_async": 1,
        "embedding_func_max_async": 1,
        "max_parallel_insert": 1,
    }
    if job.get("parallel"):
        serial = {}
    return LightRAG(
        working_dir=job["working_dir"],
        workspace=job["workspace"],
        **STORAGES[job.get("storage", "postgres")],
        llm_model_func=llm,
        embedding_func=EmbeddingFunc(
            embedding_dim=job["embedding_dim"], func=embed, model_name=job["embedding_name"]
        ),
        enable_llm_cache=True,
        **serial,
        **job.get("settings", {}),
    )


async def run(job: dict[str, Any], channel: Channel) -> None:
    """Insert the documents (one by one, or all at once in parallel), then answer every
    query with ``aquery_data``."""
    PROMPTS.update(job["prompts"])
    channel.start()
    rag = build(job, channel)
    await rag.initialize_storages()
    try:
        if job.get("parallel") and job["documents"]:
            docs = job["documents"]
            await rag.ainsert([d["text"] for d in docs], file_paths=[d["file_path"] for d in docs])
        else:
            for doc in job["documents"]:
                await rag.ainsert(doc["text"], file_paths=doc["file_path"])
                channel.send({"kind": "inserted", "doc": doc["file_path"]})
        graph = rag.chunk_entity_relation_graph
        nodes = await graph.get_all_nodes()
        edges = await graph.get_all_edges()
        channel.send(
            {
                "kind": "graph",
                "entities": [[n["entity_id"], n.get("entity_type"), n.get("description")] for n in nodes],
                "relations": [
                    [e["source"], e["target"], e.get("weight"), e.get("keywords"), e.get("description")]
                    for e in edges
                ],
            }
        )
        for index, query in enumerate(job["queries"]):
            param = QueryParam(
                mode=query["mode"],
                hl_keywords=list(query["hl_keywords"]),
                ll_keywords=list(query["ll_keywords"]),
                enable_rerank=False,
            )
            data = await rag.aquery_data(query["question"], param)
            channel.send({"kind": "result", "index": index, "data": data})
    finally:
        await rag.finalize_storages()


def main() -> None:
    """``upstream_runner.py JOB_FILE WRITE_FD READ_FD``."""
    job_file, write_fd, read_fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(job_file, encoding="utf-8") as handle:
        job = json.load(handle)
    channel = Channel(write_fd, read_fd)
    try:
        asyncio.run(run(job, channel))
    except BaseException as exc:
        channel.send({"kind": "error", "message": f"{exc!r}\n{traceback.format_exc()}"})
        raise
    channel.send({"kind": "done"})


if __name__ == "__main__":
    main()
