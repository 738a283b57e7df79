"""LLM calls that go through the workspace's ``llm_cache`` table."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from ..store.cache import cache_key
from ..store.uow import session
from .wrap import LLMFunc


@dataclass(frozen=True, slots=True)
class CachedLLM:
    """An LLM function plus the pool whose cache it reads and fills.

    Cache reads and writes use their own short autocommit statements: a
    cached call never runs inside, or holds locks of, a merge transaction.
    """

    func: LLMFunc
    pool: asyncpg.Pool
    enabled: bool = True

    async def __call__(
        self,
        prompt: str,
        *,
        system_prompt: str | None = None,
        history: Sequence[dict[str, Any]] = (),
        cache_type: str,
        mode: str = "default",
        chunk_id: str | None = None,
        **kwargs: Any,
    ) -> str:
        """Answer ``prompt``, from the cache when the same call was answered before."""
        key = self.key(prompt, system_prompt, history, cache_type, mode)
        hit = await self.lookup(key)
        if hit is not None:
            return hit
        answer = await self.func(
            prompt, system_prompt=system_prompt, history_messages=list(history), **kwargs
        )
        if not isinstance(answer, str):
            raise TypeError("the LLM function returned a stream where text was expected")
        await self.store(key, answer, cache_type=cache_type, mode=mode, prompt=prompt, chunk_id=chunk_id)
        return answer

    async def stream(
        self,
        prompt: str,
        *,
        system_prompt: str | None = None,
        history: Sequence[dict[str, Any]] = (),
        cache_type: str,
        mode: str = "default",
    ) -> AsyncIterator[str]:
        """Answer ``prompt`` piece by piece; the whole answer is cached once complete."""
        key = self.key(prompt, system_prompt, history, cache_type, mode)
        hit = await self.lookup(key)
        if hit is not None:
            yield hit
            return
        result = await self.func(
            prompt, system_prompt=system_prompt, history_messages=list(history), stream=True
        )
        pieces: list[str] = []
        if isinstance(result, str):
            pieces.append(result)
            yield result
        else:
            async for piece in result:
                pieces.append(piece)
                yield piece
        await self.store(key, "".join(pieces), cache_type=cache_type, mode=mode, prompt=prompt)

    @staticmethod
    def key(
        prompt: str,
        system_prompt: str | None,
        history: Sequence[dict[str, Any]],
        cache_type: str,
        mode: str,
    ) -> str:
        """The cache key of a call: everything the model sees."""
        return cache_key(
            cache_type, mode, system_prompt or "", json.dumps(list(history), sort_keys=True), prompt
        )

    async def lookup(self, key: str) -> str | None:
        """The cached answer for ``key`` (None when absent or caching is off)."""
        if not self.enabled:
            return None
        async with session(self.pool) as s:
            return await s.cache.get(key)

    async def store(self, key: str, answer: str, **fields: Any) -> None:
        """Cache ``answer`` under ``key`` (no-op when caching is off)."""
        if self.enabled:
            async with session(self.pool) as s:
                await s.cache.put(key, answer, **fields)
