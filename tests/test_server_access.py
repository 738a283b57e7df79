"""The server's access rules: API key, accounts and JWT, login rate limit, workspace per request."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from lightrag_pg.cli.serve import exposure_warning, register, settings_from
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.server import ServerSettings
from lightrag_pg.server.files import safe_name
from lightrag_pg.server.settings import Accounts, whitelisted

from .server_support import TEXT, counted, serving

KEY = "s3cret-key"


def ws(name: str) -> dict[str, str]:
    return {"LIGHTRAG-WORKSPACE": name}


async def test_api_key_is_required_and_checked(dsn: str, workspace_name: str) -> None:
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, api_key=KEY)
    async with serving(settings) as server:
        client = server.client
        missing = await client.get("/documents/status_counts")
        assert missing.status_code == 403 and missing.json()["detail"] == "API Key required"
        wrong = await client.get("/documents/status_counts", headers={"X-API-Key": "nope"})
        assert wrong.status_code == 403 and wrong.json()["detail"] == "Invalid API Key"
        refused = await client.post("/documents/text", json={"text": TEXT})
        assert refused.status_code == 403
        ok = await client.get("/documents/status_counts", headers={"X-API-Key": KEY})
        assert ok.status_code == 200 and ok.json()["status_counts"] == counted()
        for path in ("/api/tags", "/api/version"):  # the Ollama emulation needs the key too
            assert (await client.get(path)).status_code == 403
            bearer = {"Authorization": f"Bearer {KEY}"}  # as Open WebUI and ollama clients send it
            assert (await client.get(path, headers=bearer)).status_code == 200
        chat = {
            "model": "lightrag:latest",
            "stream": False,
            "messages": [{"role": "user", "content": "Who?"}],
        }
        assert (await client.post("/api/chat", json=chat)).status_code == 403

        health = await client.get("/health")
        assert health.status_code == 200 and "configuration" not in health.json()
        full = await client.get("/health", headers={"X-API-Key": KEY})
        assert full.json()["configuration"]["workspace"] == workspace_name
        assert full.json()["configuration"]["whitelist_paths"] == ["/health"]
        guest = (await client.get("/auth-status")).json()["access_token"]
        as_guest = await client.get("/documents/status_counts", headers={"Authorization": f"Bearer {guest}"})
        assert as_guest.status_code == 403  # a guest token does not replace a configured key
        assert (await client.get("/auth/verify", headers={"X-API-Key": KEY})).json() == {"status": "ok"}


async def test_without_credentials_configured_everything_is_open(dsn: str, workspace_name: str) -> None:
    async with serving(ServerSettings(dsn=dsn, default_workspace=workspace_name)) as server:
        status = (await server.client.get("/auth-status")).json()
        assert status["auth_configured"] is False and status["auth_mode"] == "disabled"
        headers = {"Authorization": f"Bearer {status['access_token']}"}
        assert (await server.client.get("/documents/status_counts", headers=headers)).status_code == 200
        assert (await server.client.get("/documents/status_counts")).status_code == 200
        login = (await server.client.post("/login", data={"username": "x", "password": "y"})).json()
        assert login["auth_mode"] == "disabled" and login["access_token"]
        forged = {"Authorization": "Bearer not.a.token"}
        assert (await server.client.get("/documents/status_counts", headers=forged)).status_code == 401


async def test_accounts_log_in_with_jwt_and_failures_are_rate_limited(dsn: str, workspace_name: str) -> None:
    settings = ServerSettings(
        dsn=dsn,
        default_workspace=workspace_name,
        accounts=Accounts.parse("alice:wonderland,bob:builder"),
        token_secret="a-test-secret-of-at-least-32-bytes!",
        login_max_failures=3,
    )
    async with serving(settings) as server:
        client = server.client
        anonymous = await client.get("/documents/status_counts")
        assert anonymous.status_code == 401
        assert anonymous.json()["detail"] == "No credentials provided. Please login."
        status = (await client.get("/auth-status")).json()
        assert status["auth_configured"] is True and "access_token" not in status

        bad = await client.post("/login", data={"username": "alice", "password": "nope"})
        assert bad.status_code == 401 and bad.json()["detail"] == "Incorrect credentials"
        good = await client.post("/login", data={"username": "alice", "password": "wonderland"})
        assert good.status_code == 200 and good.json()["auth_mode"] == "enabled"
        headers = {"Authorization": f"Bearer {good.json()['access_token']}"}
        assert (await client.get("/documents/status_counts", headers=headers)).status_code == 200
        tampered = {"Authorization": headers["Authorization"][:-2] + "xx"}
        assert (await client.get("/documents/status_counts", headers=tampered)).status_code == 401

        for _ in range(3):
            assert (await client.post("/login", data={"username": "bob", "password": "x"})).status_code == 401
        locked = await client.post("/login", data={"username": "bob", "password": "builder"})
        assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0
        other = await client.post("/login", data={"username": "alice", "password": "wonderland"})
        assert other.status_code == 200  # another user's lockout does not lock alice out
        missing_field = await client.post("/login", data={"username": "alice"})
        assert missing_field.status_code == 422


def test_accounts_and_secret_are_validated() -> None:
    with pytest.raises(ConfigurationError, match="user:password"):
        Accounts.parse("alice")
    with pytest.raises(ConfigurationError, match="TOKEN_SECRET"):
        ServerSettings(accounts=Accounts.parse("alice:x"))
    with pytest.raises(ConfigurationError, match="port"):
        ServerSettings(port=0)
    env = {"PORT": "8000", "LIGHTRAG_API_KEY": "k", "CORS_ORIGINS": "http://a, http://b"}
    env["WORKSPACE"] = "books"
    settings = ServerSettings.from_env(env, port=9000, api_key=None)  # an unset flag keeps the environment's
    assert settings.port == 9000 and settings.api_key == "k" and settings.default_workspace == "books"
    assert settings.cors_origins == ("http://a", "http://b")
    with pytest.raises(ConfigurationError, match="PORT"):
        ServerSettings.from_env({"PORT": "many"})


def test_binding_beyond_localhost_without_a_key_warns_loudly() -> None:
    assert exposure_warning(ServerSettings(host="127.0.0.1")) is None
    assert exposure_warning(ServerSettings(host="0.0.0.0", api_key="k")) is None  # the default whitelist
    warning = exposure_warning(ServerSettings(host="0.0.0.0"))
    assert warning is not None and "WARNING" in warning and "0.0.0.0" in warning and "--api-key" in warning
    for host in ("127.0.0.1", "0.0.0.0"):
        opened = exposure_warning(
            ServerSettings(host=host, api_key="k", whitelist_paths=("/health", "/api/*"))
        )
        assert opened is not None and "opens /api/chat, /api/generate to anyone" in opened
    opened = ServerSettings(api_key="k", whitelist_paths=("/query",)).open_paths_warning()
    assert opened is not None and "opens /query to anyone" in opened
    assert ServerSettings(whitelist_paths=("/api/*",)).open_paths_warning() is None  # nothing to open


async def test_whitelist_paths_can_open_the_ollama_emulation_with_a_logged_warning(
    dsn: str, workspace_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream's whitelist, given explicitly: /api/* answers without the key, a warning
    naming the opened routes is logged, everything else still needs the key, and /health
    shows the whitelist in force."""
    settings = ServerSettings.from_env(
        {"WHITELIST_PATHS": "/health,/api/*", "LIGHTRAG_API_KEY": KEY},
        dsn=dsn,
        default_workspace=workspace_name,
    )
    with caplog.at_level("WARNING", logger="lightrag_pg.server.app"):
        async with serving(settings) as server:
            client = server.client
            assert (await client.get("/api/tags")).status_code == 200
            chat = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "Who?"}]}
            assert (await client.post("/api/chat", json=chat)).status_code == 200
            assert (await client.post("/query/data", json={"query": "Who?"})).status_code == 403
            health = await client.get("/health", headers={"X-API-Key": KEY})
            assert health.json()["configuration"]["whitelist_paths"] == ["/health", "/api/*"]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("WHITELIST_PATHS (/health,/api/*)" in w and "/api/chat" in w for w in warnings), warnings


