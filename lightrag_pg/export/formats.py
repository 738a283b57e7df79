"""Text export formats: CSV, JSON and Markdown, written row by row.

A writer is opened on a file path with the sections it will receive, gets
:meth:`Writer.rows` batches section after section, and :meth:`Writer.close`
at the end. Nothing is kept beyond the current batch.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from .sections import Section, as_text


class Writer:
    """Base of the export writers; subclasses write one format."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        self.path = path
        self.sections = list(sections)
        self.current: Section | None = None

    def rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        """Write a batch of ``section``'s rows (starting the section if it is new)."""
        if section != self.current:
            if self.current is not None:
                self.end_section(self.current)
            self.current = section
            self.start_section(section)
        self.write_rows(section, rows)

    def close(self) -> None:
        """End the last section and finish the file."""
        if self.current is not None:
            self.end_section(self.current)
        self.finish()

    def start_section(self, section: Section) -> None:
        """Write what comes before a section's rows."""

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        """Write rows of the current section."""
        raise NotImplementedError

    def end_section(self, section: Section) -> None:
        """Write what comes after a section's rows."""

    def finish(self) -> None:
        """Write what ends the file and close it."""


class TextWriter(Writer):
    """A writer on a UTF-8 text file."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        self.out: IO[str] = path.open("w", encoding="utf-8", newline="")

    def finish(self) -> None:
        self.out.close()


class CsvWriter(TextWriter):
    """One CSV file: per section a ``# name`` line, a header row, the rows, an empty line."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        self.csv = csv.writer(self.out)

    def start_section(self, section: Section) -> None:
        self.csv.writerow([f"# {section.name}"])
        self.csv.writerow(section.columns)

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        self.csv.writerows([as_text(v) for v in row] for row in rows)

    def end_section(self, section: Section) -> None:
        self.csv.writerow([])


def _json_value(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column == "vector":
        return json.loads(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return list(value) if isinstance(value, (list, tuple)) else value


class JsonWriter(TextWriter):
    """One JSON object: ``{"entities": [{...}, ...], "relations": [...], ...}``; lists stay lists."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        self.out.write("{")
        self.first_section = True
        self.first_row = True

    def start_section(self, section: Section) -> None:
        self.out.write(("" if self.first_section else ",") + f"\n{json.dumps(section.name)}: [")
        self.first_section = False
        self.first_row = True

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        for row in rows:
            item = {c: _json_value(c, v) for c, v in zip(section.columns, row, strict=True)}
            self.out.write(("\n  " if self.first_row else ",\n  ") + json.dumps(item, ensure_ascii=False))
            self.first_row = False

    def end_section(self, section: Section) -> None:
        self.out.write("\n]")

    def finish(self) -> None:
        self.out.write("\n}\n")
        super().finish()


def _md_cell(value: Any) -> str:
    text = as_text(value).replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


class MarkdownWriter(TextWriter):
    """Markdown: a ``## name`` heading and a table per section (pipes escaped, newlines as <br>)."""

    def __init__(self, path: Path, sections: Sequence[Section]) -> None:
        super().__init__(path, sections)
        self.out.write("# Knowledge graph export\n")

    def start_section(self, section: Section) -> None:
        self.out.write(f"\n## {section.name.capitalize()}\n\n")
        self.out.write("| " + " | ".join(section.columns) + " |\n")
        self.out.write("|" + "---|" * len(section.columns) + "\n")

    def write_rows(self, section: Section, rows: Sequence[tuple[Any, ...]]) -> None:
        self.out.writelines("| " + " | ".join(_md_cell(v) for v in row) + " |\n" for row in rows)
