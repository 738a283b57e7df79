"""Turning uploaded files into text, within bounds.

Text, Markdown and CSV are decoded here: UTF-8, or UTF-16 / UTF-32 when the
file starts with their byte order mark. PDF, Word, PowerPoint, Excel and HTML
are converted by :mod:`.convert_worker` in a fresh process per file, limited in
CPU time, memory and wall-clock time (:class:`~.settings.ConversionLimits`),
with zip-based files checked for decompression bombs before they are parsed; a
parser that blows up costs the server nothing but the wait. At most
``concurrent`` such processes run at once, shared fairly between workspaces.
A file that cannot be read raises :class:`UnreadableFile` with the reason
(naming the limit it exceeded, if any), which the server records as a failed
document.
"""

from __future__ import annotations

import asyncio
import codecs
import csv
import io
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from ..errors import InvalidInput
from ..tasks import FairScheduler
from . import convert_worker
from .settings import CONVERSION_ENV, ConversionLimits

WORKER = Path(convert_worker.__file__)

WORKER_LIMITS = (
    "memory_bytes",
    "cpu_seconds",
    "max_unzipped_bytes",
    "max_zip_ratio",
    "max_zip_members",
    "max_text_chars",
)
"""The limits the worker process applies itself; the wall clock is kept here."""

LIMIT_VARIABLE = {name: variable for variable, (name, _) in CONVERSION_ENV.items()}

WORKER_ENVIRONMENT = frozenset({"PATH", "PYTHONPATH", "PYTHONHOME", "HOME", "TMPDIR", "LANG"})
"""The variables a worker inherits (and ``LC_*``): never the server's keys and passwords."""

STDERR_TAIL = 2048
"""Bytes of the worker's error output kept to explain a crash."""

BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Byte order marks and the codec that reads past them (UTF-32's first: it starts like UTF-16's)."""


class UnreadableFile(InvalidInput):
    """A file of a supported type whose content could not be extracted."""


def over_limit(limits: ConversionLimits, name: str, detail: str) -> UnreadableFile:
    """The failure of a file that exceeds limit ``name``, naming its variable and value."""
    value = getattr(limits, name)
    shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
    return UnreadableFile(f"{detail}: over the limit {LIMIT_VARIABLE[name]}={shown}")


def decode(data: bytes) -> str:
    """``data`` as text: UTF-8, or the UTF-16 / UTF-32 its byte order mark announces."""
    codec = next((c for bom, c in BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        name = {"utf-8-sig": "UTF-8", "utf-8": "UTF-8"}.get(codec, codec.upper())
        raise UnreadableFile(
            f"not {name} text (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None


def _text(data: bytes) -> str:
    return decode(data)


def _csv(data: bytes) -> str:
    rows = csv.reader(io.StringIO(decode(data)))
    return "\n".join(" | ".join(cell.strip() for cell in row) for row in rows if any(c.strip() for c in row))


TEXT_CONVERTERS: dict[str, Callable[[bytes], str]] = {".txt": _text, ".md": _text, ".csv": _csv}
"""Types read in the server itself: their text is never larger than the file."""

SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(sorted({*TEXT_CONVERTERS, *convert_worker.CONVERTERS}))


def supported(name: str) -> bool:
    """Whether files named ``name`` can be converted."""
    return Path(name).suffix.lower() in SUPPORTED_EXTENSIONS


class Converter:
    """Converts files within :class:`~.settings.ConversionLimits`; one per server."""

    def __init__(self, limits: ConversionLimits) -> None:
        self.limits = limits
        self.slots = FairScheduler(limits.concurrent, linger=0.0)
        """Conversions of the workspaces take turns in ``limits.concurrent`` slots."""

    async def convert(self, workspace: str, name: str, data: bytes) -> str:
        """The text of file ``name`` with content ``data``, converted on behalf of
        ``workspace``; :class:`UnreadableFile` if there is none or a limit is exceeded."""
        suffix = Path(name).suffix.lower()
        if suffix in TEXT_CONVERTERS:
            text = await asyncio.to_thread(TEXT_CONVERTERS[suffix], data)
        elif suffix in convert_worker.CONVERTERS:
            text = await self.slots.run(workspace, lambda: self._in_worker(suffix, data))
        else:
            raise UnreadableFile(f"unsupported file type {suffix or '(none)'!r}")
        if len(text) > self.limits.max_text_chars:
            raise over_limit(self.limits, "max_text_chars", f"its text has {len(text):,} characters")
        if not text.strip():
            raise UnreadableFile("no text found in the file")
        return text

    async def _in_worker(self, suffix: str, data: bytes) -> str:
        limits = self.limits
        arguments = json.dumps({name: getattr(limits, name) for name in WORKER_LIMITS})
        environment = {k: v for k, v in os.environ.items() if k in WORKER_ENVIRONMENT or k.startswith("LC_")}
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-P", str(WORKER), suffix, arguments, env=environment,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
        except OSError as exc:
            raise UnreadableFile(f"cannot start the {suffix} converter: {exc}") from exc
        try:
            exchange = _exchange(process, data, 4 * limits.max_text_chars + 4096)
            out, err = await asyncio.wait_for(exchange, limits.timeout_seconds)
        except TimeoutError:
            detail = f"conversion took longer than {limits.timeout_seconds:g} s"
            raise over_limit(limits, "timeout_seconds", detail) from None
        except OverflowError:
            raise over_limit(limits, "max_text_chars", "its text is too long") from None
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        return self._outcome(suffix, process.returncode, out, err)

    def _outcome(self, suffix: str, status: int | None, out: bytes, err: bytes) -> str:
        if status == 0:
            return out.decode("utf-8")
        if status == convert_worker.FAILED:
            failure = json.loads(out)
            if failure["limit"] in LIMIT_VARIABLE:
                raise over_limit(self.limits, failure["limit"], failure["reason"])
            raise UnreadableFile(failure["reason"])
        if status in (-signal.SIGXCPU, -signal.SIGKILL):
            detail = f"conversion used more than {self.limits.cpu_seconds} s of CPU time"
            raise over_limit(self.limits, "cpu_seconds", detail)
        how = (
            f"signal {-status} ({signal.strsignal(-status)})"
            if status and status < 0
            else f"exit status {status}"
        )
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise UnreadableFile(f"the {suffix} converter stopped with {how}{': ' + last[0] if last else ''}")


async def _exchange(process: asyncio.subprocess.Process, data: bytes, cap: int) -> tuple[bytes, bytes]:
    """Send ``data`` to the process's stdin, read its stdout (:class:`OverflowError`
    past ``cap`` bytes) and the tail of its stderr, and wait for it to exit."""
    assert process.stdin and process.stdout and process.stderr

    async def feed() -> None:
        assert process.stdin
        try:
            process.stdin.write(data)
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it stopped reading; its exit status says why
        finally:
            process.stdin.close()

    async def read(stream: asyncio.StreamReader, keep: int, *, tail: bool) -> bytes:
        kept = bytearray()
        while chunk := await stream.read(1 << 16):
            kept += chunk
            if len(kept) > keep:
                if not tail:
                    raise OverflowError(f"more than {keep:,} bytes")
                del kept[:-keep]
        return bytes(kept)

    _, out, err = await asyncio.gather(
        feed(), read(process.stdout, cap, tail=False), read(process.stderr, STDERR_TAIL, tail=True)
    )
    await process.wait()
    return out, err
