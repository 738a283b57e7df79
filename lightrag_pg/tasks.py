"""Concurrency helpers: awaitables that never outlive their caller, and fair turns."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Await ``aws`` concurrently; return their results in order.

    If one raises, or the caller is cancelled, the others are cancelled and
    awaited before the exception propagates, so nothing started here is still
    running when this returns or raises. Like :class:`asyncio.TaskGroup`
    (Python 3.11+), but for Python 3.10 too, and the first exception is
    re-raised as it is rather than inside an ``ExceptionGroup``.
    """
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class FairScheduler:
    """Runs jobs of several owners, at most ``width`` at once, giving the owners turns.

    Each owner (a workspace) has its own first-in first-out queue. A freed slot
    goes to the head of the queue of the next owner in turn, and that owner then
    waits behind every other owner with queued jobs, so however many jobs one
    owner queues, another owner's job waits at most for one of the jobs already
    running to end, per owner ahead of it. A job is granted a free slot at once,
    in the caller's turn of the event loop. A cancelled job gives its slot back
    at once.
    """

    def __init__(self, width: int) -> None:
        if width < 1:
            raise ValueError(f"a scheduler needs at least one slot, got {width}")
        self.width = width
        self._running = 0
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}  # in turn order

    @property
    def running(self) -> int:
        """Jobs holding a slot."""
        return self._running

    @property
    def waiting(self) -> int:
        """Jobs queued for a slot."""
        return sum(len(q) for q in self._queues.values())

    def widen(self, width: int) -> None:
        """Allow at least ``width`` jobs at once."""
        if width > self.width:
            self.width = width
            self._dispatch()

    async def run(self, owner: str, job: Callable[[], Awaitable[T]]) -> T:
        """Await ``job()`` in one of the slots, when ``owner``'s turn comes."""
        await self._acquire(owner)
        try:
            return await job()
        finally:
            self._release()

    async def _acquire(self, owner: str) -> None:
        if self._running < self.width and not self._queues:
            self._running += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(owner, deque()).append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release()  # granted, then cancelled before it could start
            else:
                self._forget(owner, granted)
            raise

    def _forget(self, owner: str, granted: asyncio.Future[None]) -> None:
        queue = self._queues.get(owner)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(granted)
        if not queue:
            del self._queues[owner]

    def _release(self) -> None:
        self._running -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        while self._running < self.width and self._queues:
            owner = next(iter(self._queues))
            queue = self._queues.pop(owner)
            granted = queue.popleft()
            if queue:
                self._queues[owner] = queue  # back of the turn
            if granted.done():
                continue
            granted.set_result(None)
            self._running += 1
