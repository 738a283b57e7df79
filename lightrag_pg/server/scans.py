"""What each ``/documents/scan`` found and did, for ``/documents/scan/status/{track_id}``.

A scan job records bounded counters (``discovered``, ``claimed_new``, ``processed``:
files a document already has, ``unsupported``, ``duplicate_content``, ``errors``) and
three bounded sample lists (``processed``, ``warning``, ``error``), in upstream's
``ScanJobStatusResponse`` shape. It is ``running`` while its files are converted and
enqueued and while documents of its track are still pending or processing, then
``completed`` (or ``failed`` / ``cancelled`` when its task ended so). The server keeps
the :data:`KEPT` most recent jobs in memory; an older track id is a 404, as upstream's
records expire.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

KEPT = 128
"""Scan jobs remembered by one server process (finished ones are forgotten first)."""
SAMPLES = 20
"""Samples kept per bucket."""
SAMPLE_CHARS = 512
"""Longest sample kept (longer ones are cut)."""
BUCKETS = ("processed", "warning", "error")

Outcome = Literal["running", "completed", "failed", "cancelled"]


@dataclass
class ScanJob:
    """One scan's record; see the module docstring."""

    track_id: str
    workspace: str
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    version: int = 1
    outcome: Outcome = "running"
    enqueuing: bool = True
    message: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=lambda: {b: [] for b in BUCKETS})
    truncated: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(BUCKETS, False))
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0))

    def _touch(self) -> None:
        self.updated_at = time.time()
        self.version += 1

    def count(self, key: str, n: int = 1) -> None:
        if n:
            self.counts[key] = self.counts.get(key, 0) + n
            self._touch()

    def sample(self, bucket: str, text: str) -> None:
        kept = self.samples[bucket]
        if len(kept) >= SAMPLES:
            self.dropped[bucket] += 1
            return
        if len(text) > SAMPLE_CHARS:
            text = text[:SAMPLE_CHARS]
            self.truncated[bucket] = True
        kept.append(text)
        self._touch()

    def enqueued(self, message: str) -> None:
        """Its files are converted and enqueued; it finishes when its documents are."""
        self.enqueuing = False
        self.message = message
        self._touch()

    def end(self, outcome: Outcome, message: str) -> None:
        """Its task ended without enqueuing everything (``failed`` or ``cancelled``)."""
        self.enqueuing = False
        self.outcome = outcome
        self.message = message
        self._touch()

    @property
    def finished(self) -> bool:
        return self.outcome != "running"

    def settle(self, documents_left: int) -> None:
        """Complete the job once enqueued with none of its documents left to index."""
        if not self.finished and not self.enqueuing and documents_left == 0:
            self.outcome = "completed"
            self._touch()

    def view(self) -> dict[str, Any]:
        """Upstream's ``ScanJobStatusResponse``."""
        return {
            "track_id": self.track_id,
            "status": self.outcome,
            "counts": dict(self.counts),
            "counters_dropped": 0,
            "samples": {
                b: {
                    "items": list(self.samples[b]),
                    "truncated": self.truncated[b],
                    "dropped": self.dropped[b],
                }
                for b in BUCKETS
            },
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "version": self.version,
            "message": self.message,
        }


class ScanJobs:
    """The scan jobs of a server process, by workspace and track id, at most ``kept``."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._jobs: OrderedDict[tuple[str, str], ScanJob] = OrderedDict()

    def start(self, workspace: str, track_id: str) -> ScanJob:
        while len(self._jobs) >= self.kept:
            old = next((k for k, j in self._jobs.items() if j.finished), next(iter(self._jobs)))
            del self._jobs[old]
        job = ScanJob(track_id, workspace)
        self._jobs[(workspace, track_id)] = job
        return job

    def get(self, workspace: str, track_id: str) -> ScanJob | None:
        return self._jobs.get((workspace, track_id))
