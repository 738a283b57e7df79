"""A separate process editing one entity over and over, for the concurrent-edit test.

Run as ``python -m tests.edit_worker DSN WORKSPACE ENTITY FIELD ROUNDS`` from the
repository root: sets ``FIELD`` of ``ENTITY`` to ``"<FIELD> <i>"`` for i in
range(ROUNDS), each edit its own transaction; exits 0 when every edit landed.
"""

from __future__ import annotations

import asyncio
import sys

from lightrag_pg import LightRAG
from lightrag_pg.testing import hashed_embedding_func, scripted_llm


async def edit(dsn: str, workspace: str, entity: str, field: str, rounds: int) -> None:
    rag = LightRAG(
        dsn=dsn, workspace=workspace, llm_model_func=scripted_llm, embedding_func=hashed_embedding_func()
    )
    async with rag:
        for i in range(rounds):
            await rag.aedit_entity(entity, {field: f"{field} {i}"})


if __name__ == "__main__":
    dsn, workspace, entity, field, rounds = sys.argv[1:6]
    asyncio.run(edit(dsn, workspace, entity, field, int(rounds)))
