"""Load named SQL blocks from ``.sql`` files, and fill their identifier placeholders.

A file holds blocks introduced by a ``-- name: NAME`` line; comment lines
that follow the name line document the block and are kept in the SQL text.
A block that needs a schema or graph name, or a vector search's index cast,
writes it as a ``{placeholder}``; :func:`render` is the one place such
placeholders are filled.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

from .dimensions import HalfvecCast
from .identifiers import Identifier

_HEADER = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_DOLLAR_QUOTE = re.compile(r"\$\w*\$")


def parse_queries(text: str, filename: str) -> dict[str, str]:
    """Return ``{name: sql}`` for every named block of ``text`` (read from ``filename``)."""
    parts = _HEADER.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"duplicate query name {name!r} in {filename}")
        queries[name] = body.strip().rstrip(";")
    return queries


def statements(sql: str) -> list[str]:
    """The statements of a block that holds several, each without its ``;``.

    A block is split after each line of SQL (not a comment) that ends with ``;`` outside a
    dollar-quoted body.
    For the few blocks sent one statement at a time: a Citus coordinator forwards some
    DDL to the workers as the text it received, which must then be one command.
    """
    found: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for line in sql.splitlines():
        current.append(line)
        for tag in _DOLLAR_QUOTE.findall(line):
            quote = tag if quote is None else (None if tag == quote else quote)
        if quote is None and not line.lstrip().startswith("--") and line.rstrip().endswith(";"):
            found.append("\n".join(current).strip().rstrip(";"))
            current = []
    rest = "\n".join(current).strip()
    if rest and not all(part.lstrip().startswith("--") for part in rest.splitlines() if part.strip()):
        found.append(rest)
    return found


@cache
def load_queries(package: str, filename: str) -> dict[str, str]:
    """Return ``{name: sql}`` for every named block of ``package/filename``."""
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    return parse_queries(text, filename)


@cache
def load_queries_at(path: Path) -> dict[str, str]:
    """Return ``{name: sql}`` for every named block of the file at ``path``."""
    return parse_queries(path.read_text(encoding="utf-8"), path.name)


@cache
def load_vector_queries(package: str, filename: str, halfvec: HalfvecCast) -> dict[str, str]:
    """Like :func:`load_queries`, with every ``{halfvec}`` filled for one embedding width."""
    return {name: render(sql, halfvec=halfvec) for name, sql in load_queries(package, filename).items()}


def render(sql: str, **values: Identifier | int | HalfvecCast) -> str:
    """Fill the ``{name}`` placeholders of ``sql``.

    Identifiers come in quoted (an :class:`Identifier` only exists for a
    validated name); integers (such as AGE label ids) as literals; a
    :class:`~lightrag_pg.db.dimensions.HalfvecCast` (built from an integer
    dimension) as its cast; any other value is a programming error. Braces
    that name no given value (an array literal like ``'{a}'``) are left alone.
    """
    for key, value in values.items():
        if type(value) is not int and not isinstance(value, Identifier | HalfvecCast):
            raise TypeError(
                f"{key}: only identifiers, integers and halfvec casts go into SQL text, got {type(value)}"
            )

    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return match.group(0)
        if isinstance(value, Identifier):
            return value.quoted
        return value.sql if isinstance(value, HalfvecCast) else str(value)

    return _PLACEHOLDER.sub(fill, sql)
