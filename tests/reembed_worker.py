"""A separate process that re-embeds a workspace, for the crash test.

Run as ``python -m tests.reembed_worker '<json>'`` from the repository root,
with a JSON object holding ``dsn``, ``workspace``, ``old_dim``, ``new_dim``,
``batch_size``, ``log`` (a file to which each completed embedding call
appends one JSON line: its texts) and ``hang_at`` (the embedding call, from
1, that never returns, so the process can be killed there).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from lightrag_pg import EmbeddingFunc, LightRAG
from lightrag_pg.testing import hashed_embedding_func, hashed_vectors, scripted_llm


async def main(spec: dict[str, Any]) -> int:
    log = Path(spec["log"])
    calls = 0

    async def embed(texts: list[str]) -> np.ndarray:
        nonlocal calls
        calls += 1
        if calls == spec["hang_at"]:
            await asyncio.sleep(3600)
        vectors = hashed_vectors(texts, spec["new_dim"])
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(texts) + "\n")
        return vectors

    new = EmbeddingFunc(embedding_dim=spec["new_dim"], func=embed, model_name=f"hashed-bow-{spec['new_dim']}")
    rag = LightRAG(
        dsn=spec["dsn"],
        workspace=spec["workspace"],
        llm_model_func=scripted_llm,
        embedding_func=hashed_embedding_func(spec["old_dim"]),
    )
    async with rag:
        result = await rag.areembed(new, batch_size=spec["batch_size"])
    print(json.dumps({"event": "done", "embedded": result.embedded}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(json.loads(sys.argv[1]))))
