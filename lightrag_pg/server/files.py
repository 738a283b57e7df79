"""The input folder: one directory per workspace; names that cannot leave it."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from ..errors import InvalidInput, LightRAGError

MAX_NAME_BYTES = 255


class NameConflict(InvalidInput):
    """A file with that name is already in the workspace's input folder."""


class TooLarge(InvalidInput):
    """An upload is larger than the server accepts."""


class Throttled(LightRAGError):
    """Too much work of this kind is already in progress; retry later."""


def safe_name(name: str | None) -> str:
    """``name`` if it is a plain file name, else :class:`InvalidInput` saying why.

    Directory parts (``/``, ``\\``), ``.``/``..``, control characters and hidden
    files are refused rather than rewritten, so a name never lands anywhere
    but where the client expects.
    """
    if not name or not name.strip():
        raise InvalidInput("the file has no name")
    name = unicodedata.normalize("NFC", name.strip())
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise InvalidInput(f"file name {name!r} must be a plain name, without folders or a leading dot")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise InvalidInput(f"file name {name!r} contains control characters")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidInput(f"file name is longer than {MAX_NAME_BYTES} bytes")
    return name


class InputFolder:
    """The files of one workspace, under ``root/<workspace>``."""

    def __init__(self, root: Path, workspace: str) -> None:
        self.path = (root / workspace).resolve()

    def file(self, name: str) -> Path:
        """The path of ``name`` in the folder; :class:`InvalidInput` if it would lie outside."""
        path = (self.path / safe_name(name)).resolve()
        if path.parent != self.path:
            raise InvalidInput(f"file name {name!r} leaves the input folder")
        return path

    def save(self, name: str, data: bytes) -> Path:
        """Write a new file ``name``; :class:`NameConflict` if one exists (never overwritten)."""
        path = self.file(name)
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise NameConflict(f"Input directory already contains '{name}'") from None
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path

    def remove(self, name: str) -> bool:
        """Delete file ``name`` if present; whether it was."""
        try:
            path = self.file(name)
        except InvalidInput:
            return False
        if path.is_file():
            path.unlink()
            return True
        return False

    def files(self) -> list[Path]:
        """The regular files in the folder, by name."""
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.iterdir() if p.is_file() and not p.name.startswith("."))
