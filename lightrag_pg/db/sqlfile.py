"""Load named SQL blocks from ``.sql`` files, and fill their identifier placeholders.

A file holds blocks introduced by a ``-- name: NAME`` line; comment lines
that follow the name line document the block and are kept in the SQL text.
A block that needs a schema or graph name, or a vector search's index cast,
writes it as a ``{placeholder}``; :func:`render` is the one place such
placeholders are filled.

A text written several times in one file is a ``-- fragment: NAME`` block, which is
no query of its own; a block uses it with a line ``-- include: NAME key=value ...``
(a value with spaces in double quotes), which becomes the fragment's text with its
``{key}`` placeholders replaced by the values, before any :func:`render`; a fragment may
include others (not itself).

A statement may name its parameters ``:name`` instead of numbering them ``$1``;
:func:`positional` turns the names into the driver's ``$n`` (in order of first use) and
:func:`bind` orders a mapping of values to match, refusing a missing or unknown name.
"""

from __future__ import annotations

import re
import shlex
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

from .dimensions import HalfvecCast
from .identifiers import Identifier

_HEADER = re.compile(r"^-- (name|fragment): (\w+)\s*$", re.MULTILINE)
_INCLUDE = re.compile(r"^[ \t]*-- include: (\w+)(.*)$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_DOLLAR_QUOTE = re.compile(r"\$\w*\$")
_NAMED_OR_SKIPPED = re.compile(
    r"(?P<skip>--[^\n]*|(?<!\w)[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|(?P<tag>\$\w*\$).*?(?P=tag)|::)"
    r"|(?<![\w:]):(?P<name>[A-Za-z_]\w*)",
    re.DOTALL,
)


def parse_queries(text: str, filename: str) -> dict[str, str]:
    """Return ``{name: sql}`` for every named block of ``text`` (read from ``filename``),
    with its includes expanded."""
    parts = _HEADER.split(text)
    blocks: dict[str, dict[str, str]] = {"name": {}, "fragment": {}}
    for kind, name, body in zip(parts[1::3], parts[2::3], parts[3::3], strict=True):
        if name in blocks["name"] or name in blocks["fragment"]:
            raise ValueError(f"duplicate query name {name!r} in {filename}")
        blocks[kind][name] = body.strip().rstrip(";")
    fragments = blocks["fragment"]

    def expand(sql: str, within: tuple[str, ...]) -> str:
        def include(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in fragments:
                raise ValueError(f"{filename}: include of unknown fragment {name!r}")
            if name in within:
                raise ValueError(f"{filename}: fragment {name!r} includes itself")
            values = dict(arg.split("=", 1) for arg in shlex.split(match.group(2)))
            body = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), fragments[name])
            missing = set(values) - set(_PLACEHOLDER.findall(fragments[name]))
            if missing:
                raise ValueError(f"{filename}: fragment {name!r} has no placeholder {sorted(missing)}")
            return expand(body, (*within, name))

        return _INCLUDE.sub(include, sql)

    return {name: expand(sql, ()) for name, sql in blocks["name"].items()}


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


@lru_cache(maxsize=512)
def positional(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with each ``:name`` parameter replaced by ``$n`` (the same name, the same
    number; numbered in order of first use), and the names in that order.

    Comments, quoted literals and identifiers, dollar-quoted bodies and ``::`` casts are
    left alone, so ``:chunk_query::vector`` is the parameter ``chunk_query`` cast to
    ``vector`` and ``'[[:alpha:]]'`` stays as written. A statement mixing ``:name`` and
    ``$n`` parameters is refused.
    """
    names: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        name = match.group("name")
        if name is None:
            return match.group(0)
        return f"${names.setdefault(name, len(names) + 1)}"

    converted = _NAMED_OR_SKIPPED.sub(number, sql)
    if names and re.search(
        r"\$\d", _NAMED_OR_SKIPPED.sub(lambda m: "" if m.group("skip") else m.group(0), sql)
    ):
        raise ValueError("a statement uses either :name or $n parameters, not both")
    return converted, tuple(names)


def bind(names: tuple[str, ...], values: dict[str, object]) -> tuple[object, ...]:
    """The arguments for a statement whose parameters are ``names`` (from
    :func:`positional`), taken from ``values`` by name; a name without a value or a value
    without a name is a programming error."""
    missing, unknown = set(names) - set(values), set(values) - set(names)
    if missing or unknown:
        raise ValueError(f"parameters: missing {sorted(missing)}, unknown {sorted(unknown)}")
    return tuple(values[name] for name in names)


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
