"""Structured concurrency: an insert leaves nothing running behind it; driver errors are translated."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.db.translate import translated
from lightrag_pg.errors import StorageError
from lightrag_pg.testing import classify_prompt, prompt_input_text, respond
from lightrag_pg.testing import hashed_embedding_func as embedding_func

from .crash_support import drop_if_exists


class Abort(BaseException):
    """Escapes the pipeline's per-document error handling, like a cancellation would."""


async def test_an_insert_that_raises_leaves_no_task_running(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    others_started = asyncio.Event()
    waiting = 0

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        nonlocal waiting
        text = prompt_input_text(prompt) or "" if classify_prompt(prompt) == "extraction" else ""
        if "doomed" in text:
            await others_started.wait()
            raise Abort
        if "Alice" in text:
            waiting += 1
            if waiting == 3:
                others_started.set()
            await asyncio.sleep(30)
        return respond(prompt, system_prompt)

    rag = LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        llm_model_func=llm,
        embedding_func=embedding_func(),
        max_parallel_insert=4,
    )
    await rag.initialize()
    try:
        before = asyncio.all_tasks()
        docs = ["The doomed one.", *(f"Alice met Bob, take {i}." for i in range(3))]
        with pytest.raises(Abort):
            await asyncio.wait_for(rag.ainsert(docs), 20)
        left = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
        assert left == set(), left
    finally:
        await rag.finalize()
        await drop_if_exists(conn, rag.workspace)


async def test_internal_driver_errors_become_storage_errors() -> None:
    with pytest.raises(StorageError, match="cannot switch to state 12"):
        async with translated():
            raise asyncpg.InternalClientError("cannot switch to state 12")
