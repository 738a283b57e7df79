"""Running the server's ASGI app in the test's event loop, with the scripted LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from lightrag_pg import LightRAG
from lightrag_pg.db.pool import SharedPool
from lightrag_pg.server import ServerSettings, create_app
from lightrag_pg.server.registry import RagFactory
from lightrag_pg.testing import hashed_embedding_func, scripted_llm
from lightrag_pg.types import DocStatus

TEXT = "Alice founded Acme in Paris. Bob joined Acme in Berlin."
FINISHED = {"processed", "failed"}


def counted(**nonzero: int) -> dict[str, int]:
    """``/documents/status_counts``' body for these counts: every status, zero when none, and ``all``."""
    counts = {s.value: nonzero.get(s.value, 0) for s in DocStatus}
    return {**counts, "all": sum(counts.values())}


def scripted_factory(llm: Callable[..., Any] = scripted_llm) -> RagFactory:
    def factory(workspace: str, pool: SharedPool) -> LightRAG:
        return LightRAG(
            workspace=workspace,
            llm_model_func=llm,
            embedding_func=hashed_embedding_func(),
            pool=pool,
            retry_base_delay=0.01,
        )

    return factory


@dataclass
class Served:
    """A running app, a client for it and its default workspace."""

    app: Any
    client: httpx.AsyncClient
    workspace: str

    async def track(self, track_id: str, *, workspace: str | None = None, count: int = 1) -> dict[str, Any]:
        """Wait until ``count`` documents of the track are finished; their track_status."""
        headers = {"LIGHTRAG-WORKSPACE": workspace} if workspace else {}
        for _ in range(600):
            body = (await self.client.get(f"/documents/track_status/{track_id}", headers=headers)).json()
            docs = body["documents"]
            if len(docs) >= count and all(d["status"] in FINISHED for d in docs):
                return body
            await asyncio.sleep(0.05)
        raise AssertionError(f"track {track_id} did not finish: {body}")


@asynccontextmanager
async def serving(
    settings: ServerSettings, factory: RagFactory | None = None, **headers: str
) -> AsyncIterator[Served]:
    """The app with its lifespan running, and an httpx client talking to it in-process."""
    app = create_app(settings, factory or scripted_factory())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client:
            yield Served(app, client, settings.default_workspace)
