"""Load named SQL blocks from ``.sql`` files shipped next to the code.

A file holds blocks introduced by a ``-- name: NAME`` line; comment lines
that follow the name line document the block and are kept in the SQL text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_HEADER = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@cache
def load_queries(package: str, filename: str) -> dict[str, str]:
    """Return ``{name: sql}`` for every named block of ``package/filename``."""
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    parts = _HEADER.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"duplicate query name {name!r} in {filename}")
        queries[name] = body.strip().rstrip(";")
    return queries
