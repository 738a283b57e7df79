"""A separate process deleting documents or merging entities, for the crash tests.

Run as ``python -m tests.graph_op_worker '<json>'`` from the repository root, with
a JSON object holding ``dsn``, ``workspace``, ``op`` (``"delete"`` with ``ids``,
or ``"merge"`` with ``sources`` and ``target``), ``settings`` (LightRAG keyword
settings) and ``pause``: ``"embed"`` blocks the first vector computation (before
the operation's transaction opens), ``"write"`` blocks right after its relation
rows were written (inside the open transaction). At the pause the worker prints
``{"event": "paused"}`` and waits to be killed; without one it runs to the end.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from lightrag_pg import LightRAG
from lightrag_pg.index.writer import GraphWriter
from lightrag_pg.store.graph import GraphStore
from lightrag_pg.testing import hashed_embedding_func, scripted_llm


async def hang() -> None:
    print(json.dumps({"event": "paused"}), flush=True)
    await asyncio.Event().wait()


def install_pause(point: str | None) -> None:
    """Make the operation block at ``point`` (see the module docstring)."""
    if point == "embed":
        changed_vectors = GraphWriter.changed_vectors

        async def blocked_embed(self: GraphWriter, *args: Any) -> Any:
            await hang()
            return await changed_vectors(self, *args)

        GraphWriter.changed_vectors = blocked_embed  # type: ignore[method-assign]
    elif point == "write":
        upsert = GraphStore.upsert_relations_if_unchanged

        async def blocked_write(self: GraphStore, rows: Any) -> Any:
            written = await upsert(self, rows)
            await hang()
            return written

        GraphStore.upsert_relations_if_unchanged = blocked_write  # type: ignore[method-assign]
    elif point is not None:
        raise ValueError(f"unknown pause point {point!r}")


async def main(spec: dict[str, Any]) -> None:
    install_pause(spec.get("pause"))
    rag = LightRAG(
        dsn=spec["dsn"],
        workspace=spec["workspace"],
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(),
        **spec.get("settings", {}),
    )
    async with rag:
        if spec["op"] == "delete":
            await rag.adelete_by_doc_id(spec["ids"])
        else:
            await rag.amerge_entities(spec["sources"], spec["target"])
    print(json.dumps({"event": "done"}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
