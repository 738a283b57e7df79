"""What converting an uploaded file costs the server: in its own process (as before
conversions moved out) or in a worker process per file (``server/convert.py``).

For each document type, a small sample is converted ``--repeat`` times both ways
(the in-process figure is after the first call has imported the library), giving the
start-up cost of a worker per file, in wall time and in the worker's CPU time (which
a busy machine does not inflate). Then a .docx decompression bomb (``--paragraphs``
one-letter paragraphs, ~34 bytes of XML each) is converted both ways: in-process as
the server used to, and by the converter with the zip checks relaxed so that the
parser runs into the process limits (``--cpu-seconds``, ``--memory-mib``), and with the
default limits (refused by its compression ratio). Each line gives the wall time, the
growth of this process's peak memory (VmHWM) and the peak of the worker.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lightrag_pg.server import convert_worker
from lightrag_pg.server.convert import Converter
from lightrag_pg.server.settings import MIB, ConversionLimits
from tests.server_files import SAMPLES, docx_bomb

TEXT = "Alice founded Acme in Paris. Bob joined Acme in Berlin."


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def child_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


async def measured(label: str, run: Callable[[], Awaitable[str]]) -> None:
    Path("/proc/self/clear_refs").write_text("5")
    before = status_kib("VmRSS")
    started = time.perf_counter()
    try:
        outcome = f"{len(await run()):,} characters"
    except Exception as exc:
        outcome = f"failed: {str(exc)[-90:]}"
    seconds = time.perf_counter() - started
    growth = (status_kib("VmHWM") - before) / 1024
    print(
        f"{label:<34} {seconds:7.2f} s  server +{growth:6.0f} MiB  workers' peak {child_peak_mib():5.0f} MiB"
    )
    print(f"{'':<34} {outcome}")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def per_type(repeat: int) -> None:
    converter = Converter(ConversionLimits())
    print(f"{'type':<6} {'in-process ms':>14} {'worker ms':>10} {'worker CPU ms':>14}  (median of {repeat})")
    for suffix, run in convert_worker.CONVERTERS.items():
        if suffix not in SAMPLES:
            continue
        data = SAMPLES[suffix](TEXT)
        run(data)
        inside, outside, cpu = [], [], []
        for _ in range(repeat):
            started = time.perf_counter()
            run(data)
            inside.append(time.perf_counter() - started)
            started, used = time.perf_counter(), children_cpu()
            await converter.convert("bench", f"sample{suffix}", data)
            outside.append(time.perf_counter() - started)
            cpu.append(children_cpu() - used)
        ms = [statistics.median(x) * 1000 for x in (inside, outside, cpu)]
        print(f"{suffix:<6} {ms[0]:14.1f} {ms[1]:10.1f} {ms[2]:14.1f}")


async def bomb(args: argparse.Namespace) -> None:
    data = docx_bomb(args.paragraphs)
    print(f"\nbomb: {len(data):,} bytes, {args.paragraphs:,} paragraphs")
    loose = ConversionLimits(
        max_zip_ratio=1e9,
        max_unzipped_bytes=1 << 40,
        cpu_seconds=args.cpu_seconds,
        memory_bytes=args.memory_mib * MIB,
    )
    await measured("worker, zip checks relaxed", lambda: Converter(loose).convert("b", "bomb.docx", data))
    await measured(
        "worker, default limits", lambda: Converter(ConversionLimits()).convert("b", "b.docx", data)
    )
    if not args.skip_in_process:
        run = convert_worker.CONVERTERS[".docx"]
        await measured("in the server process (before)", lambda: asyncio.to_thread(run, data))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--paragraphs", type=int, default=700_000)
    parser.add_argument("--cpu-seconds", type=int, default=20)
    parser.add_argument("--memory-mib", type=int, default=1024)
    parser.add_argument("--skip-in-process", action="store_true", help="do not convert the bomb in-process")
    args = parser.parse_args()
    asyncio.run(per_type(args.repeat))
    asyncio.run(bomb(args))


if __name__ == "__main__":
    main()
