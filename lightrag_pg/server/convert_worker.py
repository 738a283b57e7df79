"""The process that turns one document into text, under resource limits.

Run as a script (``python -P convert_worker.py SUFFIX LIMITS``) by
:mod:`.convert`: it caps its own CPU time and address space first, reads the
file from stdin, refuses zip archives that would expand too far, converts the
file with the library for its type, and writes the text (UTF-8) to stdout with
exit status 0. A file it cannot read ends with exit status :data:`FAILED` and a
JSON object ``{"reason": ..., "limit": ...}`` on stdout, ``limit`` naming the
exceeded limit if that was the cause. It imports only the standard library and
the converter its file type needs, so that starting it stays cheap.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import sys
from collections.abc import Callable
from typing import Any

FAILED = 3
"""Exit status of a conversion that failed with a reason on stdout."""

RATIO_FLOOR = 1024 * 1024
"""Zip members expanding to at most this many bytes are never refused for their ratio."""


MEMORY_NEAR = 0.75
"""A parser error after using this share of the address space limit is put down to
the limit: parsers in C (lxml) report a failed allocation as a parse error."""


class Unreadable(Exception):
    """The file cannot be turned into text; ``limit`` names the limit it exceeds, if any."""

    def __init__(self, reason: str, limit: str | None = None) -> None:
        super().__init__(reason)
        self.limit = limit


def _pdf(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        raise Unreadable("the PDF is encrypted")
    return "\n\n".join(page.extract_text() or "" for page in reader.pages)


def _docx_heading_level(style: str) -> int:
    """The Markdown level of a paragraph style: Title 1, Heading N N (at most 6), else 0."""
    if style == "Title":
        return 1
    level = style.removeprefix("Heading ")
    return min(int(level), 6) if style.startswith("Heading ") and level.isdigit() and int(level) > 0 else 0


def _docx(data: bytes) -> str:
    import docx

    document = docx.Document(io.BytesIO(data))
    parts = []
    for paragraph in document.paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        level = _docx_heading_level(style or "")
        text = paragraph.text
        parts.append(f"{'#' * level} {' '.join(text.split())}" if level and text.strip() else text)
    for table in document.tables:
        for row in table.rows:
            parts.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n".join(parts)


def _pptx(data: bytes) -> str:
    from pptx import Presentation

    slides = []
    for number, slide in enumerate(Presentation(io.BytesIO(data)).slides, start=1):
        texts = [s.text_frame.text for s in slide.shapes if s.has_text_frame and s.text_frame.text.strip()]
        slides.append(f"Slide {number}\n" + "\n".join(texts))
    return "\n\n".join(slides)


def _xlsx(data: bytes) -> str:
    from openpyxl import load_workbook  # type: ignore[import-untyped]

    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        sheets = []
        for sheet in book.worksheets:
            rows = [
                " | ".join("" if v is None else str(v) for v in row)
                for row in sheet.iter_rows(values_only=True)
                if any(v is not None for v in row)
            ]
            sheets.append(f"Sheet {sheet.title}\n" + "\n".join(rows))
        return "\n\n".join(sheets)
    finally:
        book.close()


def _html(data: bytes) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "html.parser")
    for tag in soup(["script", "style", "noscript"]):
        tag.decompose()
    for heading in soup(["h1", "h2", "h3", "h4", "h5", "h6"]):
        text = heading.get_text(" ", strip=True)
        if text:
            heading.string = f"{'#' * int(heading.name[1])} {text}"
    return str(soup.get_text("\n", strip=True))


CONVERTERS: dict[str, Callable[[bytes], str]] = {
    ".pdf": _pdf,
    ".docx": _docx,
    ".pptx": _pptx,
    ".xlsx": _xlsx,
    ".html": _html,
    ".htm": _html,
}
"""The converter of each document type the worker handles."""

ZIPPED = frozenset({".docx", ".pptx", ".xlsx"})
"""Types that are zip archives, checked by :func:`check_zip` before they are parsed."""


def check_zip(data: bytes, limits: dict[str, Any]) -> None:
    """Refuse an archive that holds too many members, expands too far in total, or
    has a member expanding more than the allowed ratio (a decompression bomb).

    The sizes are those the archive declares; Python's ``zipfile``, which every
    converter reads through, never returns more bytes than a member declares.
    """
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise Unreadable(f"not a valid zip archive: {exc}") from None
    if len(members) > limits["max_zip_members"]:
        raise Unreadable(f"the archive holds {len(members):,} members", "max_zip_members")
    total = sum(m.file_size for m in members)
    if total > limits["max_unzipped_bytes"]:
        raise Unreadable(f"the archive expands to {total:,} bytes", "max_unzipped_bytes")
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > RATIO_FLOOR and ratio > limits["max_zip_ratio"]:
            raise Unreadable(
                f"{member.filename} expands {ratio:,.0f} times ({member.file_size:,} bytes from "
                f"{member.compress_size:,}), like a decompression bomb",
                "max_zip_ratio",
            )


def convert(suffix: str, data: bytes, limits: dict[str, Any]) -> str:
    """The text of a ``suffix`` file with content ``data``, within ``limits``."""
    if suffix in ZIPPED:
        check_zip(data, limits)
    text = CONVERTERS[suffix](data)
    if len(text) > limits["max_text_chars"]:
        raise Unreadable(f"its text has {len(text):,} characters", "max_text_chars")
    return text


def limit_resources(limits: dict[str, Any]) -> None:
    """Cap this process: address space (where the platform allows it), CPU seconds
    (SIGXCPU, then SIGKILL a second later) and no core file."""
    with contextlib.suppress(ValueError, OSError):  # macOS: the CPU and wall-clock limits still hold
        resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
    cpu = max(1, int(limits["cpu_seconds"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def peak_address_space() -> int:
    """The most address space this process has held, in bytes (0 where unknown)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main(argv: list[str]) -> int:
    """Convert stdin to stdout; the exit status says how it went."""
    suffix, limits = argv[1], json.loads(argv[2])
    limit_resources(limits)
    try:
        text = convert(suffix, sys.stdin.buffer.read(), limits)
    except Unreadable as exc:
        failure: dict[str, Any] = {"reason": str(exc), "limit": exc.limit}
    except Exception as exc:  # every parser has its own errors; all mean "unreadable"
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, MemoryError) or peak_address_space() > MEMORY_NEAR * limits["memory_bytes"]:
            failure = {"reason": f"it needs more memory than allowed ({error})", "limit": "memory_bytes"}
        else:
            failure = {"reason": f"cannot read {suffix} file: {error}", "limit": None}
    else:
        sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        return 0
    sys.stdout.write(json.dumps(failure))
    return FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
