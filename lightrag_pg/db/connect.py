"""Opening connections with a bounded wait and an error that names the server."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg

from ..errors import ConfigurationError, ConnectFailed
from .embedded import redact_dsn

CONNECT_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError, asyncio.TimeoutError)
"""What asyncpg raises when no connection can be made."""


def split_connect_timeout(dsn: str, default: float) -> tuple[str, float]:
    """``dsn`` without libpq's ``connect_timeout`` parameter, and the timeout it asked for.

    asyncpg would pass an unknown DSN parameter to the server as a setting, so
    ``connect_timeout`` is taken out here and used as the connect timeout
    (``default`` when absent).
    """
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = [value for key, value in query if key == "connect_timeout"]
    if not given:
        return dsn, default
    try:
        timeout = float(given[-1])
    except ValueError as exc:
        raise ConfigurationError(f"connect_timeout in the DSN must be a number, got {given[-1]!r}") from exc
    if timeout <= 0:
        raise ConfigurationError(f"connect_timeout in the DSN must be positive, got {given[-1]!r}")
    rest = urlencode([(key, value) for key, value in query if key != "connect_timeout"])
    return urlunsplit(parts._replace(query=rest)), timeout


def connect_failure(exc: BaseException, where: str, timeout: float) -> ConnectFailed:
    """The :class:`ConnectFailed` for a failed attempt to reach ``where``."""
    if isinstance(exc, asyncio.TimeoutError):
        reason = f"no answer within {timeout:g} s (connect_timeout)"
    else:
        reason = " ".join(str(exc).split()) or type(exc).__name__
    return ConnectFailed(f"cannot connect to PostgreSQL at {where}: {reason}")


async def connect(dsn: str, *, timeout: float, where: str | None = None) -> asyncpg.Connection:
    """One connection to ``dsn``, waiting at most ``timeout`` seconds.

    Failing, it raises :class:`ConnectFailed` naming ``where`` (by default the
    DSN with its password hidden) and the reason.
    """
    try:
        return await asyncpg.connect(dsn, timeout=timeout)
    except CONNECT_ERRORS as exc:
        raise connect_failure(exc, where or redact_dsn(dsn), timeout) from exc
