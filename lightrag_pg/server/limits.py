"""An ASGI middleware refusing request bodies over the server's upload limit (HTTP 413)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .files import TooLarge


class BodyLimit:
    """Refuse bodies larger than ``limit`` bytes, by ``Content-Length`` or while they arrive."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(
                send, f"request body of {int(declared):,} bytes exceeds the limit of {self.limit:,}"
            )
            return
        received = 0
        exceeded = False
        refused = False

        async def counted() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    exceeded = True
                    raise TooLarge(f"request body exceeds the limit of {self.limit:,} bytes")
            return message

        async def guarded_send(message: Message) -> None:
            # whatever the app made of the interrupted body, the client gets a 413
            nonlocal refused
            if not exceeded:
                await send(message)
            elif not refused:
                refused = True
                await _refuse(send, f"request body exceeds the limit of {self.limit:,} bytes")

        await self.app(scope, counted, guarded_send)


async def _refuse(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
