"""Excel export through openpyxl (the ``[export]`` extra), one sheet per section.

openpyxl's write-only workbook streams rows to disk as they come, so memory
stays flat however large the graph. Excel limits apply: a cell holds at most
32,767 characters (longer text is cut and ends with an ellipsis), control
characters are not allowed (they are dropped), and times are stored in UTC
without a zone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .formats import Writer
from .sections import Section, as_text

CELL_LIMIT = 32_767


def require_openpyxl() -> Any:
    """The openpyxl module, or a :class:`ConfigurationError` saying how to install it."""
    try:
        import openpyxl
    except ImportError as exc:
        raise ConfigurationError("xlsx export needs openpyxl: pip install 'lightrag-pg[export]'") from exc
    return openpyxl


class XlsxWriter(Writer):
    """An .xlsx workbook with a sheet per section, header row first."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        openpyxl = require_openpyxl()
        from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

        self.illegal = ILLEGAL_CHARACTERS_RE
        self.book = openpyxl.Workbook(write_only=True)
        self.sheet: Any = None

    def start_section(self, section: Section) -> None:
        self.sheet = self.book.create_sheet(title=section.name)
        self.sheet.append(list(section.columns))

    def _cell(self, value: Any) -> Any:
        if isinstance(value, datetime):
            return value.astimezone(timezone.utc).replace(tzinfo=None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        text = self.illegal.sub("", as_text(value))
        return text if len(text) <= CELL_LIMIT else text[: CELL_LIMIT - 1] + "…"

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        for row in rows:
            self.sheet.append([self._cell(v) for v in row])

    def finish(self) -> None:
        self.book.save(self.path)