@pytest.mark.parametrize(
    ("path", "patterns", "free"),
    [
        ("/api/chat", ("/health", "/api/*"), True),
        ("/api", ("/api/*",), True),
        ("/apix", ("/api/*",), False),
        ("/health", ("/health",), True),
        ("/health/x", ("/health",), False),
        ("/documents", ("/*",), True),
        ("/graphs", ("/graph/*",), False),
    ],
)
def test_whitelist_entries_match_as_upstreams(path: str, patterns: tuple[str, ...], free: bool) -> None:
    # upstream: an entry ending in /* covers its prefix on a / boundary, others one exact path
    assert whitelisted(path, patterns) is free


async def test_with_the_api_narrowed_the_key_is_accepted_as_a_bearer_token(
    dsn: str, workspace_name: str
) -> None:
    # Open WebUI sends an Ollama connection's key as "Authorization: Bearer <key>"
    settings = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, api_key=KEY, whitelist_paths=("/health",)
    )
    async with serving(settings) as server:
        client = server.client
        assert (await client.get("/api/tags")).status_code == 403
        assert (await client.get("/api/tags", headers={"X-API-Key": KEY})).status_code == 200
        assert (await client.get("/api/tags", headers={"Authorization": f"Bearer {KEY}"})).status_code == 200
        wrong = await client.get("/api/tags", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        health = (await client.get("/health", headers={"Authorization": f"Bearer {KEY}"})).json()
        assert health["configuration"]["workspace"] == workspace_name


@pytest.mark.parametrize(
    "name", ["../x.txt", "a/b.txt", "a\\b.txt", ".env", "..", "", "a\x00b.txt", "x" * 300]
)
def test_unsafe_file_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        safe_name(name)


@pytest.mark.slow
async def test_the_workspace_header_picks_the_schema(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    other = f"{workspace_name}_b"
    closed = ServerSettings(dsn=dsn, default_workspace=workspace_name)
    async with serving(closed) as server:
        unknown = await server.client.get("/documents/status_counts", headers={"LIGHTRAG-WORKSPACE": other})
        assert unknown.status_code == 404 and "--allow-create" in unknown.json()["detail"]
        invalid = await server.client.get("/documents/status_counts", headers=ws("pg_catalog"))
        assert invalid.status_code == 400
        injected = await server.client.post(
            "/documents/text", json={"text": TEXT}, headers=ws('x"; DROP SCHEMA public; --')
        )
        assert injected.status_code == 400
        blank = await server.client.get("/documents/status_counts", headers={"LIGHTRAG-WORKSPACE": " "})
        assert blank.status_code == 200
    assert not await workspace_exists(conn, other)

    opened = ServerSettings(dsn=dsn, default_workspace=workspace_name, allow_create=True)
    async with serving(opened) as server:
        in_b = {"LIGHTRAG-WORKSPACE": other}
        track = (await server.client.post("/documents/text", json={"text": TEXT}, headers=in_b)).json()
        await server.track(track["track_id"], workspace=other)
        counts_b = (await server.client.get("/documents/status_counts", headers=in_b)).json()
        counts_default = (await server.client.get("/documents/status_counts")).json()
        assert counts_b["status_counts"] == counted(processed=1)
        assert counts_default["status_counts"] == counted()
        data_default = (await server.client.post("/query/data", json={"query": "Who founded Acme?"})).json()
        assert data_default["status"] == "failure"
        question = {"query": "Who founded Acme?"}
        data_b = (await server.client.post("/query/data", json=question, headers=in_b)).json()
        assert data_b["status"] == "success"
        elsewhere = await server.client.get("/documents/track_status/" + track["track_id"])
        assert elsewhere.json()["total_count"] == 0
    for name in (workspace_name, other):
        await drop_workspace(conn, name)


@pytest.mark.slow
async def test_a_broken_workspace_does_not_block_another(
    dsn: str, workspace_name: str, conn: asyncpg.Connection
) -> None:
    from lightrag_pg import LightRAG
    from lightrag_pg.db.pool import SharedPool
    from lightrag_pg.testing import hashed_embedding_func

    from .server_support import scripted_factory

    broken = f"{workspace_name}_broken"
    healthy = scripted_factory()

    def factory(workspace: str, pool: SharedPool) -> LightRAG:
        if workspace == broken:  # a dimension the workspace does not have: initialize() fails
            return LightRAG(workspace=workspace, embedding_func=hashed_embedding_func(8), pool=pool)
        return healthy(workspace, pool)

    async with serving(ServerSettings(dsn=dsn, default_workspace=broken, allow_create=True)) as first:
        await first.client.get("/documents/status_counts")
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, allow_create=True)
    async with serving(settings, factory) as server:
        failing = await server.client.get("/documents/status_counts", headers={"LIGHTRAG-WORKSPACE": broken})
        assert failing.status_code == 500 and "dimension" in failing.json()["detail"]
        assert (await server.client.get("/documents/status_counts")).status_code == 200
        again = await server.client.get("/documents/status_counts", headers={"LIGHTRAG-WORKSPACE": broken})
        assert again.status_code == 500  # not cached as open: retried, and fails the same way
    for name in (workspace_name, broken):
        await drop_workspace(conn, name)


@pytest.mark.slow
async def test_open_workspaces_are_bounded(dsn: str, workspace_name: str, conn: asyncpg.Connection) -> None:
    names = [f"{workspace_name}_{i}" for i in range(3)]
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, allow_create=True, max_workspaces=2)
    async with serving(settings) as server:
        for name in names:
            response = await server.client.get("/documents/status_counts", headers=ws(name))
            assert response.status_code == 200
            for _ in range(100):
                if all(r.idle for r in server.app.state.server.registry.opened()):
                    break
                await asyncio.sleep(0.02)
        assert len(server.app.state.server.registry.opened()) <= 2
    for name in (workspace_name, *names):
        await drop_workspace(conn, name)


