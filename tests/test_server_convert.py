"""File conversion within bounds: decompression bombs, converters that run away, fair
conversion slots across workspaces, UTF-16/32 text, and scans that stay in the input folder."""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import pytest_asyncio

from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.errors import ConfigurationError, InvalidInput
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.convert import Converter, UnreadableFile
from lightrag_pg.server.files import InputFolder
from lightrag_pg.server.settings import ConversionLimits

from .server_files import docx, docx_amplifier, docx_bomb
from .server_support import Served, counted, serving

pytestmark = pytest.mark.slow

LOOSE_ZIP: dict[str, Any] = {"max_zip_ratio": 1e6, "max_unzipped_bytes": 1 << 34}
"""Zip checks that let a bomb through to its parser, to exercise the process limits."""


def conversion_processes(parent: int) -> set[int]:
    """The conversion worker processes whose parent is ``parent``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            parent_of = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent_of == parent and b"convert_worker" in command:
            found.add(int(entry.name))
    return found


def memory_kib(pid: int, field: str) -> int:
    """``VmRSS`` / ``VmHWM`` (peak) of process ``pid``, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


@pytest_asyncio.fixture
async def cleanup(conn: asyncpg.Connection) -> AsyncIterator[list[str]]:
    """Workspaces to drop after the test."""
    names: list[str] = []
    yield names
    for name in names:
        if await workspace_exists(conn, name):
            await drop_workspace(conn, name)


def settings_for(dsn: str, workspace: str, tmp_path: Path, **limits: Any) -> ServerSettings:
    return ServerSettings(
        dsn=dsn,
        default_workspace=workspace,
        allow_create=True,
        input_dir=tmp_path / "inputs",
        conversion=ConversionLimits(**limits),
    )


async def upload(server: Served, name: str, data: bytes, workspace: str | None = None) -> str:
    headers = {"LIGHTRAG-WORKSPACE": workspace} if workspace else {}
    response = await server.client.post("/documents/upload", files={"file": (name, data)}, headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["track_id"])


async def one_document(server: Served, track: str, workspace: str | None = None) -> dict[str, Any]:
    (doc,) = (await server.track(track, workspace=workspace))["documents"]
    return dict(doc)


async def test_a_docx_bomb_fails_within_its_limits(
    workspace_name: str, tmp_path: Path, serve_process: Callable[..., Any]
) -> None:
    """A ~130 KB .docx of 24 MB of XML used to take the server's memory by hundreds of MB
    and tens of seconds (minutes on a busy machine), holding the one conversion lock."""
    bomb, amplifier = docx_bomb(), docx_amplifier()
    with serve_process(workspace_name, tmp_path, CONVERT_MEMORY=str(256 << 20)) as server:
        pid = server.process.pid
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            served = Served(None, client, workspace_name)
            warm = await one_document(served, await upload(served, "warm.md", b"Alice lives in Paris."))
            assert warm["status"] == "processed"
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # restart the peak (VmHWM)
            before = memory_kib(pid, "VmRSS")
            started = time.monotonic()
            tracks = [await upload(served, "bomb.docx", bomb), await upload(served, "big.docx", amplifier)]
            refused, stopped = [await one_document(served, t) for t in tracks]
            elapsed = time.monotonic() - started
            growth_mib = (memory_kib(pid, "VmHWM") - before) / 1024
    assert refused["status"] == "failed" and "MAX_ZIP_RATIO=100" in refused["error_msg"], refused
    assert "word/document.xml expands" in refused["error_msg"]
    assert stopped["status"] == "failed" and "CONVERT_MEMORY=268,435,456" in stopped["error_msg"], stopped
    assert elapsed < 30, elapsed
    assert growth_mib < 64, f"the server grew by {growth_mib:.0f} MiB"


