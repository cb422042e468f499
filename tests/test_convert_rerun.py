"""A re-run of convert does only what changed (issue 52, item 3): the audit's view for needs_person
comes from convert's own prepare (one discovery, one reading of the tree), an output file whose
bytes and mode are already there is not written again, and --no-cache turns convert's result cache
off as it does the audit's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from portkit.cli.app import main
from portkit.commands import audit as audit_command
from portkit.project import pipeline

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "fixtures" / "sample_project"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    return tmp_path / "cache"


@pytest.fixture
def tree(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "src"))


def _convert(tree: Path, out: Path, capsysbinary, *extra: str) -> dict:
    code = main(["convert", str(tree), "-o", str(out), "--format", "json", "-j", "1", *extra])
    assert code in (0, 1)
    return json.loads(capsysbinary.readouterr().out)


def _inodes(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_ino for p in sorted(out.rglob("*")) if p.is_file()}


def test_convert_prepares_the_tree_once_and_needs_person_is_the_audits(tree, tmp_path, cache_dir, capsysbinary,
                                                                       monkeypatch):
    calls: list[tuple] = []
    real = pipeline.prepare

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(pipeline, "prepare", counting)
    summary = _convert(tree, tmp_path / "out", capsysbinary)
    assert len(calls) == 1   # convert's; the audit's view rides on it (pipeline.prepare(..., audit=))
    monkeypatch.setattr(pipeline, "prepare", real)
    audited = audit_command.audit_paths([tree], audit_command.configured(audit_command.Config()))
    headline = [(f.code, f.path, f.line) for f in audited.findings if f.severity in ("blocker", "high")]
    assert headline, "the sample project has findings that need a person"
    assert [(f["code"], f["path"], f["line"]) for f in summary["needs_person"]] == headline


def test_a_rerun_writes_only_the_files_whose_output_changed(tree, tmp_path, cache_dir, capsysbinary):
    out = tmp_path / "out"
    first = _convert(tree, out, capsysbinary)
    before = _inodes(out)
    kernel = next(p for p in sorted(tree.rglob("*.cu")))
    rel = str(kernel.relative_to(tree))
    kernel.write_bytes(kernel.read_bytes() + b"// one more line\n")
    script = next(p for p in sorted(tree.rglob("*")) if p.is_file() and str(p.relative_to(tree)) != rel)
    os.chmod(script, 0o750)   # same bytes, other permissions: written again, with them
    second = _convert(tree, out, capsysbinary)
    after = _inodes(out)
    assert before.keys() == after.keys()
    rewritten = sorted(name for name in after if after[name] != before[name])
    assert rewritten == sorted([rel, str(script.relative_to(tree))])
    assert (out / rel).read_bytes().endswith(b"// one more line\n")
    assert (out / script.relative_to(tree)).stat().st_mode & 0o7777 == 0o750
    assert first["files"]["written"] == second["files"]["written"] == len(after)   # the summary is the same


def test_a_rerun_rewrites_an_output_someone_edited(tree, tmp_path, cache_dir, capsysbinary):
    out = tmp_path / "out"
    _convert(tree, out, capsysbinary)
    expected = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    edited = sorted(expected)[0]
    edited.write_bytes(expected[edited][:-1] + b"#")   # same size, one byte off
    _convert(tree, out, capsysbinary)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == expected


def test_no_cache_keeps_nothing_for_convert(tree, tmp_path, cache_dir, capsysbinary):
    _convert(tree, tmp_path / "out", capsysbinary, "--no-cache")
    assert not list(cache_dir.glob("**/converts-*")) and not list(cache_dir.glob("**/scans-*"))
    assert not list(cache_dir.glob("**/filefacts-*"))   # nor the facts (project/file_facts.py)
    _convert(tree, tmp_path / "out2", capsysbinary)
    assert list(cache_dir.glob("**/converts-*")) and list(cache_dir.glob("**/scans-*"))
    assert list(cache_dir.glob("**/filefacts-*"))