def test_pool_size_flags_override_the_environment() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dsn")
    parser.add_argument("--workspace", default="default")
    register(parser.add_subparsers(), [])
    args = parser.parse_args(["serve", "--pool-size", "24", "--workspace-pool-size", "6"])
    settings = settings_from(args)
    assert (settings.pool_size, settings.workspace_pool_size) == (24, 6)
    unset = settings_from(parser.parse_args(["serve"]))
    assert (unset.pool_size, unset.workspace_pool_size) == (16, 8)
    with pytest.raises(ConfigurationError, match="workspace_pool_size"):
        settings_from(parser.parse_args(["serve", "--pool-size", "4", "--workspace-pool-size", "4"]))


SECRET = "a-test-secret-of-at-least-32-bytes!"


async def test_login_spraying_one_password_over_many_users_is_throttled(
    dsn: str, workspace_name: str
) -> None:
    accounts = Accounts.parse("alice:wonderland")
    settings = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, accounts=accounts, token_secret=SECRET
    )
    async with serving(settings) as server:
        statuses = []
        for i in range(40):
            form = {"username": f"user{i}", "password": "Summer2024!"}
            statuses.append((await server.client.post("/login", data=form)).status_code)
        limit = settings.login_client_max_failures
        assert statuses == [401] * limit + [429] * (40 - limit)
        locked = await server.client.post("/login", data={"username": "alice", "password": "wonderland"})
        assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0


