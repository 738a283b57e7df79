"""docker-compose.yml and the app's Dockerfile, checked as files: no Docker engine runs the tests.

The app service is built from this repository, serves on 9621, reaches the postgres service
by its name with that service's credentials, and starts once the database is healthy; the
Dockerfile copies what the package needs and installs extras and a command that exist.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import tomllib
import yaml

from lightrag_pg.server.settings import DEFAULT_PORT

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert set(compose["volumes"]) >= {"pgdata", "inputs"}
    found: dict[str, Any] = compose["services"]
    return found


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service["environment"]
    return dict(env) if isinstance(env, dict) else dict(item.split("=", 1) for item in env)


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of a Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_the_app_service_is_built_from_the_repository_and_serves_on_9621(services: dict[str, Any]) -> None:
    app = services["app"]
    assert (ROOT / app["build"]["context"]).resolve() == ROOT
    assert (ROOT / app["build"]["dockerfile"]).is_file()
    assert f"{DEFAULT_PORT}:{DEFAULT_PORT}" in app["ports"]
    assert any("/health" in part and str(DEFAULT_PORT) in part for part in app["healthcheck"]["test"])


def test_the_app_reaches_the_postgres_service_once_it_is_healthy(services: dict[str, Any]) -> None:
    app, postgres = services["app"], services["postgres"]
    assert app["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    dsn = urlsplit(environment(app)["LIGHTRAG_PG_DSN"])
    db = environment(postgres)
    assert dsn.scheme == "postgresql" and dsn.hostname == "postgres" and dsn.port == 5432
    assert (dsn.username, dsn.password, dsn.path.lstrip("/")) == (
        db["POSTGRES_USER"],
        db["POSTGRES_PASSWORD"],
        db["POSTGRES_DB"],
    )
    assert "session_preload_libraries=age" in postgres["command"]


def test_the_app_dockerfile_installs_the_server_and_runs_it() -> None:
    steps = instructions(ROOT / "docker" / "app.Dockerfile")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    workdir = next(args for kind, args in steps if kind == "WORKDIR")
    copied = [shlex.split(args) for kind, args in steps if kind == "COPY"]
    for *sources, _ in copied:
        for source in sources:
            assert (ROOT / source).exists(), source
    assert ["lightrag_pg", "./lightrag_pg"] in copied
    # the build packages them as lightrag_pg._migrations (tests/test_packaging.py)
    assert ["migrations", "./migrations"] in copied
    (install,) = [shlex.split(args) for kind, args in steps if kind == "RUN" and "pip install" in args]
    target = install[-1]
    extras = re.fullmatch(r"\.\[(.*)\]", target)
    assert extras is not None and set(extras.group(1).split(",")) <= set(project["optional-dependencies"])
    assert "server" in extras.group(1).split(",")
    env = dict(pair.split("=", 1) for kind, args in steps if kind == "ENV" for pair in shlex.split(args))
    assert env["HOST"] == "0.0.0.0" and env["PORT"] == str(DEFAULT_PORT)
    assert env["INPUT_DIR"].startswith(workdir)
    assert ("EXPOSE", str(DEFAULT_PORT)) in steps
    command = next(args for kind, args in steps if kind == "CMD")
    program, subcommand, *_ = yaml.safe_load(command)
    assert program in project["scripts"] and subcommand == "serve"
