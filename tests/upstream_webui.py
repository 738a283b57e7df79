"""Upstream LightRAG's built web UI, taken from its wheel at test time (never kept in the repository).

``pip download --no-deps lightrag-hku==<the version bench/differential.py compares against>``
into a scratch folder, then the wheel's ``lightrag/api/webui/`` files are unpacked beside it.
The browser tests serve those files at ``/webui/`` of ``lightrag-pg serve`` by intercepting
the browser's requests for them, so every API call reaches the real server.
"""

from __future__ import annotations

import mimetypes
import subprocess
import sys
import zipfile
from pathlib import Path

from bench.common import UPSTREAM_VERSION

WEBUI_IN_WHEEL = "lightrag/api/webui/"


def upstream_webui(scratch: Path) -> Path:
    """The folder holding upstream's built web UI (``index.html``, ``assets/``), downloaded once
    into ``scratch``."""
    target = scratch / f"webui-{UPSTREAM_VERSION}"
    if (target / "index.html").is_file():
        return target
    wheels = scratch / "wheels"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
    command += ["--quiet", "--only-binary", ":all:", "-d", str(wheels), f"lightrag-hku=={UPSTREAM_VERSION}"]
    subprocess.run(command, check=True, timeout=600)
    (wheel,) = wheels.glob(f"lightrag_hku-{UPSTREAM_VERSION}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(WEBUI_IN_WHEEL) and not name.endswith("/"):
                path = target / name.removeprefix(WEBUI_IN_WHEEL)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(archive.read(name))
    return target


def webui_file(root: Path, url_path: str) -> tuple[bytes, str] | None:
    """The content and type of the web UI file at ``url_path`` (below ``/webui/``), if any."""
    relative = url_path.split("?", 1)[0].split("#", 1)[0] or "index.html"
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        return None
    return path.read_bytes(), mimetypes.guess_type(path.name)[0] or "application/octet-stream"
