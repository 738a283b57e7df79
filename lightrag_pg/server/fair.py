"""A bounded number of slots shared fairly between workspaces."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class FairSlots:
    """At most ``size`` holders at once; waiters get free slots one workspace after
    another (round robin), so a workspace with many waiting never holds up another
    for longer than one turn."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    @property
    def waiting(self) -> int:
        """How many are waiting for a slot."""
        return sum(len(q) for q in self._waiting.values())

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold a slot for the block, waiting for ``key``'s turn if none is free."""
        if self._free and not self._waiting:
            self._free -= 1
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(key, deque()).append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release()
                else:
                    self._forget(key, granted)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            key = next(iter(self._waiting))
            queue = self._waiting.pop(key)
            granted = queue.popleft()
            if queue:
                self._waiting[key] = queue  # to the back of the round
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1

    def _forget(self, key: str, granted: asyncio.Future[None]) -> None:
        queue = self._waiting.get(key)
        if queue is not None and granted in queue:
            queue.remove(granted)
            if not queue:
                del self._waiting[key]
