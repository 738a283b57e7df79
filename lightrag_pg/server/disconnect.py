"""An ASGI middleware that cancels a request's work when its client goes away.

A question can hold a pooled connection for as long as its statement runs; a
client that gave up must not keep it. Once the request body is read, the
middleware waits for the server's ``http.disconnect`` beside the app; if it
comes before the response is complete, the app's task is cancelled, which
cancels the statement on the server (asyncpg sends PostgreSQL a cancel request
for a query whose task is cancelled) and returns its connection to the pool.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)


class CancelOnDisconnect:
    """Run requests to ``paths`` in a task cancelled when their client disconnects."""

    def __init__(self, app: ASGIApp, paths: Collection[str]) -> None:
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        body_read = asyncio.Event()
        gone = asyncio.Event()
        responded = False

        async def app_receive() -> Message:
            if body_read.is_set():  # the watcher reads the rest: only a disconnect can come
                await gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                body_read.set()
            return message

        async def app_send(message: Message) -> None:
            nonlocal responded
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                responded = True  # what follows is the app's own clean-up: never cancelled
            await send(message)

        async def watch() -> None:
            await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        work = asyncio.ensure_future(self.app(scope, app_receive, app_send))
        watcher = asyncio.ensure_future(watch())
        try:
            await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
            if not work.done() and not responded:
                log.info("%s %s: the client disconnected; cancelling", scope["method"], scope["path"])
                work.cancel()
            await asyncio.wait((work,))
            if not work.cancelled():
                work.result()
        finally:
            for task in (work, watcher):
                task.cancel()
            await asyncio.gather(work, watcher, return_exceptions=True)
