"""``/mcp``: the MCP server over streamable HTTP inside ``lightrag-pg serve``.

Requests pass the same check as the REST routes (API key, accounts, whitelist)
before the SDK's session manager sees them; the tools are :mod:`.mcp_tools`'.
The session manager runs in the app's lifespan, inside the workspace registry's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from .auth import AuthFailure
from .deps import ServerState, check_credentials, refusal
from .mcp_tools import Tools
from .settings import ServerSettings

PATH = "/mcp"
MAX_SESSIONS = 1000
"""The most MCP sessions open at once (one more gets a 503 until one ends or idles out)."""
SESSION_IDLE_SECONDS = 30 * 60.0
"""A session no request has used for this long is closed."""


class MCPEndpoint:
    """The ASGI app served at :attr:`path`; :meth:`running` is entered by the lifespan."""

    path = PATH

    def __init__(
        self, settings: ServerSettings, state_of: Callable[[], ServerState], body_limit: int
    ) -> None:
        self.state_of = state_of
        server = Tools(state_of, read_only=settings.mcp_read_only, uploads=True).server()
        # builds the session manager (the Starlette app it returns is not used: we route to it)
        server.streamable_http_app(
            streamable_http_path=PATH,
            max_request_body_size=body_limit,
            session_idle_timeout=SESSION_IDLE_SECONDS,
            max_sessions=MAX_SESSIONS,
            host=settings.host,
        )
        self.sessions = server.session_manager

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """``async with endpoint.running():`` sessions are served; leaving ends them all.

        The SDK's session manager holds a task group, which must be left by the task that
        entered it; it runs in a task of its own, so the lifespan may be entered and left
        by different tasks (as test harnesses do)."""
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def serve() -> None:
            try:
                async with self.sessions.run():
                    started.set_result(None)
                    await stop.wait()
            except BaseException as exc:
                if not started.done():
                    started.set_exception(exc)
                raise

        task = asyncio.create_task(serve(), name="mcp-sessions")
        await started
        try:
            yield
        finally:
            stop.set()
            await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                await check_credentials(Request(scope), self.state_of())
            except AuthFailure as exc:
                await refusal(exc)(scope, receive, send)
                return
        await self.sessions.handle_request(scope, receive, send)
