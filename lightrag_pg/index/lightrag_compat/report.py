"""What an import did: counts per kind, what was skipped and why, the time taken."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class KindCount:
    """One kind of record: read from the source, written, already stored (kept as it was),
    and skipped, by reason."""

    read: int = 0
    written: int = 0
    kept: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count


KINDS = (
    "documents",
    "statuses",
    "chunks",
    "chunk_vectors",
    "cache",
    "entities",
    "entity_vectors",
    "relations",
    "relation_vectors",
    "entity_fragments",
    "relation_fragments",
    "translated_cache",
)


@dataclass
class ImportReport:
    """The outcome of :func:`~.importer.import_lightrag`.

    ``counts`` by kind (:data:`KINDS`); fragments are ``exact`` (parsed from upstream's
    cached extraction of their chunk) or ``filled`` (a chunk of the row's list whose
    extraction is not cached: its piece of the row's description, see docs/import-lightrag.md);
    ``translated_cache``: extraction answers filed under lightrag_pg's keys, so that
    indexing an imported document again calls no model.
    """

    source: str
    workspace: str
    embedding: str = ""
    counts: dict[str, KindCount] = field(default_factory=lambda: {k: KindCount() for k in KINDS})
    fragments_exact: int = 0
    fragments_filled: int = 0
    chunks_without_cached_extraction: int = 0
    pending_without_status: int = 0
    """Documents upstream holds without a status, imported as pending (our pipeline indexes them)."""
    skipped_documents: list[str] = field(default_factory=list)
    """A few ids of the documents the workspace already held (not imported again)."""
    rows_swept: int = 0
    """Imported entities and relations no imported chunk contributes to, deleted again."""
    rows_merged: int = 0
    """Rows the workspace already held that imported documents also contribute to,
    rebuilt from both sides' fragments (descriptions joined, vectors kept)."""
    rows_not_merged: int = 0
    """Such rows left as they were: they hold contributions recorded before migration 0006."""
    indexes_deferred: bool = False
    """The workspace held no vectors: its HNSW indexes were dropped and built at the end."""
    indexes_built: list[str] = field(default_factory=list)
    unreadable: dict[str, int] = field(default_factory=dict)
    unreadable_examples: dict[str, list[str]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    """What the workspace holds of this source afterwards (documents, chunks, fragments),
    and its entities and relations."""
    seconds: float = 0.0
    phase_seconds: dict[str, float] = field(default_factory=dict)

    def count(self, kind: str) -> KindCount:
        return self.counts.setdefault(kind, KindCount())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """The report for people, a line per kind."""
        out = [f"imported {self.source} into workspace {self.workspace!r} in {self.seconds:.1f} s"]
        if self.embedding:
            out.append(f"  embeddings: {self.embedding}")
        for kind in KINDS:
            c = self.counts.get(kind)
            if c is None or not (c.read or c.written or c.kept or c.skipped):
                continue
            skipped = "".join(f", {n} skipped ({reason})" for reason, n in sorted(c.skipped.items()))
            kept = f", {c.kept} already there" if c.kept else ""
            out.append(f"  {kind.replace('_', ' ')}: {c.read} read, {c.written} written{kept}{skipped}")
        if self.fragments_exact or self.fragments_filled:
            out.append(
                f"  fragments: {self.fragments_exact} from upstream's cached extractions, "
                f"{self.fragments_filled} filled from the chunk lists (no cached extraction of "
                f"{self.chunks_without_cached_extraction} chunks)"
            )
        if self.pending_without_status:
            out.append(
                f"  {self.pending_without_status} documents without a status upstream: imported as pending"
            )
        if self.skipped_documents:
            shown = ", ".join(self.skipped_documents[:5])
            out.append(f"  documents already in the workspace, skipped: e.g. {shown}")
        if self.rows_swept:
            out.append(f"  {self.rows_swept} entities and relations of skipped documents only: not imported")
        if self.rows_merged or self.rows_not_merged:
            out.append(
                f"  {self.rows_merged} entities and relations also held by the workspace's own documents: "
                "rebuilt from both sides' fragments (descriptions joined, vectors kept until they change)"
                + (
                    f"; {self.rows_not_merged} left as they were (indexed before migration 0006)"
                    if self.rows_not_merged
                    else ""
                )
            )
        for kind, n in sorted(self.unreadable.items()):
            examples = ", ".join(self.unreadable_examples.get(kind, [])[:3])
            out.append(f"  unreadable {kind.replace('_', ' ')}: {n} (e.g. {examples})")
        if self.totals:
            out.append(
                "  workspace now: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.totals.items())
            )
        return out


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Where an import is: its phase, and how far through the phase's input (``unit``:
    bytes of a file or rows of a table; ``total`` 0 when unknown)."""

    phase: str
    done: int
    total: int
    unit: str
    phase_index: int
    phases: int


ImportCallback = Callable[[ImportProgress], None]


def ignore_import_progress(_: ImportProgress) -> None:
    """The default progress callback: does nothing."""
