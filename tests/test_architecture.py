"""The package's shape: imports run one way, no module grows past 400 lines.

The import graph is built from the source with `ast` (module-level and function-level imports
alike, plus the rule registry's importlib list), so a cycle hidden inside a function still fails.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from portkit.rules import MODULES as RULE_MODULES

PACKAGE = Path(__file__).resolve().parent.parent / "portkit"
MAX_LINES = 400
MAX_FUNCTION = 60


@lru_cache(maxsize=1)
def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


@lru_cache(maxsize=None)
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree, the module first, in ast.walk's order: parsed once per
    test process. The graphs and finders here (and test_driver.py's, test_passes.py's) read the
    whole package's source about twenty times a run, and parsing it was most of their time; they
    only read the trees."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module if node.module and node.module.split(".")[0] == "portkit" else None
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported(name: str, path: Path, nodes, modules: dict) -> set[str]:
    """The portkit modules the `from ... import` nodes among `nodes` name, resolved to the most
    specific module named (the three graphs below differ only in which nodes they read)."""
    deps: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            target = _target(name, path.name == "__init__.py", node)
            if target is None:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                deps.add(sub if sub in modules else target)
    return {d for d in deps if d in modules and d != name}


def import_graph() -> dict[str, set[str]]:
    """{module: modules of portkit it imports}, resolved to the most specific module named."""
    modules = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        nodes = _nodes(path)
        plain = {a.name for node in nodes if isinstance(node, ast.Import) for a in node.names
                 if a.name.split(".")[0] == "portkit"}
        graph[name] = _imported(name, path, nodes, modules) | {d for d in plain if d in modules and d != name}
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


def _layers() -> dict[str, int]:
    """{package: layer} from the layer table of docs/architecture.md (the top-level modules are `api`)."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            for name in re.findall(r"`(\w+)`", cells[1]):
                layers[name] = int(cells[0])
    return layers


def _package(module: str) -> str:
    parts = module.split(".")
    is_package = _module_names()[module].name == "__init__.py"
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and is_package) else "api"


def runtime_graph() -> dict[str, set[str]]:
    """The import graph without the imports under `if TYPE_CHECKING:` (types only, never run)."""
    modules = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        nodes = _nodes(path)
        typing_only = {id(n) for block in _type_checking_blocks(nodes) for n in ast.walk(block)}
        graph[name] = _imported(name, path, (n for n in nodes if id(n) not in typing_only), modules)
    return graph


def _type_checking_blocks(nodes: tuple[ast.AST, ...]) -> list[ast.If]:
    return [node for node in nodes if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test)]


def type_only_graph() -> dict[str, set[str]]:
    """The imports under `if TYPE_CHECKING:` only: types, never run, but still an edge between packages."""
    modules = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        blocks = _type_checking_blocks(_nodes(path))
        graph[name] = _imported(name, path, (n for block in blocks for n in ast.walk(block)), modules)
    return graph


def test_the_layer_table_names_every_package():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and not p.name.startswith("_")}
    assert set(_layers()) == packages | {"api"}


@pytest.mark.slow
def test_layers_import_downwards_only():
    """A module imports from its own package or from a lower layer of docs/architecture.md."""
    assert _upward(runtime_graph()) == []


def test_type_only_imports_import_downwards_too():
    """An import under `if TYPE_CHECKING:` runs never, but it still ties its package to the one it
    names: engine/context.py naming rules' Rule closed a loop of engine, rules, project, rewrite
    and buildfiles. The types a lower layer needs live in that layer."""
    assert _upward(type_only_graph()) == []


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """The edges of `graph` into a higher layer, or sideways into another package of the same one."""
    layers = _layers()
    return sorted(f"{module} -> {dep}" for module, deps in graph.items() for dep in deps
                  if layers[_package(dep)] > layers[_package(module)]
                  or (layers[_package(dep)] == layers[_package(module)] and _package(dep) != _package(module)))


def test_no_import_cycle_between_packages():
    """The packages' graph, every import counted (in functions, under TYPE_CHECKING, the rule
    registry's), has no cycle: a package can be read, tested and moved with the ones below it."""
    packages: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        packages.setdefault(_package(module), set()).update(
            _package(dep) for dep in deps if _package(dep) != _package(module))
    cycle = find_cycle(packages)
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


