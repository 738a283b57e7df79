"""CPU accounting for the ingest benchmark: where an offline insert spends its processor time.

Linux only (it reads ``/proc``). The split has four parts:

* spaCy: the CPU time of the threads running the extractor, counted per call
  (``time.thread_time`` around each call);
* embedding: the same for the embedding model's calls (the bench wraps the local
  MiniLM's batches, which run on its own threads), plus every native thread Python
  does not know (an intra-op pool, when a model runs one);
* PostgreSQL: the server's processes (the postmaster, its live children, and the
  children it has reaped);
* the rest of Python: the process's CPU time less the first two.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(path: Path) -> list[str]:
    text = path.read_text()
    return text[text.rindex(")") + 2 :].split()


def _cpu(fields: list[str], children: bool = False) -> float:
    """utime + stime (+ cutime + cstime) in seconds, from a ``stat`` line after its command."""
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def process_tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid``, its reaped children, and its live children."""
    total = _cpu(_stat_fields(Path(f"/proc/{pid}/stat")), children=True)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        try:
            fields = _stat_fields(entry / "stat")
        except (OSError, ValueError):
            continue
        if int(fields[1]) == pid:
            total += _cpu(fields)
    return total


def foreign_threads_cpu() -> float:
    """CPU seconds of this process's threads that Python did not start (native pools)."""
    known = {t.native_id for t in threading.enumerate()}
    total = 0.0
    for task in Path("/proc/self/task").iterdir():
        if int(task.name) in known or int(task.name) == os.getpid():
            continue
        try:
            total += _cpu(_stat_fields(task / "stat"))
        except (OSError, ValueError):
            continue
    return total


def postmaster_pid(dsn_or_data_dir: str | Path) -> int | None:
    """The postmaster pid of an embedded server's data directory, if it can be found."""
    path = Path(dsn_or_data_dir) / "postmaster.pid"
    if not path.is_file():
        return None
    return int(path.read_text().split()[0])


@dataclass
class Meter:
    """Thread CPU seconds spent inside wrapped callables, by label."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, label: str, seconds: float, items: int = 0) -> None:
        """Record one call."""
        with self._lock:
            self.seconds[label] = self.seconds.get(label, 0.0) + seconds
            self.calls[label] = self.calls.get(label, 0) + 1
            self.items[label] = self.items.get(label, 0) + items

    def wrap(self, label: str, func: Callable[..., Any], count: Callable[..., int] | None = None) -> Any:
        """``func`` (synchronous) timed under ``label``; ``count(*args)`` items per call."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                self.add(label, time.thread_time() - started, count(*args) if count else 0)

        return timed


@dataclass(frozen=True, slots=True)
class CpuSplit:
    """CPU seconds of one timed run, by part."""

    spacy: float
    embedding: float
    postgres: float | None
    python: float

    @property
    def total(self) -> float:
        """All parts together."""
        return self.spacy + self.embedding + self.python + (self.postgres or 0.0)

    def lines(self) -> list[str]:
        """The split as report lines, with shares of the total."""
        parts = {"spaCy": self.spacy, "embedding": self.embedding, "rest of Python": self.python}
        if self.postgres is not None:
            parts["PostgreSQL"] = self.postgres
        total = sum(parts.values()) or 1.0
        return [f"  {k:<15} {v:8.1f} s  {v / total:4.0%}" for k, v in parts.items()]


class CpuClock:
    """Process, native-thread and server CPU at the start and end of a run."""

    def __init__(self, meter: Meter, server_pid: int | None) -> None:
        self.meter = meter
        self.server_pid = server_pid
        self._start: tuple[float, float, float | None, dict[str, float]] | None = None

    def _now(self) -> tuple[float, float, float | None, dict[str, float]]:
        server = process_tree_cpu(self.server_pid) if self.server_pid else None
        return time.process_time(), foreign_threads_cpu(), server, dict(self.meter.seconds)

    def start(self) -> None:
        """Read the clocks at the start."""
        self._start = self._now()

    def split(self) -> CpuSplit:
        """The split since :meth:`start`."""
        assert self._start is not None
        process0, native0, server0, meter0 = self._start
        process1, native1, server1, meter1 = self._now()
        spacy = meter1.get("spacy", 0.0) - meter0.get("spacy", 0.0)
        embedding = meter1.get("embedding", 0.0) - meter0.get("embedding", 0.0) + (native1 - native0)
        postgres = server1 - server0 if server0 is not None and server1 is not None else None
        return CpuSplit(spacy, embedding, postgres, max(0.0, process1 - process0 - spacy - embedding))
