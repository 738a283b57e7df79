"""Turning uploaded files into text: one converter per supported extension.

PDF with pypdf, Word with python-docx, PowerPoint with python-pptx, Excel with
openpyxl, HTML with BeautifulSoup; text, Markdown and CSV are decoded as
UTF-8. A file that cannot be read raises :class:`UnreadableFile` with the
reason, which the server records as a failed document.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import InvalidInput

_ONE_AT_A_TIME = threading.Lock()
"""Conversions run in worker threads, one at a time: the document libraries
(python-docx, python-pptx, openpyxl and their module-level state) never run
concurrently, and nothing is lost, since parsing holds the GIL anyway."""


class UnreadableFile(InvalidInput):
    """A file of a supported type whose content could not be extracted."""


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None


def _text(data: bytes) -> str:
    return _decode(data)


def _csv(data: bytes) -> str:
    rows = csv.reader(io.StringIO(_decode(data)))
    return "\n".join(" | ".join(cell.strip() for cell in row) for row in rows if any(c.strip() for c in row))


def _pdf(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        raise UnreadableFile("the PDF is encrypted")
    return "\n\n".join(page.extract_text() or "" for page in reader.pages)


def _docx(data: bytes) -> str:
    import docx

    document = docx.Document(io.BytesIO(data))
    parts = [p.text for p in document.paragraphs]
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
    return soup.get_text("\n", strip=True)


CONVERTERS: dict[str, Callable[[bytes], str]] = {
    ".txt": _text,
    ".md": _text,
    ".csv": _csv,
    ".pdf": _pdf,
    ".docx": _docx,
    ".pptx": _pptx,
    ".xlsx": _xlsx,
    ".html": _html,
    ".htm": _html,
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(sorted(CONVERTERS))


def supported(name: str) -> bool:
    """Whether files named ``name`` can be converted."""
    return Path(name).suffix.lower() in CONVERTERS


def convert(name: str, data: bytes) -> str:
    """The text of file ``name`` with content ``data``; :class:`UnreadableFile` if there is none."""
    converter = CONVERTERS.get(Path(name).suffix.lower())
    if converter is None:
        raise UnreadableFile(f"unsupported file type {Path(name).suffix or '(none)'!r}")
    try:
        with _ONE_AT_A_TIME:
            text = converter(data)
    except UnreadableFile:
        raise
    except Exception as exc:  # every parser has its own errors; all mean "unreadable"
        raise UnreadableFile(f"cannot read {Path(name).suffix} file: {type(exc).__name__}: {exc}") from exc
    if not text.strip():
        raise UnreadableFile("no text found in the file")
    return text