async def test_a_zip_that_expands_too_far_is_refused_before_it_is_parsed(
    dsn: str, workspace_name: str, tmp_path: Path, cleanup: list[str]
) -> None:
    cleanup.append(workspace_name)
    async with serving(settings_for(dsn, workspace_name, tmp_path)) as server:
        started = time.monotonic()
        doc = await one_document(server, await upload(server, "bomb.docx", docx_bomb()))
        assert time.monotonic() - started < 20
        assert doc["status"] == "failed" and doc["content_length"] == 0
        assert "expands 234 times (23,800,460 bytes from 101,730)" in doc["error_msg"], doc["error_msg"]
        assert doc["error_msg"].endswith("over the limit MAX_ZIP_RATIO=100")
        assert (await server.client.get("/documents/status_counts")).json()["status_counts"] == counted(
            failed=1
        )


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        (
            {"max_unzipped_bytes": 20_000},
            r"the archive expands to [\d,]+ bytes: over the limit MAX_UNZIPPED_SIZE=20,000",
        ),
        ({"max_zip_members": 5}, r"the archive holds \d+ members: over the limit MAX_ZIP_ENTRIES=5"),
        ({"max_text_chars": 10}, "its text has 27 characters: over the limit MAX_TEXT_CHARS=10"),
    ],
)
async def test_each_zip_and_text_limit_is_named(limits: dict[str, Any], named: str) -> None:
    converter = Converter(ConversionLimits(**limits))
    with pytest.raises(UnreadableFile, match=named):
        await converter.convert("w", "a.docx", docx("Alice founded Acme in Paris"))


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        (
            {"cpu_seconds": 2, "timeout_seconds": 120},
            "used more than 2 s of CPU time: over the limit CONVERT_CPU_SECONDS=2",
        ),
        (
            {"timeout_seconds": 2, "cpu_seconds": 120},
            "took longer than 2 s: over the limit CONVERT_TIMEOUT=2",
        ),
    ],
)
async def test_a_converter_that_runs_away_is_killed_at_its_limit(
    dsn: str, workspace_name: str, tmp_path: Path, cleanup: list[str], limits: dict[str, Any], named: str
) -> None:
    """The bomb past the zip checks: python-docx parses its 24 MB for tens of seconds."""
    cleanup.append(workspace_name)
    async with serving(settings_for(dsn, workspace_name, tmp_path, **LOOSE_ZIP, **limits)) as server:
        started = time.monotonic()
        doc = await one_document(server, await upload(server, "bomb.docx", docx_bomb()))
        assert time.monotonic() - started < 60
        assert doc["status"] == "failed" and named in doc["error_msg"], doc["error_msg"]
        assert not conversion_processes(os.getpid())


async def test_two_workspaces_convert_at_the_same_time(
    dsn: str, workspace_name: str, tmp_path: Path, cleanup: list[str]
) -> None:
    """Conversions used to hold one lock for every workspace: a slow file in one held up all."""
    other = f"{workspace_name}_b"
    cleanup += [workspace_name, other]
    settings = settings_for(dsn, workspace_name, tmp_path, **LOOSE_ZIP, timeout_seconds=8)
    bomb = docx_bomb()
    async with serving(settings) as server:
        opened = await server.client.get("/documents/status_counts", headers={"LIGHTRAG-WORKSPACE": other})
        assert opened.status_code == 200
        uploads = asyncio.gather(upload(server, "bomb.docx", bomb), upload(server, "bomb.docx", bomb, other))
        most = 0
        for _ in range(400):
            most = max(most, len(conversion_processes(os.getpid())))
            if most == 2:
                break
            await asyncio.sleep(0.02)
        assert most == 2, "the two workspaces' conversions did not run together"
        started = time.monotonic()
        assert (await server.client.get("/health")).status_code == 200
        assert time.monotonic() - started < 2, "a conversion blocked the event loop"
        tracks = await uploads
        for track, workspace in zip(tracks, [None, other], strict=True):
            doc = await one_document(server, track, workspace)
            assert doc["status"] == "failed" and "CONVERT_TIMEOUT" in doc["error_msg"]


async def test_conversions_take_turns_between_workspaces() -> None:
    slots = Converter(ConversionLimits(concurrent=1)).slots
    order: list[str] = []
    release = asyncio.Event()

    async def convert(key: str, hold: bool = False) -> None:
        async def job() -> None:
            order.append(key)
            if hold:
                await release.wait()

        await slots.run(key, job)

    first = asyncio.create_task(convert("a", hold=True))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(convert(k)) for k in ("a", "a", "a", "b", "c")]
    gone = asyncio.create_task(convert("b"))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    assert slots.waiting == 5
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["a", "b", "c", "a", "a", "a"]
    assert slots.waiting == 0 and slots.running == 0  # the cancelled waiter left no slot taken


async def test_a_cancelled_conversion_kills_its_process() -> None:
    converter = Converter(ConversionLimits(**LOOSE_ZIP))
    task = asyncio.create_task(converter.convert("w", "bomb.docx", docx_bomb()))
    for _ in range(400):
        if conversion_processes(os.getpid()):
            break
        await asyncio.sleep(0.02)
    (worker,) = conversion_processes(os.getpid())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert worker not in conversion_processes(os.getpid())


TEXT = "Alice founded Acme in Paris; Zoë joined in Köln."