def test_plugins_import_the_framework_not_each_other():
    """rules/, rewrite/ and buildfiles/ are plugins over the framework (engine/, core/): no
    rewriter or build-file handler imports rules/ (its Rule, Code, tree helpers are engine's),
    and no rule imports a rewriter or a build-file handler."""
    found = sorted(f"{module} -> {dep}" for module, deps in import_graph().items() for dep in deps
                   if (_package(module) in ("rewrite", "buildfiles") and _package(dep) == "rules")
                   or (_package(module) == "rules" and _package(dep) in ("rewrite", "buildfiles")))
    assert found == []


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def test_no_module_imports_a_private_module_of_another_package():
    """A module whose name starts with `_` belongs to its package: another package imports a
    public module (the tree questions are engine/syntax.py, once rules/_tree.py) or calls a public
    function of the package."""
    found = sorted(f"{module} -> {dep}" for module, deps in import_graph().items() for dep in deps
                   if _private(dep) and _package(dep) != _package(module))
    assert found == []


def test_the_layer_check_sees_an_upward_import():
    layers = _layers()
    assert layers["core"] < layers["engine"] < layers["rules"] < layers["rewrite"] < layers["commands"] < layers["cli"]
    assert _upward({"portkit.engine.platform.regions": {"portkit.commands.scan.walk"}}) == \
        ["portkit.engine.platform.regions -> portkit.commands.scan.walk"]


def test_at_most_ten_top_level_packages():
    """Issue 47: ten packages, each named for what it holds; a subpackage (core/tables,
    engine/platform, commands/scan) belongs to its package's layer."""
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and not p.name.startswith("_"))
    assert packages == ["buildfiles", "cli", "commands", "core", "engine", "estimate", "project", "report",
                        "rewrite", "rules"]


def test_the_scan_and_deep_mode_sit_under_the_commands_that_use_them():
    """commands/scan/ is the stage every command runs: it imports no command (convert, audit,
    check, verify, workers), so a command can be read with the scan below it; commands/deep/
    imports the scan (suppress) and nothing else of commands."""
    found = []
    for module, deps in import_graph().items():
        for sub, allowed in (("scan", ("portkit.commands.scan",)),
                             ("deep", ("portkit.commands.deep", "portkit.commands.scan"))):
            if module.startswith(f"portkit.commands.{sub}"):
                found += [f"{module} -> {d}" for d in deps
                          if d.startswith("portkit.commands") and not d.startswith(allowed)]
    assert found == []


def test_reports_read_the_result_model_not_the_commands():
    graph = import_graph()
    for module, deps in graph.items():
        if module.startswith("portkit.report."):
            commands = {d for d in deps if d.startswith("portkit.commands.")
                        and d not in ("portkit.commands.results", "portkit.commands.check_result")}
            assert not commands, f"{module} imports {sorted(commands)}"


