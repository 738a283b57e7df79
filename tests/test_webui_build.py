"""The committed web UI build: current with its sources, self-contained, served at /webui."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from lightrag_pg.server import ServerSettings
from lightrag_pg.server.app import WEBUI

from .server_support import serving

ROOT_FILES = ("index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts")
WEBUI_SOURCES = Path(__file__).resolve().parents[1] / "webui"


def source_hash(root: Path) -> str:
    """The hash webui/scripts/stamp.mjs records: every source path and its bytes, in path order."""
    paths = [root / name for name in ROOT_FILES if (root / name).is_file()]
    for folder in ("src", "public"):
        paths += [p for p in (root / folder).rglob("*") if p.is_file()]
    digest = hashlib.sha256()
    for rel in sorted(p.relative_to(root).as_posix() for p in paths):
        digest.update(rel.encode() + b"\0")
        digest.update((root / rel).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_the_built_assets_are_current_with_the_sources() -> None:
    recorded = (WEBUI / "SOURCE_HASH").read_text().strip()
    assert recorded == source_hash(WEBUI_SOURCES), "webui/ changed since the last build: run `make webui`"


def test_the_build_loads_nothing_from_elsewhere() -> None:
    index = (WEBUI / "index.html").read_text()
    assets = re.findall(r'(?:src|href)="([^"]+)"', index)
    assert assets and all(a.startswith("/webui/assets/") or a == "data:," for a in assets), assets
    for asset in assets:
        if asset.startswith("/webui/"):
            assert (WEBUI / asset.removeprefix("/webui/")).is_file()
    assert not re.search(r'(?:src|href)="https?://', index)


@pytest.mark.slow
async def test_the_server_redirects_to_the_ui_and_serves_it(
    dsn: str, workspace_name: str, tmp_path: Path
) -> None:
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, input_dir=tmp_path, api_key="secret")
    async with serving(settings) as served:
        client = served.client
        root = await client.get("/")
        assert root.status_code in (302, 307) and root.headers["location"] == "/webui/"
        page = await client.get("/webui/")
        assert page.status_code == 200 and '<div id="app">' in page.text
        script = re.search(r'src="/webui/(assets/[^"]+\.js)"', page.text)
        assert script and (await client.get(f"/webui/{script.group(1)}")).status_code == 200
        assert (await client.get("/documents/status_counts")).status_code == 403
