"""The package's shape: imports run one way, no module grows past 400 lines.

The import graph is built from the source with `ast` (module-level and function-level imports
alike, plus the rule registry's importlib list), so a cycle hidden inside a function still fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from portkit.rules import MODULES as RULE_MODULES

PACKAGE = Path(__file__).resolve().parent.parent / "portkit"
MAX_LINES = 400


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module if node.module and node.module.split(".")[0] == "portkit" else None
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """{module: modules of portkit it imports}, resolved to the most specific module named."""
    modules = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _target(name, path.name == "__init__.py", node)
                if target is None:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    deps.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.split(".")[0] == "portkit")
        graph[name] = {d for d in deps if d in modules and d != name}
    graph["portkit.rules"] |= {f"portkit.rules.{m}" for m in RULE_MODULES}   # importlib registry
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}   # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_no_import_cycle_in_portkit():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("lower, upper", [
    ("portkit.context", "portkit.scan"),
    ("portkit.context", "portkit.rewrite.identifiers"),
    ("portkit.results", "portkit.convert"),
    ("portkit.results", "portkit.audit"),
    ("portkit.units", "portkit.verify"),
])
def test_layers_import_downwards_only(lower, upper):
    """The lower module never reaches the upper one, directly or through others."""
    graph = import_graph()
    seen, todo = set(), [lower]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(graph[node])
    assert upper not in seen


def test_reports_read_the_result_model_not_the_commands():
    graph = import_graph()
    commands = {"portkit.convert", "portkit.audit", "portkit.verify", "portkit.check", "portkit.api"}
    for module, deps in graph.items():
        if module.startswith("portkit.report."):
            assert not deps & commands, f"{module} imports {sorted(deps & commands)}"


def test_version_module_imports_nothing():
    tree = ast.parse((PACKAGE / "version.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_no_module_over_400_lines():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_package_named_build():
    """A package called `build` is hidden by the usual ignore rules and by code tools."""
    assert not (PACKAGE / "build").exists()
