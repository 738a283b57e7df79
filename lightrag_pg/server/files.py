"""The input folder: one directory per workspace; names that cannot leave it."""

from __future__ import annotations

import logging
import os
import stat
import unicodedata
from pathlib import Path

from ..errors import InvalidInput, LightRAGError

log = logging.getLogger(__name__)

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
    """The files of one workspace, under ``root/<workspace>``.

    A symbolic link in the folder is followed only to a file inside the folder
    (the resolved target is checked); a link leading out of it is never read.
    """

    def __init__(self, root: Path, workspace: str) -> None:
        self.path = (root / workspace).resolve()

    def file(self, name: str) -> Path:
        """The path of ``name`` in the folder (not following a link there);
        :class:`InvalidInput` if ``name`` is not a plain file name."""
        return self.path / safe_name(name)

    def inside(self, path: Path) -> bool:
        """Whether ``path``, links followed, lies inside the folder."""
        return path.resolve().is_relative_to(self.path)

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

    def read(self, name: str, limit: int) -> bytes:
        """The content of file ``name``: :class:`InvalidInput` if it is a link out of the
        folder or not a regular file, :class:`TooLarge` past ``limit`` bytes."""
        target = self.file(name).resolve()
        if not target.is_relative_to(self.path):
            raise InvalidInput(f"'{name}' is a link out of the input folder; it is not read")
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise InvalidInput(f"cannot open '{name}': {exc.strerror}") from None
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InvalidInput(f"'{name}' is not a regular file")
            data = source.read(limit + 1)
        if len(data) > limit:
            raise TooLarge(f"file exceeds the upload limit of {limit:,} bytes")
        return data

    def remove(self, name: str) -> bool:
        """Delete file ``name`` (a link itself, not its target) if present; whether it was."""
        try:
            path = self.file(name)
        except InvalidInput:
            return False
        if path.is_symlink() or path.is_file():
            path.unlink()
            return True
        return False

    def clear(self) -> tuple[int, int]:
        """Delete every file of the folder (links themselves, never their targets; hidden
        files and subfolders stay): how many were deleted and how many could not be."""
        if not self.path.is_dir():
            return 0, 0
        deleted = failed = 0
        for path in self.path.iterdir():
            if path.name.startswith(".") or not (path.is_symlink() or path.is_file()):
                continue
            try:
                path.unlink()
                deleted += 1
            except OSError as exc:
                log.warning("%s: not deleted: %s", path, exc)
                failed += 1
        return deleted, failed

    def files(self) -> list[Path]:
        """The regular files in the folder, by name, and links to files inside it;
        links leading out of the folder are left out (and logged)."""
        if not self.path.is_dir():
            return []
        found = []
        for path in self.path.iterdir():
            if path.name.startswith(".") or not path.is_file():
                continue
            if path.is_symlink() and not self.inside(path):
                log.warning("%s: a link out of the input folder %s; not read", path.name, self.path)
                continue
            found.append(path)
        return sorted(found)
