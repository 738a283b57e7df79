"""Export a workspace's knowledge graph to a file: CSV, JSON, Markdown, Excel or GraphML.

Entities and relations, optionally chunks (not in GraphML, which holds the
graph) and vectors, read from one consistent snapshot and streamed to the
file batch by batch. The file appears whole or not at all: it is written
under a temporary name beside the target and renamed over it at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..db.pool import WorkspacePool
from ..errors import InvalidInput
from .formats import CsvWriter, JsonWriter, MarkdownWriter, Writer
from .graphml import GraphmlWriter
from .sections import CHUNKS, ENTITIES, RELATIONS, Section, stream
from .xlsx import XlsxWriter, require_openpyxl

WRITERS: dict[str, Callable[[Path, Sequence[Section]], Writer]] = {
    "csv": CsvWriter,
    "json": JsonWriter,
    "md": MarkdownWriter,
    "xlsx": XlsxWriter,
    "graphml": GraphmlWriter,
}
ALIASES = {"excel": "xlsx", "markdown": "md"}


@dataclass(frozen=True, slots=True)
class ExportResult:
    """Where an export went, in which format, and how many rows of each section it holds."""

    path: Path
    file_format: str
    rows: dict[str, int] = field(default_factory=dict)


def export_format(name: object) -> str:
    """The canonical name of an export format (``excel`` and ``markdown`` are accepted too)."""
    chosen = ALIASES.get(str(name).lower(), str(name).lower()) if isinstance(name, str) else None
    if chosen not in WRITERS:
        raise InvalidInput(f"unknown export format {name!r}; use one of {', '.join(WRITERS)}")
    return chosen


def _temporary_beside(path: Path) -> Path:
    """Create an empty temporary file in ``path``'s folder, or say clearly why it cannot be written."""
    if path.is_dir():
        raise InvalidInput(f"cannot export to {str(path)!r}: it is a directory")
    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidInput(f"cannot export to {str(path)!r}: {reason}") from exc
    os.close(handle)
    os.chmod(name, 0o644)
    return Path(name)


async def export_workspace(
    pool: WorkspacePool,
    path: str | os.PathLike[str],
    file_format: str = "csv",
    *,
    include_vector_data: bool = False,
    include_chunks: bool = False,
) -> ExportResult:
    """Write the workspace's entities and relations (and chunks, vectors when asked) to ``path``.

    Raises :class:`InvalidInput` for an unknown format or a path that cannot be
    written, and :class:`~lightrag_pg.errors.ConfigurationError` for xlsx
    without openpyxl, before reading anything. A failure part way leaves
    ``path`` as it was.
    """
    chosen = export_format(file_format)
    if chosen == "xlsx":
        require_openpyxl()
    target = Path(path).expanduser().absolute()
    sections = [ENTITIES, RELATIONS]
    if include_chunks and chosen != "graphml":
        sections.append(CHUNKS)
    temporary = _temporary_beside(target)
    counts = {s.name: 0 for s in sections}
    try:
        writer = WRITERS[chosen](temporary, [s.with_vectors(include_vector_data) for s in sections])
        try:
            async with pool.acquire() as conn:
                async for section, rows in stream(conn, sections, include_vector_data):
                    await asyncio.to_thread(writer.rows, section, rows)
                    counts[section.name] += len(rows)
        finally:
            await asyncio.to_thread(writer.close)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    return ExportResult(target, chosen, counts)
