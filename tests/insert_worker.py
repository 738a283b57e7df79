"""A separate process that inserts documents, for the crash and concurrency tests.

Run as ``python -m tests.insert_worker '<json>'`` from the repository root, with
a JSON object holding ``dsn``, ``workspace``, ``base_url`` (of the scripted
OpenAI-compatible server), ``texts``, optional ``ids``, ``file_paths``,
``server_embeddings`` (embed through the server too) and ``settings``
(LightRAG keyword settings). Prints one JSON line with what the
insert did, and exits 0 when no document failed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from lightrag_pg import EmbeddingFunc, LightRAG
from lightrag_pg.llm.openai_client import OpenAIChat, OpenAIEmbedding
from lightrag_pg.testing import hashed_embedding_func as embedding_func

SERVER_EMBEDDING_DIM = 64


def server_embedding(base_url: str) -> EmbeddingFunc:
    """Embeddings from the scripted server (so they are delayed like LLM calls)."""
    client = OpenAIEmbedding(
        model="fake-embedding",
        base_url=base_url,
        api_key="test",
        dimensions=SERVER_EMBEDDING_DIM,
        timeout=10.0,
        max_retries=1,
        base_delay=0.01,
    )
    return EmbeddingFunc(embedding_dim=SERVER_EMBEDDING_DIM, func=client, model_name="fake-embedding")


def build_rag(
    dsn: str, workspace: str, base_url: str, *, server_embeddings: bool = False, **settings: Any
) -> LightRAG:
    """The same LightRAG the ``make_rag`` fixture builds, on any workspace.

    With ``server_embeddings`` the embeddings also come from the scripted server.
    """
    chat = OpenAIChat(
        model="fake-model",
        base_url=base_url,
        api_key="test",
        timeout=float(settings.pop("llm_timeout", 10.0)),
        max_retries=int(settings.pop("max_retries", 1)),
        base_delay=0.01,
    )
    settings.setdefault("retry_base_delay", 0.01)
    embed = server_embedding(base_url) if server_embeddings else embedding_func()
    return LightRAG(dsn=dsn, workspace=workspace, llm_model_func=chat, embedding_func=embed, **settings)


async def main(spec: dict[str, Any]) -> int:
    rag = build_rag(
        spec["dsn"],
        spec["workspace"],
        spec["base_url"],
        server_embeddings=bool(spec.get("server_embeddings")),
        **spec.get("settings", {}),
    )
    async with rag:
        print(json.dumps({"event": "ready"}), flush=True)
        result = await rag.ainsert(spec["texts"], spec.get("ids"), spec.get("file_paths"))
        async with rag.session() as s:
            mine = await s.docs.statuses([*result.new_ids, *result.skipped_ids])
    p = result.progress
    print(
        json.dumps(
            {
                "event": "done",
                "new_ids": result.new_ids,
                "skipped_ids": result.skipped_ids,
                "docs_total": p.docs_total,
                "docs_done": p.docs_done,
                "docs_skipped": p.docs_skipped,
                "docs_failed": p.docs_failed,
                "failures": p.failures,
                "statuses": {r.id: r.status.value for r in mine},
            }
        ),
        flush=True,
    )
    return 1 if p.docs_failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(json.loads(sys.argv[1]))))