def test_version_module_imports_nothing():
    tree = ast.parse((PACKAGE / "core" / "version.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_at_most_ten_modules_sit_directly_in_the_package():
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py", "api.py"]


def test_nothing_outside_rules_imports_a_rule_module():
    rule_modules = {f"portkit.rules.{m}" for m in RULE_MODULES}
    found = sorted(f"{module} -> {dep}" for module, deps in import_graph().items()
                   if not module.startswith("portkit.rules") for dep in deps & rule_modules)
    assert found == []


def test_rule_codes_are_literals_only_in_the_rules_and_their_registry():
    """Elsewhere a rule is named by its constant (engine/codes.py: Code.CUDA_VISIBLE_DEVICES)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "rules" or path == PACKAGE / "engine" / "codes.py":
            continue
        for node in _nodes(path):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"PK\d{3}", node.value):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value}")
    assert found == []


def test_the_code_registry_names_every_rule_once():
    from portkit import rules
    from portkit.engine.codes import Code
    assert Code.ALL == tuple(r.code for r in rules.all_rules())
    for name, code in vars(Code).items():
        if name.isupper() and name != "ALL":
            assert rules.get(code).name.upper().replace("-", "_") == name


def test_no_function_over_60_lines():
    long = sorted(f"{p.relative_to(PACKAGE.parent)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1})"
                  for p in PACKAGE.rglob("*.py") for n in _nodes(p)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > MAX_FUNCTION)
    assert long == []


def test_no_module_over_400_lines():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_package_named_build():
    """A package called `build` is hidden by the usual ignore rules and by code tools."""
    assert not (PACKAGE / "build").exists()


def _untyped(annotation: ast.expr | None) -> bool:
    """An annotation naming a plain dict, or a dict of Any, anywhere inside (list[dict], dict | None)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return _untyped(ast.parse(annotation.value, mode="eval").body)
    for node in ast.walk(annotation):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("dict", "Dict"):
            if any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(node.slice)):
                return True
        elif isinstance(node, ast.Name) and node.id in ("dict", "Dict") and not any(
                isinstance(p, ast.Subscript) and p.value is node for p in ast.walk(annotation)):
            return True
    return False


def test_report_functions_take_and_return_typed_results():
    """Renderers read typed records (report/audit_model.py), never a JSON dict by its keys."""
    found = []
    for path in sorted((PACKAGE / "report").glob("*.py")):
        for n in _nodes(path):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = n.args.posonlyargs + n.args.args + n.args.kwonlyargs + [n.args.vararg, n.args.kwarg]
                if any(_untyped(a.annotation) for a in args if a is not None) or _untyped(n.returns):
                    found.append(f"{path.name}:{n.lineno} {n.name}")
    assert found == []


def test_audit_format_choices_are_the_emitter_registry():
    from portkit.cli.app import build_parser
    from portkit.report import AUDIT_EMITTERS, GATE_EMITTERS, audit_emitter, gate_emitter
    sub = next(a for a in build_parser()._actions if a.choices and "audit" in a.choices).choices
    audit_format = next(a for a in sub["audit"]._actions if "--format" in a.option_strings)
    check_format = next(a for a in sub["check"]._actions if "--format" in a.option_strings)
    assert tuple(audit_format.choices) == tuple(AUDIT_EMITTERS) == ("text", "json", "sarif", "csv")
    assert tuple(check_format.choices) == tuple(GATE_EMITTERS) == ("text", "json", "sarif", "github")
    assert all(callable(audit_emitter(name).render) for name in AUDIT_EMITTERS)
    assert all(callable(gate_emitter(name)) for name in GATE_EMITTERS)


def _sites(found) -> list[str]:
    """'module:function' for each node of the package's source that `found(node)` accepts (issue 47's
    "settings once": where a value is resolved is counted, not trusted)."""
    sites = []
    for module, path in sorted(_module_names().items()):
        nodes = _nodes(path)
        functions = [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in nodes:
            if found(node):
                inside = [f.name for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
                sites.append(f"{module}:{inside[-1] if inside else '<module>'}")
    return sites


def _calls(name: str):
    """A finder of calls of `name`, plain (`name(...)`) or through a module (`x.name(...)`)."""
    return lambda n: isinstance(n, ast.Call) and name in (getattr(n.func, "id", None), getattr(n.func, "attr", None))


def test_the_target_release_is_resolved_in_one_module():
    # "newest" when --rocm is not given is decided by the settings (Options.target), never by a pass
    assert {site.split(":")[0] for site in _sites(_calls("target_release"))} == {"portkit.engine.options"}


def test_scan_settings_are_built_in_one_place():
    # every command (and the API) builds its settings through project/settings.resolve
    assert _sites(_calls("scan_options")) == ["portkit.project.settings:resolve"]


def test_the_flag_over_configuration_merge_is_written_once():
    # a configuration's `rocm` is read where the flag is merged over it, nowhere else
    reads = _sites(lambda n: isinstance(n, ast.Attribute) and n.attr == "rocm"
                   and isinstance(n.value, ast.Name) and n.value.id == "cfg")
    assert reads == ["portkit.project.settings:resolve"]


def test_settings_carry_a_concrete_target_and_the_flag_wins_over_the_configuration():
    from portkit.engine.options import Options
    from portkit.project.config import Config
    from portkit.project.settings import resolve
    from portkit.core.tables.mappings import default_db
    assert Options().target == default_db().newest and Options(rocm=(5, 2, 0)).target == (5, 2, 0)
    configured = Config(rocm="6.2")
    assert resolve(configured).rocm == resolve(configured).target == (6, 2, 0)
    assert resolve(configured, rocm="5.2").target == (5, 2, 0)
    assert resolve().rocm is None and resolve().target == default_db().newest
