"""``lightrag-pg mcp``: the MCP server over stdio, for clients that start it themselves.

The workspaces are served as by ``lightrag-pg serve`` (a registry of them on one
pool, indexing in the background), opened once the SDK has taken stdin and
stdout, so nothing printed while the database starts can break the protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

from ..db.embedded import resolve_dsn
from ..errors import LightRAGError
from .app import environment_factory
from .auth import Guard
from .deps import ServerState
from .mcp_tools import Tools
from .registry import RagFactory, WorkspaceRegistry
from .settings import ServerSettings


async def serve_stdio(settings: ServerSettings, factory: RagFactory | None = None) -> None:
    """Serve the MCP tools on stdin and stdout until the client closes them."""
    state: ServerState | None = None

    @asynccontextmanager
    async def opened(_: MCPServer) -> AsyncIterator[None]:
        nonlocal state
        dsn = await asyncio.to_thread(resolve_dsn, settings.dsn)
        registry = WorkspaceRegistry(settings, dsn, factory or environment_factory())
        state = ServerState(settings=settings, guard=Guard(settings), registry=registry)
        try:
            await registry.start()
            yield
        finally:
            await registry.close()

    def state_of() -> ServerState:
        if state is None:
            raise LightRAGError("the MCP server is not started")
        return state

    tools = Tools(state_of, read_only=settings.mcp_read_only, uploads=False)
    await tools.server(lifespan=opened).run_stdio_async()
