"""LLM calls that go through the workspace's ``llm_cache`` table."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
        key = cache_key(
            cache_type, mode, system_prompt or "", json.dumps(list(history), sort_keys=True), prompt
        )
        if self.enabled:
            async with session(self.pool) as s:
                hit = await s.cache.get(key)
            if hit is not None:
                return hit
        answer = await self.func(
            prompt, system_prompt=system_prompt, history_messages=list(history), **kwargs
        )
        if not isinstance(answer, str):
            raise TypeError("the LLM function returned a stream where text was expected")
        if self.enabled:
            async with session(self.pool) as s:
                await s.cache.put(
                    key, answer, cache_type=cache_type, mode=mode, prompt=prompt, chunk_id=chunk_id
                )
        return answer
