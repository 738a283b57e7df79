"""The package list of pyproject.toml: every subpackage of the source tree, and the
Alembic migrations shipped inside the package, so an installed lightrag_pg (a wheel,
the app image) can create and upgrade workspaces without a checkout around it."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_subpackage_is_listed() -> None:
    tree = {
        ".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "lightrag_pg").rglob("__init__.py")
    }
    listed = {name for name in SETUPTOOLS["packages"] if not name.startswith("lightrag_pg._migrations")}
    assert listed == tree


def test_the_migrations_ship_inside_the_package() -> None:
    assert SETUPTOOLS["package-dir"] == {"lightrag_pg._migrations": "migrations"}
    assert {"lightrag_pg._migrations", "lightrag_pg._migrations.versions"} <= set(SETUPTOOLS["packages"])
    assert (ROOT / "migrations" / "__init__.py").is_file()
    assert (ROOT / "migrations" / "versions" / "__init__.py").is_file()
    data = SETUPTOOLS["package-data"]
    assert data["lightrag_pg._migrations"] == ["script.py.mako"]
    assert data["lightrag_pg._migrations.versions"] == ["sql/*.sql"]
