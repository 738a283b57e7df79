"""Documentation packaged in Debian, fetched at run time, and HTML read as headed blocks.

:func:`package_files` downloads a package with ``apt-get download`` into a cache
directory and unpacks the members asked for (nothing of it is committed);
:func:`html_blocks` turns an HTML page into a flat list of headings, list terms and
paragraphs, which the set builders (:mod:`bench.doc_faqs`, :mod:`bench.git_docs`) cut
into passages.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

_SPACES = re.compile(r"\s+")


def package_files(cache_dir: Path, package: str, members: Sequence[str]) -> dict[str, Path]:
    """The files ``members`` (paths inside the package, ``usr/share/...``) of Debian package
    ``package``, from ``cache_dir/package`` or unpacked there from ``apt-get download``."""
    target = cache_dir / package
    paths = {m: target / m for m in members}
    if all(p.exists() for p in paths.values()):
        return paths
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        work = Path(tmp)
        subprocess.run(["apt-get", "download", package], cwd=work, check=True, capture_output=True)
        (deb,) = work.glob(f"{package}_*.deb")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "x")], check=True)
        for member, path in paths.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(work / "x" / member, path)
        shutil.copy(deb, target / deb.name)
    return paths


@dataclass(frozen=True, slots=True)
class Block:
    """One unit of an HTML page: ``kind`` is ``h1``-``h4``, ``dt`` (a list term, with its
    list ``depth``, 1 for a top-level list) or ``p`` (any other text: paragraphs, list
    items, listings)."""

    kind: str
    text: str
    depth: int = 0


_HEADINGS = {"h1", "h2", "h3", "h4"}
_BREAKS = {"p", "div", "pre", "li", "dd", "tr", "br", "table", "ul", "ol", "blockquote"}


class _Blocks(HTMLParser):
    """Collects :class:`Block` items; text outside headings and terms becomes ``p`` blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.text: list[str] = []
        self.kind = "p"
        self.lists = 0
        self.pre = 0
        self.skip = 0

    def flush(self) -> None:
        raw = "".join(self.text)
        text = raw.strip("\n") if self.pre else _SPACES.sub(" ", raw).strip()
        if text:
            self.blocks.append(Block(self.kind, text, self.lists if self.kind == "dt" else 0))
        self.text = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "title"):
            self.skip += 1
        elif tag in _HEADINGS or tag == "dt":
            self.flush()
            self.kind = tag
        elif tag == "dl":
            self.flush()
            self.lists += 1
        elif tag in _BREAKS:
            self.flush()
            self.pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self.skip = max(0, self.skip - 1)
        elif tag in _HEADINGS or tag == "dt":
            self.flush()
            self.kind = "p"
        elif tag == "dl":
            self.flush()
            self.lists = max(0, self.lists - 1)
        elif tag in _BREAKS:
            self.flush()
            if tag == "pre":
                self.pre = max(0, self.pre - 1)

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.text.append(data)


def html_blocks(html: str) -> list[Block]:
    """The headings, list terms and text blocks of ``html``, in order."""
    parser = _Blocks()
    parser.feed(html)
    parser.close()
    parser.flush()
    return parser.blocks


def join_blocks(blocks: Sequence[Block]) -> str:
    """The text of ``blocks``, one paragraph each."""
    return "\n\n".join(b.text for b in blocks)
