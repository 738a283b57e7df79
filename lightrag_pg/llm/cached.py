"""LLM calls that go through an answer cache."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .wrap import LLMFunc


class AnswerCache(Protocol):
    """Where answers are kept between calls (the workspace's ``llm_cache``)."""

    async def get(self, key: str) -> str | None:
        """The answer stored under ``key``, if any."""
        ...

    async def put(
        self, key: str, response: str, *, cache_type: str, mode: str, prompt: str, chunk_id: str | None
    ) -> None:
        """Store ``response`` under ``key`` (replacing an older one)."""
        ...


def cache_key(cache_type: str, mode: str, *parts: str) -> str:
    """A stable key for a prompt: ``type:mode:md5(parts)``."""
    digest = hashlib.md5("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{cache_type}:{mode}:{digest}"


@dataclass(frozen=True, slots=True)
class CachedLLM:
    """An LLM function plus the cache it reads and fills (``cache=None``: no caching).

    The cache is expected to use its own short statements: a cached call never
    runs inside, or holds locks of, a merge transaction.
    """

    func: LLMFunc
    cache: AnswerCache | None

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
        if self.cache is None:
            return None
        return await self.cache.get(key)

    async def store(
        self,
        key: str,
        answer: str,
        *,
        cache_type: str,
        mode: str,
        prompt: str,
        chunk_id: str | None = None,
    ) -> None:
        """Cache ``answer`` under ``key`` (no-op when caching is off)."""
        if self.cache is not None:
            await self.cache.put(
                key, answer, cache_type=cache_type, mode=mode, prompt=prompt, chunk_id=chunk_id
            )
