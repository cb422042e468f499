"""The scan's passes declare themselves (issue 47, item 3): the walk runs the registry built from
the rewrite modules' declarations, in the order their dependencies give, and names no rewriter.

The order test pins the order the walk ran its passes in before they declared it (scan_source's
lines), so a dependency dropped or added by mistake shows here before it shows in a golden.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from test_architecture import find_cycle, import_graph

PACKAGE = Path(__file__).resolve().parent.parent / "portkit"

# the order scan_source ran them in, by hand, before the passes declared it
POST_WALK = ("splices", "pasted_arguments", "lossy", "guard_fallbacks")   # the last: reads the others' findings
FINISH = ("guards", "includes", "polyfills", "transitive", "nvidia_votes", "nvidia_thrust", "toolkit_asserts")
NAME_PASSES = ("identifiers", "builtins", "minmax", "device_printf", "deviceptr")


def test_the_walk_imports_no_rewriter_module_by_name():
    rewriters = {f"portkit.rewrite.{p.stem}" for p in (PACKAGE / "rewrite").glob("*.py") if p.stem != "__init__"}
    graph = import_graph()   # every import, resolved as the architecture test resolves it
    scan = sorted((PACKAGE / "commands" / "scan").glob("*.py"))
    assert len(scan) > 3   # the folder the walk lives in: a moved package must move this test too
    for path in scan:
        module = f"portkit.commands.scan.{path.stem}" if path.stem != "__init__" else "portkit.commands.scan"
        assert sorted(graph[module] & rewriters) == [], path.name


def test_the_walk_runs_the_passes_in_the_order_they_ran_before_they_declared_it():
    from portkit import rewrite
    registry = rewrite.registry()
    assert tuple(p.name for p in registry.phase("post-walk")) == POST_WALK
    assert tuple(p.name for p in registry.phase("finish")) == FINISH
    assert tuple(p.name for p in registry.walk("name")) == NAME_PASSES
    assert [p.name for p in registry.walk("strict")] == ["strictness"]
    assert [p.name for p in registry.walk("device")] == ["device_functions"]
    assert {kind: run.__module__ for kind, run in registry.by_kind.items()} == {
        "preproc_include": "portkit.rewrite.includes", "kernel_call_syntax": "portkit.rewrite.launches",
        "preproc_arg": "portkit.rewrite.macros", "string_literal": "portkit.rewrite.strings",
        "gnu_asm_expression": "portkit.rewrite.inline_ptx"}


def test_the_order_comes_from_the_declared_dependencies_not_from_the_list():
    """The modules listed backwards give the same order: nothing rests on where a line sits."""
    from portkit import rewrite
    from portkit.engine.passes import build
    backwards = build(reversed(rewrite.declared()))
    assert tuple(p.name for p in backwards.phase("post-walk")) == POST_WALK
    assert tuple(p.name for p in backwards.phase("finish")) == FINISH
    assert tuple(p.name for p in backwards.walk("name")) == NAME_PASSES


def test_the_node_passes_are_the_kinds_the_scan_query_captures():
    from portkit import rewrite
    from portkit.core import parse
    assert sorted(rewrite.registry().by_kind) == sorted(parse.CAPTURE_KINDS)


def test_every_module_that_declares_passes_is_in_the_registry():
    from portkit import rewrite
    declaring = {p.stem for p in (PACKAGE / "rewrite").glob("*.py")
                 if any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "PASSES" for t in n.targets)
                        for n in ast.parse(p.read_text(encoding="utf-8")).body)}
    assert declaring == set(rewrite.MODULES)


def _post(name: str, *after: str, phase: str = "finish"):
    from portkit.engine.passes import Pass
    return Pass(name, phase, lambda ctx, view, root: None, after=after)


def test_a_cycle_is_an_error_when_the_registry_is_built():
    from portkit.engine.passes import PassError, build
    with pytest.raises(PassError, match="cycle: a, b"):
        build([_post("a", "b"), _post("b", "a"), _post("c")])


def test_an_unknown_dependency_is_an_error_when_the_registry_is_built():
    from portkit.engine.passes import PassError, build
    with pytest.raises(PassError, match="pass a runs after nowhere, which no module declares"):
        build([_post("a", "nowhere")])


@pytest.mark.parametrize("declared, message", [
    (lambda: [_post("a"), _post("a")], "pass a is declared twice"),
    (lambda: [_post("a", "b", phase="post-walk"), _post("b")], r"pass a \(post-walk\) runs after b, a later phase's"),
    (lambda: [_post("a", phase="later")], "pass a: unknown phase 'later'"),
])
def test_a_declaration_the_walk_cannot_run_is_an_error(declared, message):
    from portkit.engine.passes import PassError, build
    with pytest.raises(PassError, match=message):
        build(declared())


def test_two_passes_for_one_node_kind_are_an_error():
    from portkit.engine.passes import Pass, PassError, build
    handle = lambda ctx, view, node: None   # noqa: E731
    with pytest.raises(PassError, match="pass b: node kind string_literal already has a pass"):
        build([Pass("a", "walk", handle, capture="node", kinds=("string_literal",)),
               Pass("b", "walk", handle, capture="node", kinds=("string_literal",))])


def test_independent_passes_keep_their_declared_order_and_phases_run_in_order():
    from portkit.engine.passes import build
    registry = build([_post("z"), _post("late", "a"), _post("a"), _post("first", phase="post-walk")])
    assert registry.order() == ("first", "z", "a", "late")


def test_the_registry_adds_no_import_cycle():
    """rewrite/__init__.py imports its modules through importlib: those edges count too."""
    from portkit import rewrite
    graph = import_graph()
    graph["portkit.rewrite"] |= {f"portkit.rewrite.{m}" for m in rewrite.MODULES}
    below = ("portkit.core", "portkit.core.tables", "portkit.engine.platform", "portkit.engine", "portkit.rules",
             "portkit.rewrite", "portkit.buildfiles", "portkit.commands.scan")   # the layers up to the walk's
    inside = {name for name in graph if name.startswith(below)}
    assert find_cycle({name: graph[name] & inside for name in inside}) is None