async def test_a_token_of_a_removed_user_is_refused(dsn: str, workspace_name: str) -> None:
    both = Accounts.parse("alice:wonderland,bob:builder")
    settings = ServerSettings(dsn=dsn, default_workspace=workspace_name, accounts=both, token_secret=SECRET)
    tokens = {}
    async with serving(settings) as server:
        for user, password in both.passwords.items():
            login = await server.client.post("/login", data={"username": user, "password": password})
            tokens[user] = {"Authorization": f"Bearer {login.json()['access_token']}"}
    alice = Accounts.parse("alice:wonderland")
    alice_only = ServerSettings(
        dsn=dsn, default_workspace=workspace_name, accounts=alice, token_secret=SECRET
    )
    async with serving(alice_only) as server:
        refused = await server.client.get("/documents/status_counts", headers=tokens["bob"])
        assert refused.status_code == 401 and refused.json()["detail"] == "Invalid token. Please login again."
        assert (await server.client.get("/auth/verify", headers=tokens["bob"])).status_code == 401
        kept = await server.client.get("/documents/status_counts", headers=tokens["alice"])
        assert kept.status_code == 200


async def _spray(url: str, source: str, prefix: str) -> list[int]:
    """From local address ``source``, log in as ever new users from ever new ``X-Forwarded-For``
    addresses, one more time than one client may fail; the statuses."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(base_url=url, transport=transport, timeout=30) as client:
        statuses = []
        for i in range(ServerSettings().login_client_max_failures + 1):
            forwarded = {"X-Forwarded-For": f"203.0.113.{i + 1}"}
            form = {"username": f"{prefix}{i}", "password": "Summer2024!"}
            statuses.append((await client.post("/login", data=form, headers=forwarded)).status_code)
        return statuses


@pytest.mark.slow
async def test_forwarded_for_is_ignored_from_untrusted_addresses(
    workspace_name: str, tmp_path: Path, serve_process: Callable[..., Any]
) -> None:
    limit = ServerSettings().login_client_max_failures
    accounts = {"AUTH_ACCOUNTS": "alice:wonderland", "TOKEN_SECRET": SECRET}
    with serve_process(
        workspace_name, tmp_path, args=["--forwarded-allow-ips", "127.0.0.2"], **accounts
    ) as server:
        # 127.0.0.1 is not listed: its X-Forwarded-For is ignored and every attempt counts against it
        assert await _spray(server.url, "127.0.0.1", "direct") == [401] * limit + [429]
        # 127.0.0.2 is a listed proxy: each forwarded client is counted apart
        assert await _spray(server.url, "127.0.0.2", "proxied") == [401] * (limit + 1)


def test_forwarded_allow_ips_flag_and_environment() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dsn")
    parser.add_argument("--workspace", default="default")
    register(parser.add_subparsers(), [])
    args = parser.parse_args(["serve", "--forwarded-allow-ips", "10.0.0.1, 192.168.0.0/16"])
    assert settings_from(args).forwarded_allow_ips == ("10.0.0.1", "192.168.0.0/16")
    assert ServerSettings.from_env({}).forwarded_allow_ips == ()
    assert ServerSettings.from_env({"FORWARDED_ALLOW_IPS": "*"}).forwarded_allow_ips == ("*",)
    with pytest.raises(ConfigurationError, match="forwarded_allow_ips"):
        ServerSettings(forwarded_allow_ips=("proxy.example",))
