"""One served workspace: its LightRAG, its input folder and its background work.

Indexing runs as asyncio tasks owned by the runtime: one processing run at a
time per workspace (further requests while it runs make it go round once
more), plus the conversion of uploaded files. Opening a workspace starts no
processing: documents left unfinished by an earlier run are resumed by the
first ``/documents`` request for the workspace (or at start, for the default
workspace), never by a query. Closing cancels the work; documents it was
working on stay ``pending`` or ``processing`` in the database, and the next
processing run picks them up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..db.identifiers import WorkspaceName
from ..index.progress import Progress
from ..rag import LightRAG
from .files import InputFolder

log = logging.getLogger(__name__)

HISTORY_LINES = 200
HISTORY_SECONDS = 10.0
"""While documents are being processed, a progress line goes into the history at
most this often (``latest_message`` follows every step)."""


@dataclass
class JobState:
    """What the pipeline of one workspace is doing, in upstream's ``pipeline_status`` shape."""

    busy: bool = False
    job_name: str = "Default Job"
    job_start: datetime | None = None
    docs: int = 0
    batchs: int = 0
    cur_batch: int = 0
    latest_message: str = ""
    cancellation_requested: bool = False
    history: deque[str] = field(default_factory=lambda: deque(maxlen=HISTORY_LINES))
    _last_done: int = -1
    _last_logged: float = 0.0

    def say(self, message: str) -> None:
        self.latest_message = message
        self.history.append(f"{datetime.now(timezone.utc):%H:%M:%S} {message}")

    def started(self, name: str) -> None:
        self.busy = True
        self.job_name = name
        self.job_start = datetime.now(timezone.utc)
        self.docs = self.batchs = self.cur_batch = 0
        self.cancellation_requested = False
        self._last_done = -1
        self.say(f"{name} started")

    def progress(self, p: Progress) -> None:
        """Show ``p`` as the latest message (every step: a chunk extracted or embedded, a
        document done); it goes into the history when a document is done, else at most
        every :data:`HISTORY_SECONDS`."""
        done = p.docs_done + p.docs_failed + p.docs_skipped
        self.docs = p.docs_total
        self.batchs = p.docs_total
        self.cur_batch = done
        message = p.describe()
        if message == self.latest_message:
            return
        now = time.monotonic()
        if done != self._last_done or now - self._last_logged >= HISTORY_SECONDS:
            self._last_done = done
            self._last_logged = now
            self.say(message)
        else:
            self.latest_message = message

    def finished(self, message: str) -> None:
        self.busy = False
        self.say(message)

    def view(self) -> dict[str, Any]:
        return {
            "busy": self.busy,
            "job_name": self.job_name,
            "job_start": self.job_start.isoformat() if self.job_start else None,
            "docs": self.docs,
            "batchs": self.batchs,
            "cur_batch": self.cur_batch,
            "latest_message": self.latest_message,
            "history_messages": list(self.history),
            "update_status": {},
            "cancellation_requested": self.cancellation_requested,
            # every change is one transaction: a crash leaves nothing half-done to recover
            "recovery_required": False,
            "recovery_kind": None,
            "recovery_message": None,
        }


class WorkspaceRuntime:
    """A workspace being served; created and closed by :class:`~.registry.WorkspaceRegistry`."""

    def __init__(self, rag: LightRAG, folder: InputFolder) -> None:
        self.rag = rag
        self.folder = folder
        self.job = JobState()
        self.users = 0
        self.last_used = time.monotonic()
        self._run: asyncio.Task[None] | None = None
        self._again = False
        self._retry_failed = False
        self._resumed = False
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def name(self) -> WorkspaceName:
        return self.rag.workspace

    @property
    def processing(self) -> bool:
        return self._run is not None and not self._run.done()

    @property
    def pending_tasks(self) -> int:
        return len(self._tasks)

    @property
    def idle(self) -> bool:
        """No request is using it and no background work is running."""
        return self.users == 0 and not self.processing and not self._tasks

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, owned by this runtime; failures are logged."""
        task = asyncio.create_task(coro, name=f"{self.name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    def resume(self) -> None:
        """Process the documents an earlier run left unfinished, the first time it is called
        (a processing run, started by any insert, also takes them)."""
        if not self._resumed:
            self.kick("resuming unfinished documents")

    def kick(self, reason: str = "indexing", *, failed: bool = False) -> None:
        """Process pending documents now, or once more after the run in progress;
        with ``failed``, that run also waits for failed documents another process holds."""
        self._resumed = True
        self._retry_failed |= failed
        if self.processing:
            self._again = True
            return
        self._run = asyncio.create_task(self._process(reason), name=f"{self.name}:process")

    async def _process(self, reason: str) -> None:
        self.job.started(reason)
        message = "indexing finished"
        try:
            while True:
                self._again = False
                retry, self._retry_failed = self._retry_failed, False
                run = self.rag.areprocess_failed if retry else self.rag.aprocess_pending
                state = await run(progress=self.job.progress)
                if state.failures:
                    self.job.say(f"{len(state.failures)} document(s) failed")
                if not self._again:
                    break
        except asyncio.CancelledError:
            message = "indexing cancelled; unfinished documents stay pending and are resumed later"
            raise
        except Exception as exc:
            message = f"indexing stopped: {type(exc).__name__}: {exc}"
            log.exception("processing workspace %s failed", self.name)
        finally:
            self.job.finished(message)

    def cancel_processing(self) -> bool:
        """Stop the processing run in progress; whether there was one."""
        if not self.processing:
            return False
        assert self._run is not None
        self.job.cancellation_requested = True
        self._run.cancel()
        return True

    async def close(self, grace: float) -> None:
        """Stop within about ``grace`` seconds: processing is cancelled at once (the chunk
        in flight is abandoned; its document is resumed later), uploads get half of it
        to finish converting, then everything left is cancelled; the document locks are
        released and the workspace's LightRAG finalized."""
        if self._run is not None:
            self._run.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=grace / 2)
        work = [*self._tasks, *([self._run] if self._run else [])]
        for task in work:
            task.cancel()
        if work:
            _, stuck = await asyncio.wait(work, timeout=grace / 2)
            for task in stuck:
                log.warning("workspace %s: task %s did not stop in time", self.name, task.get_name())
        await self.rag.finalize()
