"""Concurrency helpers: awaitables that never outlive their caller, fair turns, and the
cores to share."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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


LINGER = 2.0
"""Seconds an owner keeps a slot free for itself after its last job (see :class:`FairScheduler`)."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(eq=False)
class _Owner:
    queue: deque[asyncio.Future[None]] = field(default_factory=deque)
    running: int = 0
    served: int = 0  # the grant count when it was last granted a slot
    idle_since: float | None = None  # when it was last left without running or queued jobs


class FairScheduler:
    """Runs jobs of several owners (workspaces), at most ``width`` at once, sharing the slots.

    Each owner has its own first-in first-out queue. A free slot goes to the
    waiting owner running the fewest jobs (ties: the one served longest ago).
    An owner that ran a job in the last ``linger`` seconds is still counted in:
    the owners already running jobs leave one slot free for it, so the short
    pauses between the jobs of one document (its database statements) do not
    hand its slot back to a busier owner. So however many jobs one owner
    queues, another owner's document waits at most for one job already running
    to end, and then only when that owner was idle. A job is granted a free
    slot at once, in the caller's turn of the event loop; a cancelled job gives
    its slot back at once.
    """

    def __init__(self, width: int, linger: float = LINGER) -> None:
        if width < 1:
            raise ValueError(f"a scheduler needs at least one slot, got {width}")
        self.width = width
        self.linger = linger
        self._running = 0
        self._grants = 0
        self._owners: dict[str, _Owner] = {}

    @property
    def running(self) -> int:
        """Jobs holding a slot."""
        return self._running

    @property
    def waiting(self) -> int:
        """Jobs queued for a slot."""
        return sum(len(o.queue) for o in self._owners.values())

    def waiting_by_owner(self) -> dict[str, int]:
        """Jobs queued for a slot, by owner (owners with none left out)."""
        return {name: len(o.queue) for name, o in self._owners.items() if o.queue}

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
            self._release(owner)

    async def _acquire(self, name: str) -> None:
        owner = self._owners.setdefault(name, _Owner())
        if not self.waiting and self._may_take(owner):
            self._grant(owner)
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        owner.queue.append(granted)
        self._dispatch()
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release(name)  # granted, then cancelled before it could start
            else:
                with contextlib.suppress(ValueError):
                    owner.queue.remove(granted)
                self._forget_idle()
                self._dispatch()
            raise

    def _lingering(self, owner: _Owner, now: float) -> bool:
        return (
            not owner.running
            and not owner.queue
            and owner.idle_since is not None
            and now - owner.idle_since < self.linger
        )

    def _may_take(self, owner: _Owner) -> bool:
        free = self.width - self._running
        if free <= 0:
            return False
        if not owner.running:
            return True
        now = time.monotonic()
        kept = sum(1 for o in self._owners.values() if o is not owner and self._lingering(o, now))
        return free > kept

    def _grant(self, owner: _Owner) -> None:
        self._running += 1
        self._grants += 1
        owner.running += 1
        owner.served = self._grants
        owner.idle_since = None

    def _release(self, name: str) -> None:
        owner = self._owners[name]
        owner.running -= 1
        self._running -= 1
        if not owner.running and not owner.queue:
            owner.idle_since = time.monotonic()
            asyncio.get_running_loop().call_later(self.linger, self._expire)
        self._dispatch()

    def _expire(self) -> None:
        self._forget_idle()
        self._dispatch()

    def _forget_idle(self) -> None:
        now = time.monotonic()
        for name, owner in list(self._owners.items()):
            if not owner.running and not owner.queue and not self._lingering(owner, now):
                del self._owners[name]

    def _dispatch(self) -> None:
        while True:
            waiting = [o for o in self._owners.values() if o.queue]
            if not waiting:
                return
            owner = min(waiting, key=lambda o: (o.running, o.served))
            if not self._may_take(owner):
                return
            granted = owner.queue.popleft()
            if not granted.done():
                granted.set_result(None)
                self._grant(owner)
