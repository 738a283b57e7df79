"""Progress reporting for inserts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Progress:
    """Counters of one insert run, passed to the progress callback after each step.

    ``chunks_total`` counts the chunks cut so far (a document is chunked when
    its turn comes), ``chunks_extracted`` those whose extraction returned,
    ``chunks_embedded`` those whose vector was computed, and ``chunks_done``
    those stored with their document (chunks, vectors and the ``processed``
    status committed), so ``chunks_done <= chunks_extracted <= chunks_total``
    and every counter only grows. ``merge_batches_done`` of
    ``merge_batches_total`` counts the batches of names the merges have
    written (a document's merge is cut into batches; see
    :mod:`lightrag_pg.index.writer`).
    """

    docs_total: int = 0
    docs_done: int = 0
    docs_failed: int = 0
    docs_skipped: int = 0
    chunks_total: int = 0
    chunks_extracted: int = 0
    chunks_embedded: int = 0
    chunks_done: int = 0
    merge_batches_total: int = 0
    merge_batches_done: int = 0
    entities: int = 0
    relations: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """One line saying how far the run is, for logs and status pages."""
        finished = self.docs_done + self.docs_failed + self.docs_skipped
        text = (
            f"documents {finished}/{self.docs_total} ({self.docs_failed} failed), "
            f"chunks {self.chunks_extracted} extracted, {self.chunks_embedded} embedded, "
            f"{self.chunks_done} stored of {self.chunks_total}"
        )
        if self.merge_batches_done < self.merge_batches_total:
            text += f", merging {self.merge_batches_done}/{self.merge_batches_total} batches"
        return f"{text}, {self.entities} entities, {self.relations} relations"


ProgressCallback = Callable[[Progress], None]


def ignore_progress(_: Progress) -> None:
    """The default callback: do nothing."""
