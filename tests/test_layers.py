"""The import arrows between the package's layers point one way (see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lightrag_pg"

FOUNDATION = {"errors", "types", "config", "textclean", "sentences", "jsonline", "tasks", "observe"}
"""Modules (and the ``observe`` package: spans and metrics) every layer may import."""

FACADE = {
    "rag",
    "rag_graph",
    "rag_status",
    "rag_transfer",
    "services",
    "handle",
    "results",
    "defaults",
    "testing",
    "__init__",
}
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
    # the LangChain and LlamaIndex retrievers: beside cli and server, on the facade only
    "integrations": {"integrations", "facade", "query"},
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


TOP_LAYERS = ("server", "cli", "integrations")
"""The layers that call the facade (or, for the retrievers, a server's REST API)."""


def facade_bypasses(root: Path) -> list[str]:
    """Each place in the routes, commands and retrievers under ``root`` that opens a session or
    unit of work, takes a connection of a workspace pool or loads SQL, instead of calling the facade."""
    found = [str(p.relative_to(root)) for layer in TOP_LAYERS for p in sorted((root / layer).rglob("*.sql"))]
    for layer in TOP_LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                on_pool = isinstance(func, ast.Attribute) and getattr(func.value, "attr", "") == "pool"
                if name in ("session", "unit_of_work", "load_queries") or (name == "acquire" and on_pool):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {name}()")
    return found


def test_routes_and_commands_call_the_facade_only() -> None:
    assert facade_bypasses(PACKAGE) == []


def test_the_facade_rule_sees_a_route_opening_a_session(tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    (tmp_path / "cli").mkdir()
    (tmp_path / "server" / "routes.py").write_text(
        "async def f(rag):\n    async with rag.session() as s:\n        pass\n"
    )
    (tmp_path / "cli" / "demo.py").write_text(
        "async def g(rag):\n    async with rag.pool.acquire() as c:\n        pass\n"
    )
    (tmp_path / "server" / "documents.sql").write_text("-- name: x\nSELECT 1;\n")
    assert facade_bypasses(tmp_path) == [
        "server/documents.sql",
        "server/routes.py:2 session()",
        "cli/demo.py:2 acquire()",
    ]


INTEGRATIONS_MAY_IMPORT = {"rag", "query.param"}
"""Of the package, what the retrievers import besides the foundation: the facade and its
query parameters."""


def test_the_retrievers_use_the_facade_only() -> None:
    root = PACKAGE / "integrations"
    for path in sorted(root.rglob("*.py")):
        imported = imported_modules(PACKAGE, path)
        outside = {
            m
            for m in imported
            if layer_of(m) not in ("foundation", "integrations") and m not in INTEGRATIONS_MAY_IMPORT
        }
        assert not outside, f"{path.relative_to(PACKAGE)} imports {sorted(outside)}"


STATEMENT_CALLS = {
    "fetch",
    "fetchval",
    "fetchrow",
    "execute",
    "executemany",
    "cursor",
    "copy_records_to_table",
}

RUNS_SQL_ABOVE_STORE = {
    "export/sections.py": "streams the export's rows through a server-side cursor",
    "server/registry.py": "pings the database on the server's own admin pool for the health check",
}
"""The modules above ``store/`` that run a statement themselves, and why."""


def statements_above_store(root: Path) -> set[str]:
    """The modules outside ``db/`` and ``store/`` that run a statement on a connection."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("db", "store"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in STATEMENT_CALLS
            ):
                found.add(relative.as_posix())
    return found


def test_nothing_above_store_runs_a_statement_but_the_named_exceptions() -> None:
    assert statements_above_store(PACKAGE) == set(RUNS_SQL_ABOVE_STORE)


FACADE_LOGIC = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.comprehension, ast.Lambda)
"""What a method of the facade may not hold: branches, loops, error handling, comprehensions
and lambdas belong to the layers it calls."""


def facade_methods() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of the classes of ``rag.py`` and its method groups ``rag_*.py``."""
    found = []
    for path in sorted(PACKAGE.glob("rag*.py")):
        for cls in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(cls, ast.ClassDef):
                found += [
                    (f"{path.name}:{cls.name}.{fn.name}", fn)
                    for fn in cls.body
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                ]
    return found


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    docstring = isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant)
    return fn.body[1:] if docstring else fn.body


def test_the_facade_only_delegates() -> None:
    """Each method of ``LightRAG`` is a short call into a service or store object (at most
    three statements, with no branch, loop, ``try``, comprehension or lambda), and the
    facade keeps one attribute, its handle: no state is copied into it. ``rag.py`` once
    grew to 779 lines of logic; then it passed a line count by moving methods to mixins."""
    methods = facade_methods()
    assert len(methods) > 50
    too_long = [name for name, fn in methods if len(_body(fn)) > 3]
    logic = [
        f"{name}: {type(node).__name__}"
        for name, fn in methods
        for statement in _body(fn)
        for node in ast.walk(statement)
        if isinstance(node, FACADE_LOGIC)
    ]
    assigned = {
        target.attr
        for _, fn in methods
        for node in ast.walk(fn)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self"
    }
    assert (too_long, logic, assigned) == ([], [], {"_handle"})


WORKSPACE_NAME_CHECKS = {
    "services.py": "LightRAG(workspace=...)",
    "cli/common.py": "--workspace and the commands' workspace arguments",
    "server/deps.py": "a request's LIGHTRAG-WORKSPACE header or MCP workspace",
    "server/settings.py": "the server's default workspace",
    "db/migrate.py": "alembic -x workspace=...",
    "db/workspace.py": "names read from the catalog",
    "db/identifiers.py": "WorkspaceName itself, and schema_of: nothing unchecked reaches SQL text",
}
"""Where a workspace name is checked: where it enters. Every layer below takes a
``WorkspaceName`` (mypy checks that) instead of checking again."""


def test_workspace_names_are_checked_where_they_enter() -> None:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("WorkspaceName", "validate_workspace")
            ):
                found.add(path.relative_to(PACKAGE).as_posix())
    assert found == set(WORKSPACE_NAME_CHECKS)
