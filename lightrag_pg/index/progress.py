"""Progress reporting for inserts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Progress:
    """Counters of one insert run, passed to the progress callback after each step.

    ``chunks_total`` counts the chunks cut so far (a document is chunked when
    its turn comes), ``chunks_extracted`` those whose extraction returned and
    ``chunks_done`` those stored with their document (chunks, vectors and the
    ``processed`` status committed), so ``chunks_done <= chunks_extracted <=
    chunks_total`` and every counter only grows.
    """

    docs_total: int = 0
    docs_done: int = 0
    docs_failed: int = 0
    docs_skipped: int = 0
    chunks_total: int = 0
    chunks_extracted: int = 0
    chunks_done: int = 0
    entities: int = 0
    relations: int = 0
    failures: dict[str, str] = field(default_factory=dict)


ProgressCallback = Callable[[Progress], None]


def ignore_progress(_: Progress) -> None:
    """The default callback: do nothing."""
