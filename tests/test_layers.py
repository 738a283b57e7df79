"""The import arrows between the package's layers point one way (see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lightrag_pg"

FOUNDATION = {"errors", "types", "config", "textclean", "sentences", "jsonline", "tasks"}
"""Modules every layer may import."""

FACADE = {"rag", "rag_graph", "rag_status", "services", "results", "defaults", "testing", "__init__"}
"""The top-level modules of the facade layer."""

COMMAND_LINE = {"__main__"}
"""Top-level modules of the command-line layer (``python -m lightrag_pg``)."""

ALLOWED: dict[str, set[str]] = {
    "foundation": set(),
    "db": {"db"},
    "llm": {"llm"},
    "offline": {"offline"},
    "store": {"store", "db"},
    "index": {"index", "store", "db", "llm", "offline"},
    "query": {"query", "store", "db", "llm"},
    "export": {"export", "store", "db"},
    "facade": {"facade", "index", "query", "export", "store", "db", "llm", "offline"},
    # `lightrag-pg serve` starts the server, so the command line may import it (not the reverse)
    "cli": {"cli", "server", "facade", "index", "query", "export", "store", "db", "llm", "offline"},
    "server": {"server", "facade", "index", "query", "export", "store", "db", "llm", "offline"},
}
"""Which layers each layer may import, besides the foundation (and itself)."""


class UnknownModule(Exception):
    """A module whose top-level name is in no layer of the table."""


def layer_of(module: str) -> str:
    """The layer of a dotted module name inside lightrag_pg (without the package prefix)."""
    head = module.split(".")[0]
    if head in FOUNDATION:
        return "foundation"
    if head in FACADE:
        return "facade"
    if head in COMMAND_LINE:
        return "cli"
    if head in ALLOWED:
        return head
    raise UnknownModule(
        f"{module}: no layer for the top-level module {head!r}; add it to tests/test_layers.py"
    )


def imported_modules(root: Path, path: Path) -> set[str]:
    """Every module of the package at ``root`` that ``path`` imports, function-level imports included."""
    package = list(path.relative_to(root).parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                found.add(".".join([*base, *node.module.split(".")]))
            else:
                found.update(".".join([*base, alias.name]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lightrag_pg."):
            found.add(node.module.removeprefix("lightrag_pg."))  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            found.update(
                a.name.removeprefix("lightrag_pg.") for a in node.names if a.name.startswith("lightrag_pg.")
            )
    return found


def violations(root: Path) -> list[str]:
    """Each import of a module under ``root`` that goes against the layer order."""
    wrong = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        source = layer_of(module)
        for target in sorted(imported_modules(root, path)):
            dest = layer_of(target)
            if dest not in ("foundation", source) and dest not in ALLOWED[source]:
                wrong.append(f"{module} ({source}) imports {target} ({dest})")
    return wrong


def test_imports_point_down() -> None:
    wrong = violations(PACKAGE)
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_nothing_in_the_package_imports_the_test_helpers() -> None:
    users = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "testing.py" and "testing" in imported_modules(PACKAGE, path)
    ]
    assert not users


def test_the_rule_sees_a_wrong_arrow(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "graph.py").write_text("from ..query.ranking import x\nfrom ..db import pool\n")
    (tmp_path / "errors.py").write_text("def f():\n    from .rag import LightRAG\n")
    assert violations(tmp_path) == [
        "errors (foundation) imports rag (facade)",
        "store.graph (store) imports query.ranking (query)",
    ]


def test_a_module_of_no_layer_fails(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("x = 1\n")
    with pytest.raises(UnknownModule, match="'helpers'"):
        violations(tmp_path)


def test_every_top_level_module_has_a_layer() -> None:
    heads = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in PACKAGE.rglob("*.py")}
    known = FOUNDATION | FACADE | COMMAND_LINE | set(ALLOWED) - {"foundation", "facade"}
    assert heads <= known, sorted(heads - known)
