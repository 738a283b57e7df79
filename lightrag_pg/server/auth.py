"""Who may call the server: an API key, JWT accounts, and a login rate limit."""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import jwt

from .settings import ServerSettings, whitelisted

ALGORITHM = "HS256"
GUEST = "guest"
USER = "user"


class AuthFailure(Exception):
    """A request without acceptable credentials; ``status`` is 401 or 403."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class LoginThrottled(Exception):
    """Too many failed logins from one client or for one user; retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("Too many failed login attempts. Please try again later.")
        self.retry_after = retry_after


def same_secret(given: str, expected: str) -> bool:
    """Compare two secrets in constant time."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass
class Tokens:
    """Signs and checks the bearer tokens ``/login`` and ``/auth-status`` hand out."""

    secret: str
    expire_hours: float
    guest_expire_hours: float

    def create(self, username: str, role: str, metadata: dict[str, Any] | None = None) -> str:
        hours = self.guest_expire_hours if role == GUEST else self.expire_hours
        payload = {
            "sub": username,
            "role": role,
            "metadata": metadata or {},
            "exp": datetime.now(timezone.utc) + timedelta(hours=hours),
        }
        return jwt.encode(payload, self.secret, algorithm=ALGORITHM)

    def check(self, token: str) -> dict[str, Any]:
        """The token's claims; :class:`AuthFailure` (401) when it is invalid or expired."""
        try:
            claims = jwt.decode(
                token, self.secret, algorithms=[ALGORITHM], options={"require": ["exp", "sub"]}
            )
        except jwt.ExpiredSignatureError:
            raise AuthFailure(401, "Token expired. Please login again.") from None
        except jwt.PyJWTError:
            raise AuthFailure(401, "Invalid token. Please login again.") from None
        if not isinstance(claims.get("sub"), str) or claims.get("role") not in (GUEST, USER):
            raise AuthFailure(401, "Invalid token. Please login again.")
        return claims


MAX_TRACKED = 10_000
"""The most clients and user names :class:`LoginLimiter` remembers; the least recent go first."""
NAME_KEY_CHARS = 256
"""How much of a user name keys its failures (so a huge name costs no more memory)."""


@dataclass
class LoginLimiter:
    """At most ``max_failures`` failed logins per key within ``window`` seconds.

    Keys are client addresses and user names; the ``max_tracked`` keys failed
    most recently are remembered, so the memory is bounded.
    """

    max_failures: int
    window: float
    max_tracked: int = MAX_TRACKED
    _failures: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and now - times[0] > self.window:
            times.popleft()
        return times

    def retry_after(self, key: str) -> int | None:
        """Seconds to wait before ``key`` may try again, or ``None`` if it may try now."""
        if key not in self._failures:
            return None
        now = time.monotonic()
        times = self._recent(key, now)
        if len(times) < self.max_failures:
            if not times:
                self._failures.pop(key, None)
            return None
        return max(1, int(self.window - (now - times[0])) + 1)

    def failed(self, key: str) -> None:
        now = time.monotonic()
        self._recent(key, now).append(now)
        self._failures.move_to_end(key)
        while len(self._failures) > self.max_tracked:
            self._failures.popitem(last=False)

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)


class LoginGate:
    """Failed logins counted per client address and per user name.

    A client spraying one password over many user names is stopped by its
    address's count, a user name tried from many addresses by its own.
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.clients = LoginLimiter(settings.login_client_max_failures, settings.login_window_seconds)
        self.users = LoginLimiter(settings.login_max_failures, settings.login_window_seconds)

    def check(self, client: str, username: str) -> None:
        """Raise :class:`LoginThrottled` if the client or the user name must wait."""
        user = username[:NAME_KEY_CHARS]
        waits = [w for w in (self.clients.retry_after(client), self.users.retry_after(user)) if w]
        if waits:
            raise LoginThrottled(max(waits))

    def failed(self, client: str, username: str) -> None:
        self.clients.failed(client)
        self.users.failed(username[:NAME_KEY_CHARS])

    def succeeded(self, username: str) -> None:
        """Forget the user name's failures (the client's stay: a valid account does not
        clear a spray from the same address)."""
        self.users.succeeded(username[:NAME_KEY_CHARS])


class Guard:
    """Decides whether a request may pass: whitelist, bearer token, ``X-API-Key``."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.tokens = Tokens(
            secret=settings.token_secret or secrets.token_urlsafe(32),
            expire_hours=settings.token_expire_hours,
            guest_expire_hours=settings.guest_token_expire_hours,
        )
        self.limiter = LoginGate(settings)

    @property
    def accounts_configured(self) -> bool:
        return bool(self.settings.accounts)

    def whitelisted(self, path: str) -> bool:
        """Whether ``path`` is in ``WHITELIST_PATHS`` (no credentials needed)."""
        return whitelisted(path, self.settings.whitelist_paths)

    def authenticated(self, token: str | None, api_key: str | None) -> bool:
        """Whether the credentials are enough, without raising."""
        try:
            self.check(token, api_key)
        except AuthFailure:
            return False
        return True

    def check(self, token: str | None, api_key: str | None) -> None:
        """Pass, or raise :class:`AuthFailure` with upstream's status and message.

        The API key is accepted as a bearer token too (``Authorization: Bearer <key>``),
        as Open WebUI sends an Ollama connection's key.
        """
        key = self.settings.api_key
        if token and key and same_secret(token, key):
            return
        if token:
            claims = self.tokens.check(token)
            if claims["role"] == USER and claims["sub"] in self.settings.accounts.passwords:
                return
            if claims["role"] == GUEST and not self.accounts_configured and not key:
                return
            if claims["role"] == USER or self.accounts_configured:
                raise AuthFailure(401, "Invalid token. Please login again.")
        if not key and not self.accounts_configured:
            return
        if key and api_key and same_secret(api_key, key):
            return
        if self.accounts_configured and not token and not api_key:
            raise AuthFailure(401, "No credentials provided. Please login.")
        if api_key:
            raise AuthFailure(403, "Invalid API Key")
        if key:
            raise AuthFailure(403, "API Key required")
        raise AuthFailure(403, "API Key required or login authentication required.")

    def login(self, username: str, password: str) -> bool:
        """Whether ``username`` / ``password`` is a configured account (constant-time compare)."""
        expected = self.settings.accounts.passwords.get(username)
        # compare against something even for unknown users, so timing does not reveal them
        matched = same_secret(password, expected if expected is not None else secrets.token_hex(16))
        return expected is not None and matched
