"""The pipeline's embedding pool: the texts of concurrent documents share batches of one length."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from lightrag_pg.errors import EmbeddingError
from lightrag_pg.index.embedding_pool import EmbeddingPool
from lightrag_pg.llm.embedding_func import EmbeddingFunc
from lightrag_pg.tasks import FairScheduler


class Recorder:
    """An embedding whose vector of a text is its length, recording each batch it gets."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.fail_on = fail_on

    async def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if self.fail_on in texts:
            raise EmbeddingError("the model refused")
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


async def pool_behind_a_busy_slot(
    recorder: Recorder, batch_size: int
) -> tuple[EmbeddingFunc, asyncio.Event, asyncio.Task[None]]:
    """A pool over a one-slot scheduler whose slot is held until the event is set."""
    scheduler = FairScheduler(1)
    release = asyncio.Event()
    blocker = asyncio.ensure_future(scheduler.run("other", release.wait))
    await asyncio.sleep(0)
    pool = EmbeddingPool(EmbeddingFunc(2, recorder), "ws", batch_size, lambda: scheduler, 1)
    return pool.as_embedding_func(), release, blocker  # type: ignore[return-value]


async def test_texts_of_concurrent_calls_share_batches_of_one_length() -> None:
    recorder = Recorder()
    embed, release, blocker = await pool_behind_a_busy_slot(recorder, batch_size=2)
    first = asyncio.ensure_future(embed(["a" * 50, "b", "c" * 30]))
    second = asyncio.ensure_future(embed(["dd", "e" * 49, "f" * 31]))
    await asyncio.sleep(0)
    release.set()
    one, two = await asyncio.gather(first, second)
    await blocker
    assert one[:, 0].tolist() == [50, 1, 30] and two[:, 0].tolist() == [2, 49, 31]
    # oldest waiting text first, with the text closest to it in length, whichever call it came from
    assert [sorted(map(len, b)) for b in recorder.batches] == [[49, 50], [1, 2], [30, 31]]


async def test_a_cancelled_call_s_texts_are_not_embedded() -> None:
    recorder = Recorder()
    embed, release, blocker = await pool_behind_a_busy_slot(recorder, batch_size=4)
    gone = asyncio.ensure_future(embed(["gone one", "gone two"]))
    kept = asyncio.ensure_future(embed(["kept"]))
    await asyncio.sleep(0)
    gone.cancel()
    release.set()
    assert (await kept)[:, 0].tolist() == [4]
    await blocker
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert recorder.batches == [["kept"]]


async def test_a_failed_batch_fails_its_callers_only() -> None:
    recorder = Recorder(fail_on="bad")
    embed, release, blocker = await pool_behind_a_busy_slot(recorder, batch_size=1)
    failing = asyncio.ensure_future(embed(["bad"]))
    fine = asyncio.ensure_future(embed(["good"]))
    await asyncio.sleep(0)
    release.set()
    with pytest.raises(EmbeddingError, match="refused"):
        await failing
    assert (await fine)[:, 0].tolist() == [4]
    await blocker


class FailingScheduler(FairScheduler):
    """A scheduler that fails its first job before giving it a slot."""

    def __init__(self) -> None:
        super().__init__(1)
        self.failures = 1

    async def run(self, owner, job):  # type: ignore[no-untyped-def]
        if self.failures:
            self.failures -= 1
            raise RuntimeError("no slot")
        return await super().run(owner, job)


async def test_a_job_that_fails_before_its_slot_fails_its_callers_and_not_the_next() -> None:
    """A job ending before its slot came used to leave its place counted as queued, so a
    waiting caller could wait forever."""
    scheduler = FailingScheduler()
    pool = EmbeddingPool(EmbeddingFunc(2, Recorder()), "ws", 4, lambda: scheduler, 1)
    with pytest.raises(RuntimeError, match="no slot"):
        await asyncio.wait_for(pool(["first"]), 5)
    assert (await asyncio.wait_for(pool(["again"]), 5))[:, 0].tolist() == [5]