async def test_utf16_and_utf32_text_with_a_byte_order_mark_is_read(
    dsn: str, workspace_name: str, tmp_path: Path, cleanup: list[str]
) -> None:
    """UTF-16 and UTF-32 files were refused as "not UTF-8 text"."""
    cleanup.append(workspace_name)
    files = {
        "utf16.txt": TEXT.encode("utf-16"),
        "utf16be.md": "\ufeff".encode("utf-16-be") + f"# {TEXT}".encode("utf-16-be"),
        "utf32.csv": f"note,value\n{TEXT.replace(';', ' and')},1\n".encode("utf-32"),
    }
    async with serving(settings_for(dsn, workspace_name, tmp_path)) as server:
        tracks = {name: await upload(server, name, data) for name, data in files.items()}
        for name, track in tracks.items():
            doc = await one_document(server, track)
            assert doc["status"] == "processed", (name, doc["error_msg"])
            assert "Zoë joined in Köln" in doc["content_summary"], doc["content_summary"]
        odd = await one_document(server, await upload(server, "odd.txt", b"\xff\xfeA"))
        assert odd["status"] == "failed" and "not UTF-16 text" in odd["error_msg"]


async def test_scan_does_not_follow_symlinks_out_of_the_input_folder(
    dsn: str, workspace_name: str, tmp_path: Path, cleanup: list[str]
) -> None:
    """A link in the input folder to a file elsewhere used to be read and indexed."""
    cleanup.append(workspace_name)
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4711.")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "far.md").write_text("The far code is 1234.")
    folder = tmp_path / "inputs" / workspace_name
    (folder / "kept").mkdir(parents=True)
    (folder / "kept" / "deep.txt").write_text("Carol lives in Berlin.")
    (folder / "own.txt").write_text("Alice lives in Paris.")
    (folder / "inside.txt").symlink_to(folder / "kept" / "deep.txt")
    (folder / "out.txt").symlink_to(secret)
    (folder / "relative.md").symlink_to(Path("..") / ".." / "outside" / "far.md")
    (folder / "dir.txt").symlink_to(tmp_path / "outside")
    async with serving(settings_for(dsn, workspace_name, tmp_path)) as server:
        response = await server.client.post("/documents/scan")
        assert "2 new file(s)" in response.json()["message"], response.json()
        tracked = await server.track(response.json()["track_id"], count=2)
        assert sorted(d["file_path"] for d in tracked["documents"]) == ["inside.txt", "own.txt"]
        assert {d["status"] for d in tracked["documents"]} == {"processed"}
        counts = (await server.client.get("/documents/status_counts")).json()["status_counts"]
        assert counts == counted(processed=2)
    assert secret.read_text() == "The vault code is 4711."

    inputs = InputFolder(tmp_path / "inputs", workspace_name)
    with pytest.raises(InvalidInput, match="link out of the input folder"):
        inputs.read("out.txt", 1000)
    assert inputs.read("inside.txt", 1000) == b"Carol lives in Berlin."
    assert inputs.remove("inside.txt") and (folder / "kept" / "deep.txt").exists()


def test_conversion_limits_come_from_the_environment() -> None:
    env = {"CONVERT_TIMEOUT": "12.5", "CONVERT_MEMORY": "536870912", "MAX_ZIP_RATIO": "50"}
    limits = ServerSettings.from_env(env).conversion
    assert (limits.timeout_seconds, limits.memory_bytes, limits.max_zip_ratio) == (12.5, 512 << 20, 50)
    assert limits.cpu_seconds == ConversionLimits().cpu_seconds
    with pytest.raises(ConfigurationError, match="MAX_CONVERSIONS must be a number"):
        ServerSettings.from_env({"MAX_CONVERSIONS": "many"})
    with pytest.raises(ConfigurationError, match="cpu_seconds must be a positive number"):
        ConversionLimits(cpu_seconds=0)


async def test_headings_come_out_as_markdown_headings() -> None:
    """The bridge finds an entity's home by its heading (``store/retrieval.sql``): a Word
    or HTML heading becomes a Markdown one."""
    import docx as python_docx

    document = python_docx.Document()
    document.add_heading("Globex", level=2)
    document.add_paragraph("Alice started it.")
    out = io.BytesIO()
    document.save(out)
    converter = Converter(ConversionLimits())
    assert await converter.convert("w", "a.docx", out.getvalue()) == "## Globex\nAlice started it."
    page = b"<html><body><h3>The <b>Globex</b> studio</h3><p>Alice started it.</p></body></html>"
    assert await converter.convert("w", "a.html", page) == "### The Globex studio\nAlice started it."
