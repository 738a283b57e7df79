"""The server's own settings: network, workspaces, uploads and authentication."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import (
    AfterValidator,
    BeforeValidator,
    InstanceOf,
    PlainValidator,
    ValidationInfo,
)
from pydantic.dataclasses import dataclass as checked

from ..config import (
    CHECKED,
    DEFAULT_STATEMENT_TIMEOUT_MS,
    Checked,
    Positive,
    Seconds,
    TimeoutMs,
    as_path,
)
from ..db.identifiers import WorkspaceName
from ..errors import ConfigurationError

DEFAULT_PORT = 9621
DEFAULT_WORKSPACE = WorkspaceName("default")
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

POOL_SIZES = ("pool_size", "workspace_pool_size")

TRUTH = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}
"""How a yes/no environment variable may be written."""

KIB = 1024
MIB = 1024 * KIB

DEFAULT_WHITELIST: tuple[str, ...] = ("/health",)
"""What anyone may call when an API key or accounts are set: liveness. Not ``/api/*`` (as
upstream has it): the Ollama emulation's chat reads the whole knowledge base. Ollama
clients send the key as their connection's bearer key (``Authorization: Bearer <key>``)."""

KNOWLEDGE_PATHS: tuple[str, ...] = (
    "/api/chat",
    "/api/generate",
    "/query",
    "/query/data",
    "/documents",
    "/documents/text",
    "/graphs",
    "/graph/entity/edit",
)
"""Routes that read or write the knowledge base (or call the LLM), one or two per router:
a whitelist that opens any of them while credentials are set is reported."""

OPEN_PATHS_WARNING = """\
WARNING: WHITELIST_PATHS ({whitelist}) opens {paths} to anyone who can reach the server,
without the API key or a login: these routes read the knowledge base (or write it, or use
the LLM). Remove them from WHITELIST_PATHS to require credentials (Open WebUI and Ollama
clients then send the key as their connection's bearer key)."""


@dataclass(frozen=True, slots=True)
class Accounts:
    """``user:password`` pairs allowed to log in (``AUTH_ACCOUNTS``); empty means no login."""

    passwords: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Accounts:
        """Parse ``"alice:secret,bob:other"``; a malformed entry is a :class:`ConfigurationError`."""
        passwords: dict[str, str] = {}
        for entry in filter(None, (e.strip() for e in text.split(","))):
            user, sep, password = entry.partition(":")
            if not sep or not user.strip() or not password:
                raise ConfigurationError(
                    "AUTH_ACCOUNTS must be comma-separated user:password pairs "
                    f"(an entry without user or password: {user.strip() or '?'}:***)"
                )
            passwords[user.strip()] = password
        return cls(passwords)

    def __bool__(self) -> bool:
        return bool(self.passwords)


def _positive_number(value: object, info: ValidationInfo) -> object:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigurationError(f"{info.field_name} must be a positive number, got {value!r}")
    return value


PositiveNumber = Annotated[float, BeforeValidator(_positive_number)]
PositiveCount = Annotated[int, BeforeValidator(_positive_number)]


@checked(frozen=True, slots=True, config=CHECKED)
class _ConversionFields:
    """The fields of :class:`ConversionLimits`, with their bounds (pydantic checks them)."""

    timeout_seconds: PositiveNumber = 30.0
    cpu_seconds: PositiveCount = 20
    memory_bytes: PositiveCount = 1024 * MIB
    max_unzipped_bytes: PositiveCount = 256 * MIB
    max_zip_ratio: PositiveNumber = 100.0
    max_zip_members: PositiveCount = 10_000
    max_text_chars: PositiveCount = 10_000_000
    concurrent: PositiveCount = 2


class ConversionLimits(Checked, _ConversionFields):
    """Bounds on turning one uploaded file into text (``server/convert.py``).

    Documents (PDF, Office, HTML) are converted in a separate process that is
    stopped past ``cpu_seconds`` of CPU time, ``timeout_seconds`` of wall-clock
    time or ``memory_bytes`` of address space; Office files (zip archives) are
    refused before parsing when they would expand past ``max_unzipped_bytes``,
    a member expands more than ``max_zip_ratio`` times, or they hold more than
    ``max_zip_members`` members. No converted text is longer than
    ``max_text_chars``. At most ``concurrent`` conversions run at once, shared
    fairly between workspaces. Declared once: each field's type is its check.
    """

    __slots__ = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ConversionLimits:
        """Limits from ``CONVERT_*`` / ``MAX_*`` variables; unset ones keep their defaults."""
        values: dict[str, object] = {}
        for variable, (name, kind) in CONVERSION_ENV.items():
            raw = env.get(variable, "").strip()
            if raw:
                try:
                    values[name] = kind(raw)
                except ValueError:
                    raise ConfigurationError(f"${variable} must be a number, got {raw!r}") from None
        return cls(**values)  # type: ignore[arg-type]


CONVERSION_ENV: dict[str, tuple[str, type]] = {
    "CONVERT_TIMEOUT": ("timeout_seconds", float),
    "CONVERT_CPU_SECONDS": ("cpu_seconds", int),
    "CONVERT_MEMORY": ("memory_bytes", int),
    "MAX_UNZIPPED_SIZE": ("max_unzipped_bytes", int),
    "MAX_ZIP_RATIO": ("max_zip_ratio", float),
    "MAX_ZIP_ENTRIES": ("max_zip_members", int),
    "MAX_TEXT_CHARS": ("max_text_chars", int),
    "MAX_CONVERSIONS": ("concurrent", int),
}
"""The environment variable of each conversion limit."""


def _tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _port(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool) and not 0 < value < 65536:
        raise ConfigurationError(f"port must be in 1..65535, got {value}")
    return value


def _proxies(entries: tuple[str, ...]) -> tuple[str, ...]:
    for entry in entries:
        _check_proxy(entry)
    return entries


Texts = Annotated[tuple[str, ...], BeforeValidator(_tuple)]


@checked(frozen=True, slots=True, config=CHECKED)
class _ServerFields:
    """The fields of :class:`ServerSettings`, with their types and bounds (pydantic checks them)."""

    host: str = "127.0.0.1"
    port: Annotated[int, BeforeValidator(_port)] = DEFAULT_PORT
    dsn: str | None = None
    default_workspace: Annotated[WorkspaceName, PlainValidator(WorkspaceName)] = DEFAULT_WORKSPACE
    allow_create: bool = False
    api_key: str | None = None
    cors_origins: Texts = ()
    input_dir: Annotated[Path, BeforeValidator(as_path)] = Path("inputs")
    max_upload_bytes: Positive = 100 * MIB
    max_pending_uploads: Positive = 64
    max_workspaces: Positive = 16
    pool_size: Positive = 16
    workspace_pool_size: Positive = 8
    accounts: InstanceOf[Accounts] = field(default_factory=Accounts)
    token_secret: str | None = None
    token_expire_hours: float = 48.0
    guest_token_expire_hours: float = 24.0
    login_max_failures: int = 5
    login_client_max_failures: int = 20
    login_window_seconds: float = 300.0
    forwarded_allow_ips: Annotated[Texts, AfterValidator(_proxies)] = ()
    whitelist_paths: Texts = DEFAULT_WHITELIST
    """Paths that need no credentials when a key or accounts are set (``WHITELIST_PATHS``;
    an entry ending in ``/*`` covers everything below it)."""
    webui_title: str = "lightrag_pg"
    webui_description: str = "LightRAG over one PostgreSQL database"
    ollama_model: str = "lightrag:latest"
    conversion: InstanceOf[ConversionLimits] = field(default_factory=ConversionLimits)
    statement_timeout_ms: TimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS
    mcp_read_only: bool = False
    """The MCP server (``/mcp``, ``lightrag-pg mcp``) offers only the tools that change nothing."""
    shutdown_timeout: Seconds = 10.0
    """Seconds a stop (SIGTERM, Ctrl-C) may take: requests in flight get half, then
    background work is cancelled; past it the process exits regardless."""

    def __post_init__(self) -> None:
        if self.workspace_pool_size >= self.pool_size:
            raise ConfigurationError(
                f"workspace_pool_size ({self.workspace_pool_size}) must be below pool_size "
                f"({self.pool_size}) so that a busy workspace leaves connections to the others"
            )
        if self.accounts and not self.token_secret:
            raise ConfigurationError("TOKEN_SECRET must be set when AUTH_ACCOUNTS is configured")


class ServerSettings(Checked, _ServerFields):
    """Everything ``lightrag-pg serve`` is configured with (flags, else the environment),
    declared once as a pydantic dataclass: each field's type is its check."""

    __slots__ = ()

    @property
    def exposed(self) -> bool:
        """Whether the server listens beyond this machine."""
        return self.host not in LOCAL_HOSTS

    @property
    def open_knowledge_paths(self) -> tuple[str, ...]:
        """The routes of :data:`KNOWLEDGE_PATHS` that ``whitelist_paths`` opens to anyone although
        credentials are set (none without credentials: then every route is open anyway)."""
        if self.unprotected:
            return ()
        return tuple(path for path in KNOWLEDGE_PATHS if whitelisted(path, self.whitelist_paths))

    def open_paths_warning(self) -> str | None:
        """The warning to log when the whitelist opens routes of the knowledge base, or None."""
        opened = self.open_knowledge_paths
        if not opened:
            return None
        return OPEN_PATHS_WARNING.format(whitelist=",".join(self.whitelist_paths), paths=", ".join(opened))

    @property
    def unprotected(self) -> bool:
        """Whether anyone who can reach the server may use it (no API key, no accounts)."""
        return not self.api_key and not self.accounts

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> ServerSettings:
        """Settings from the environment (upstream's variable names), then ``overrides`` (flags).

        Overrides that are ``None`` are ignored, so unset flags fall back to the environment.
        """
        env = os.environ if env is None else env
        values: dict[str, object] = {}

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def number(name: str, kind: type) -> object:
            raw = text(name)
            if raw is None:
                return None
            try:
                return kind(raw)
            except ValueError:
                raise ConfigurationError(f"${name} must be a number, got {raw!r}") from None

        def flag(name: str) -> bool | None:
            raw = text(name)
            if raw is None:
                return None
            if raw.lower() not in TRUTH:
                raise ConfigurationError(f"${name} must be true or false, got {raw!r}")
            return TRUTH[raw.lower()]

        values["host"] = text("HOST")
        values["port"] = number("PORT", int)
        values["dsn"] = text("LIGHTRAG_PG_DSN")
        values["default_workspace"] = text("WORKSPACE")
        values["api_key"] = text("LIGHTRAG_API_KEY")
        values["input_dir"] = text("INPUT_DIR")
        values["max_upload_bytes"] = number("MAX_UPLOAD_SIZE", int)
        values["pool_size"] = number("LIGHTRAG_PG_POOL_SIZE", int)
        values["workspace_pool_size"] = number("LIGHTRAG_PG_WORKSPACE_POOL_SIZE", int)
        values["statement_timeout_ms"] = number("LIGHTRAG_PG_STATEMENT_TIMEOUT_MS", int)
        values["shutdown_timeout"] = number("LIGHTRAG_PG_SHUTDOWN_TIMEOUT", float)
        values["token_secret"] = text("TOKEN_SECRET")
        values["mcp_read_only"] = flag("LIGHTRAG_MCP_READ_ONLY")
        values["token_expire_hours"] = number("TOKEN_EXPIRE_HOURS", float)
        values["ollama_model"] = _ollama_model(
            text("OLLAMA_EMULATING_MODEL_NAME"), text("OLLAMA_EMULATING_MODEL_TAG")
        )
        cors = text("CORS_ORIGINS")
        values["cors_origins"] = _split(cors) if cors else None
        proxies = text("FORWARDED_ALLOW_IPS")
        values["forwarded_allow_ips"] = _split(proxies) if proxies else None
        whitelist = text("WHITELIST_PATHS")
        values["whitelist_paths"] = _split(whitelist) if whitelist else None
        values["webui_title"] = text("WEBUI_TITLE")
        values["webui_description"] = text("WEBUI_DESCRIPTION")
        accounts = text("AUTH_ACCOUNTS")
        values["accounts"] = Accounts.parse(accounts) if accounts else None
        values["conversion"] = ConversionLimits.from_env(env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in values.items() if v is not None})


def whitelisted(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` needs no credentials under ``patterns`` (``WHITELIST_PATHS``): an
    entry ending in ``/*`` covers that path and everything below it (``/api/*``: ``/api``
    and ``/api/...``, not ``/apix``), any other entry exactly its path."""
    for entry in patterns:
        if entry.endswith("/*"):
            prefix = entry[:-2]
            if path == prefix or path.startswith(prefix + "/"):
                return True
        elif path == entry:
            return True
    return False


def _check_proxy(entry: str) -> None:
    """An address or network whose ``X-Forwarded-For`` is trusted, or ``*`` (every client)."""
    if entry == "*":
        return
    try:
        ipaddress.ip_network(entry, strict=False)
    except ValueError:
        raise ConfigurationError(
            f"forwarded_allow_ips entries must be IP addresses, networks or '*', got {entry!r}"
        ) from None


def _split(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _ollama_model(name: str | None, tag: str | None) -> str | None:
    if name is None and tag is None:
        return None
    return f"{name or 'lightrag'}:{tag or 'latest'}"
