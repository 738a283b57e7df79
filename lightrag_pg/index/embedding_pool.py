"""The pipeline's embeddings: the texts of every document in progress, embedded together.

Each document asks for its vectors (its chunks', then its merged entities' and
relations') when it gets there. :class:`EmbeddingPool` puts the texts of every
request of a workspace in one pool; a job of the chunk scheduler takes up to
``batch_size`` of them when it gets its slot: the oldest text waiting and the
waiting texts closest to it in length. So texts of many documents share a
batch, a batch holds texts of about one length (a local model pads a batch to
its longest text), and no text waits behind a stream of younger ones. A text's
vector must not depend on the texts it is batched with: the local MiniLM's is
the same bit for bit, so its workspace stays a function of its documents (a
remote model that pads or batches differently may differ in the last bits).

The tokens a provider reports for a batch are shared among its texts by length,
and each call reports its texts' shares as its own usage
(:func:`~lightrag_pg.llm.usage.report_usage`), so a document's accounting holds its
texts whichever batches carried them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..llm.embedding_func import EmbeddingFunc
from ..llm.usage import measuring, report_usage
from ..tasks import FairScheduler


@dataclass(eq=False)
class _Text:
    text: str
    order: int
    vector: asyncio.Future[np.ndarray]
    tokens: float | None = None


class EmbeddingPool:
    """Embeds the texts of concurrent calls in shared batches of ``batch_size``, each
    batch a job of ``scheduler()`` (the running event loop's) for workspace ``owner``,
    at most ``width`` of them at once.

    Never call it from inside a scheduled job: that job would hold a slot while
    waiting for another.
    """

    def __init__(
        self,
        embed: EmbeddingFunc,
        owner: str,
        batch_size: int,
        scheduler: Callable[[], FairScheduler],
        width: int,
    ) -> None:
        if batch_size < 1 or width < 1:
            raise ValueError("batch_size and width must be >= 1")
        self.embed = embed
        self.owner = owner
        self.batch_size = batch_size
        self.scheduler = scheduler
        self.width = width
        self._waiting: list[_Text] = []
        self._orders = itertools.count()
        self._queued = 0
        self._jobs: dict[asyncio.Task[None], list[_Text]] = {}
        self._started: set[asyncio.Task[None]] = set()

    def as_embedding_func(self) -> EmbeddingFunc:
        """This pool as the workspace's :class:`EmbeddingFunc` (every other field kept)."""
        return dataclasses.replace(self.embed, func=self.__call__)

    async def __call__(self, texts: list[str]) -> np.ndarray:
        """The vectors of ``texts``, embedded with the other waiting texts. Cancelled, its
        texts not yet taken are dropped, and a batch holding only such texts is stopped,
        as are the queued batches once no text waits."""
        loop = asyncio.get_running_loop()
        mine = [_Text(t, next(self._orders), loop.create_future()) for t in texts]
        if not mine:
            return np.zeros((0, self.embed.embedding_dim), dtype=np.float32)
        self._waiting.extend(mine)
        self._start_jobs()
        try:
            vectors = np.stack([await t.vector for t in mine])
        except BaseException:
            for t in mine:
                if t.vector.done() and not t.vector.cancelled():
                    t.vector.exception()  # one failed batch is reported once, by this raise
                t.vector.cancel()
            self._waiting = [t for t in self._waiting if not t.vector.done()]
            for job, batch in list(self._jobs.items()):
                if (batch or not self._waiting) and all(t.vector.done() for t in batch):
                    job.cancel()
            raise
        shares = [t.tokens for t in mine]
        if all(share is not None for share in shares):
            report_usage(round(sum(share or 0.0 for share in shares)), 0, 0, self.embed.model_name)
        return vectors

    def _start_jobs(self) -> None:
        """Queue jobs until the queued ones can take every waiting text (``width`` at most)."""
        while len(self._jobs) < self.width and self._queued * self.batch_size < len(self._waiting):
            self._queued += 1
            job = asyncio.ensure_future(self.scheduler().run(self.owner, self._run_batch))
            self._jobs[job] = []
            job.add_done_callback(self._job_done)

    def _job_done(self, job: asyncio.Task[None]) -> None:
        batch = self._jobs.pop(job, [])
        if job not in self._started:
            self._queued -= 1  # ended before its slot came
        self._started.discard(job)
        failure = None if job.cancelled() else job.exception()
        if failure is not None and not batch:  # the scheduler failed: no text would be served
            batch, self._waiting = self._waiting, []
        for t in batch:
            if not t.vector.done():
                if failure is None:
                    t.vector.cancel()
                else:
                    t.vector.set_exception(failure)
        self._start_jobs()

    def _take(self) -> list[_Text]:
        """The oldest waiting text and the waiting texts closest to it in length."""
        live = sorted((t for t in self._waiting if not t.vector.done()), key=lambda t: (len(t.text), t.order))
        if len(live) <= self.batch_size:
            self._waiting = []
            return live
        oldest = min(range(len(live)), key=lambda i: live[i].order)
        start = max(0, min(oldest - self.batch_size // 2, len(live) - self.batch_size))
        self._waiting = live[:start] + live[start + self.batch_size :]
        return live[start : start + self.batch_size]

    async def _run_batch(self) -> None:
        self._queued -= 1
        batch = self._take()
        job = asyncio.current_task()
        if job in self._jobs:
            self._started.add(job)
            self._jobs[job] = batch
        if not batch:
            return
        try:
            with measuring() as measured:  # this batch's, whichever caller started the job
                vectors = await self.embed([t.text for t in batch])
        except Exception as exc:  # each caller of the batch gets the failure
            for t in batch:
                if not t.vector.done():
                    t.vector.set_exception(exc)
            return
        if measured.reports:
            length = sum(len(t.text) for t in batch) or 1
            for t in batch:
                t.tokens = measured.input_tokens * len(t.text) / length
        for t, vector in zip(batch, vectors, strict=True):
            if not t.vector.done():
                t.vector.set_result(vector)
