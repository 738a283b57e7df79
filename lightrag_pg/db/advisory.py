"""Advisory-lock keys and statements shared by migrations, workspaces and document locks."""

from __future__ import annotations

from .sqlfile import load_queries

SQL = load_queries(__package__, "advisory.sql")
XACT_LOCK = SQL["xact_lock"]
TRY_LOCK = SQL["try_lock"]
UNLOCK = SQL["unlock"]
TRY_LOCK_MANY = SQL["try_lock_many"]
UNLOCK_MANY = SQL["unlock_many"]

_PREFIX = "lightrag_pg"


def lock_key(kind: str, *parts: str) -> str:
    """The text key of one lock, e.g. ``lock_key("doc", workspace, doc_id)``.

    Kinds in use: ``extensions`` (creating extensions), ``workspace`` (creating,
    migrating or dropping one workspace), ``doc`` (processing one document),
    ``reembed`` (re-embedding one workspace).
    """
    return ":".join((_PREFIX, kind, *parts))
