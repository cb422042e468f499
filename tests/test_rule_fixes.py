"""A rule's fix, byte for byte: fixtures/rules/PKnnn/fixes/<file> converted with `--fix FAMILY` (the
rule's FIX_FAMILY) gives <file>.fixed exactly, and without it <file>.converted (what convert wrote
before the rule had a fix); the fixed bytes are a fixed point. A build or Python file's text rule
carries its fix on its finding (engine/fix.py), which audit shows as `autofix`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from conftest import REPO
from portkit import rules
from portkit.commands.convert import convert_bytes
from portkit.core.files import kind_of
from portkit.engine.context import Options
from portkit.core.tables.mappings import parse_version

RULES_DIR = REPO / "fixtures" / "rules"
CASES = sorted(p for p in RULES_DIR.glob("PK*/fixes/*") if p.is_file() and p.suffix not in (".fixed", ".converted"))
ROCM = parse_version("5.2")


def _family(code: str) -> str:
    name = next(m for m in rules.MODULES if m.startswith(code))
    return importlib.import_module(f"portkit.rules.{name}").FIX_FAMILY.name


def _convert(path: Path, data: bytes, fixes: frozenset[str]) -> bytes:
    kind = kind_of(path.name) or "source"
    _scan, out = convert_bytes(path.name, data, Options(rocm=ROCM, fixes=fixes), kind)
    return data if out is None else out


@pytest.mark.parametrize("path", CASES, ids=[p.relative_to(RULES_DIR).as_posix() for p in CASES])
def test_fix_gives_the_expected_bytes(path: Path):
    family = frozenset({_family(path.parent.parent.name)})
    data = path.read_bytes()
    fixed = _convert(path, data, family)
    assert fixed == path.with_name(path.name + ".fixed").read_bytes()
    assert _convert(path, data, frozenset()) == path.with_name(path.name + ".converted").read_bytes()
    assert _convert(path, fixed, family) == fixed   # a second run changes nothing


def test_a_text_rules_fix_rides_on_its_finding_and_applies_with_its_family(monkeypatch):
    """The text path carries fixes generically: a rule module with FILE_KINDS and FIX_FAMILY, its
    check attaching a Fix, is all `--fix NAME` needs on a build file."""
    from types import SimpleNamespace

    from portkit.core.edits import Edit
    from portkit.engine import fix
    from portkit.engine.textmatch import flag_matches
    rule = rules.get("PK507")
    pattern = re.compile(r"\bCUDA_VISIBLE_DEVICES\b")

    def check_text(ctx):
        flag_matches(ctx, rule, pattern, "{}", fixed_by=lambda line, found: fix.Fix(
            rule.code, line.offset(found[0].start()), tuple(Edit(line.offset(m.start()), line.offset(m.end()),
                                                                 b"HIP_VISIBLE_DEVICES", "") for m in found)))
    module = SimpleNamespace(__name__="fake", RULE=rule, FILE_KINDS=("shell",), check_text=check_text,
                             FIX_FAMILY=fix.Family("demo"))
    monkeypatch.setattr(rules, "fix_families", lambda: fix.registry([module]))
    data = b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0  # pick one\n./train\n"
    options = Options(rocm=ROCM)
    _scan, out = convert_bytes("run.sh", data, Options(rocm=ROCM, fixes=frozenset({"demo"})), "shell")
    assert out == data.replace(b"CUDA_VISIBLE", b"HIP_VISIBLE")
    assert convert_bytes("run.sh", data, options, "shell")[1] is None
    monkeypatch.setattr(rules, "text_hooks", lambda: {"shell": (check_text,)})
    scan, _ = convert_bytes("run.sh", data, Options(rocm=ROCM, audit=True), "shell")
    assert [(f.code, f.line, f.autofix) for f in scan.findings] == [("PK507", 2, ((2, 8, 2, 28, "HIP_VISIBLE_DEVICES"),))]
    assert isinstance(scan.findings[0].fixed_by, fix.Fix) and scan.findings[0].fixed_by.applicability == fix.SAFE


def test_fix_families_come_from_the_rule_modules():
    """One registry, built from the rule modules: the warp rules and PK504 declare their families."""
    families = rules.fix_families()
    assert sorted(families) == ["build", "warp"]
    assert families["warp"].codes == {"PK201", "PK202", "PK204", "PK205", "PK208"} and families["build"].codes == {"PK504"}
    assert families["build"].text == {"cmake": (importlib.import_module(
        "portkit.rules.PK504_cmake_cuda_targets").check_text,)}


def test_convert_refuses_an_unknown_family_in_one_line(tmp_path, capsys):
    from portkit.cli.app import main
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    assert main(["convert", str(tmp_path), "-o", str(tmp_path / "out"), "--fix", "warp,x"]) == 2
    assert capsys.readouterr().err == "portkit: error: --fix: unknown family 'x' (known: build, warp)\n"
    assert not (tmp_path / "out").exists()


def test_convert_fix_build_on_the_command_line_and_the_api(tmp_path):
    """`--fix build` (repeatable, comma lists) and convert_paths(fixes=...) apply PK504's fix; the
    API's older fix_warp=True still means fixes="warp"."""
    from portkit import api
    from portkit.cli.app import main
    case = RULES_DIR / "PK504" / "fixes" / "CMakeLists.txt"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_bytes(case.read_bytes())
    assert main(["convert", str(tmp_path / "src"), "-o", str(tmp_path / "cli"), "-q", "--fix", "warp",
                 "--fix", "build", "--rocm", "5.2"]) == 0
    assert (tmp_path / "cli" / "CMakeLists.txt").read_bytes() == case.with_name("CMakeLists.txt.fixed").read_bytes()
    api.convert_paths([tmp_path / "src"], output=tmp_path / "api", rocm="5.2", fixes="build", fix_warp=True)
    assert (tmp_path / "api" / "CMakeLists.txt").read_bytes() == case.with_name("CMakeLists.txt.fixed").read_bytes()
    with pytest.raises(Exception, match="unknown family 'nope'"):
        api.convert_paths([tmp_path / "src"], output=tmp_path / "bad", fixes=["nope"])
