"""Validation of workspace names, which become schema and graph names in SQL.

A workspace name is checked once, where it enters (``LightRAG(workspace=...)``, the
CLI's ``--workspace``, the server's settings and request paths), by building a
:class:`WorkspaceName`; every layer below takes that type. The only way an
identifier reaches SQL text is an :class:`Identifier`, built from a
:class:`WorkspaceName` by :func:`schema_of` or :func:`graph_of`, and written into a
named SQL block by :func:`lightrag_pg.db.sqlfile.render`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidWorkspaceName

GRAPH_SUFFIX = "_kg"
MAX_WORKSPACE_LENGTH = 63 - len(GRAPH_SUFFIX)

_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_RESERVED = frozenset({"public", "information_schema", "ag_catalog", "pg_catalog", "pg_toast", "alembic"})


class WorkspaceName(str):
    """A workspace name that has been checked: ``WorkspaceName(name)`` raises
    :class:`~lightrag_pg.errors.InvalidWorkspaceName` unless ``name`` is safe (and
    returns a :class:`WorkspaceName` as it is).

    A workspace name is a lower-case ASCII identifier (letters, digits,
    underscores, not starting with a digit) of at most 60 bytes, that is not a
    system schema, does not start with ``pg_`` and does not end with the
    ``_kg`` suffix reserved for the workspace's AGE graph.
    """

    __slots__ = ()

    def __new__(cls, name: object) -> WorkspaceName:
        if type(name) is cls:
            return name
        return super().__new__(cls, _checked(name))


def validate_workspace(name: object) -> WorkspaceName:
    """``name`` as a :class:`WorkspaceName`, or :class:`~lightrag_pg.errors.InvalidWorkspaceName`."""
    return WorkspaceName(name)


def _checked(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidWorkspaceName(f"workspace name must be a string, got {type(name).__name__}")
    if not name:
        raise InvalidWorkspaceName("workspace name must not be empty")
    if len(name.encode("utf-8")) > MAX_WORKSPACE_LENGTH:
        raise InvalidWorkspaceName(
            f"workspace name {name[:20]!r}... is longer than {MAX_WORKSPACE_LENGTH} bytes"
        )
    if not _NAME.match(name):
        raise InvalidWorkspaceName(
            f"workspace name {name!r} must match [a-z_][a-z0-9_]* "
            "(lower-case ASCII letters, digits and underscores)"
        )
    if name in _RESERVED or name.startswith("pg_"):
        raise InvalidWorkspaceName(f"workspace name {name!r} is reserved by PostgreSQL or AGE")
    if name.endswith(GRAPH_SUFFIX):
        raise InvalidWorkspaceName(
            f"workspace name {name!r} must not end with {GRAPH_SUFFIX!r} (reserved for graphs)"
        )
    return name


def graph_name(workspace: WorkspaceName) -> str:
    """The AGE graph (and graph schema) name of a workspace."""
    return schema_of(workspace).name + GRAPH_SUFFIX


def quote_ident(name: str) -> str:
    """Double-quote an identifier that has already been validated."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class Identifier:
    """A validated name and its quoted SQL form; build it with :func:`schema_of` or :func:`graph_of`."""

    name: str
    quoted: str


def schema_of(workspace: WorkspaceName) -> Identifier:
    """The schema of a workspace, as an identifier for SQL text (a plain string is checked
    here too: nothing unchecked reaches SQL text)."""
    name = WorkspaceName(workspace)
    return Identifier(name, quote_ident(name))


def graph_of(workspace: WorkspaceName) -> Identifier:
    """The AGE graph (and graph schema) of a workspace, as an identifier for SQL text."""
    name = graph_name(workspace)
    return Identifier(name, quote_ident(name))


def relation_of(name: str) -> Identifier | None:
    """A table or view name read from the catalog as an identifier, or None unless it is plain.

    Plain means lower-case ASCII letters, digits and underscores, as every
    table lightrag_pg creates is named.
    """
    if not _NAME.match(name) or len(name.encode("utf-8")) > 63:
        return None
    return Identifier(name, quote_ident(name))


def catalog_name(name: str) -> Identifier:
    """A name read from another database's catalog (an upstream LightRAG table or graph,
    which may hold capitals), as an identifier for SQL text; quoted, so any name is safe.

    Raises :class:`InvalidWorkspaceName` for what no catalog holds (empty, a NUL, over 63 bytes).
    """
    if not name or "\x00" in name or len(name.encode("utf-8")) > 63:
        raise InvalidWorkspaceName(f"{name[:80]!r} is not a PostgreSQL identifier")
    return Identifier(name, quote_ident(name))


def search_path(workspace: WorkspaceName) -> str:
    """The search_path value of a workspace's sessions: its schema, then public and ag_catalog."""
    return f"{schema_of(workspace).quoted}, public, ag_catalog"
