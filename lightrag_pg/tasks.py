"""Concurrent awaitables that never outlive the call that started them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
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
