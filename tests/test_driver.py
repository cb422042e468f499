"""One per-file driver: every command runs its files through commands/workers.run_files.

Counted from the source with `ast`: the time-limit wrapper is entered in one module, the choice
between the tree walk and the line reader is made in one function, and only the driver starts
worker processes; then the words each command prints for a file past --file-timeout.
"""

from __future__ import annotations

import time
from pathlib import Path

from portkit.commands import audit as audit_command
from portkit.commands import convert as convert_command
from portkit.commands.audit import audit_paths, configured
from portkit.commands.convert import convert_paths
from portkit.project.config import Config
from test_architecture import _calls as calls_of, _sites

def _calls(name: str) -> dict[str, set[str]]:
    """{module path: the functions holding a call of `name`}, from the architecture test's finder."""
    found: dict[str, set[str]] = {}
    for site in _sites(calls_of(name)):
        module, function = site.split(":")
        found.setdefault(module.replace(".", "/") + ".py", set()).add(function)
    return found


def test_the_time_limit_is_entered_in_one_module():
    assert _calls("time_limit") == {"portkit/commands/workers.py": {"_limited"}}


def test_the_source_or_text_choice_is_made_in_one_function():
    """scan_source (the tree walk) and scan_text (build and Python files) are called by one
    function, commands/scan/job.py's scan_file; walk.py's own warm-up scans a kernel of its own."""
    calls = _calls("scan_source")
    assert calls.pop("portkit/commands/scan/walk.py") == {"warm_up"}
    for module, functions in _calls("scan_text").items():
        calls.setdefault(module, set()).update(functions)
    assert calls == {"portkit/commands/scan/job.py": {"scan_file"}}


def test_every_command_runs_its_files_through_the_one_driver():
    assert _calls("ordered_map") == {"portkit/commands/workers.py": {"run_files"}}
    assert set(_calls("run_files")) == {f"portkit/commands/{name}.py"
                                        for name in ("audit", "check", "compat", "convert", "convert_audit")}


def _slow(*args, **kwargs):
    time.sleep(5)


def test_a_file_past_the_limit_is_reported_in_the_audits_words(tmp_path: Path, monkeypatch):
    (tmp_path / "k.cu").write_bytes(b"void f() { cudaFree(0); }\n")
    monkeypatch.setattr(audit_command, "audit_bytes", _slow)
    result = audit_paths([tmp_path], configured(Config(), scan={"file_timeout": 0.05}, cache=False))
    assert [(s.rel, s.reason, s.error) for s in (f.skipped for f in result.files) if s is not None] == [
        ("k.cu", "took longer than 0.05 s to audit: not audited (--file-timeout)", True)]


def test_a_file_past_the_limit_is_reported_in_converts_words(tmp_path: Path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_bytes(b"void f() { cudaFree(0); }\n")
    monkeypatch.setattr(convert_command, "convert_bytes", _slow)
    opts = convert_command.configured(Config(), scan={"file_timeout": 0.05}, output=tmp_path / "out")
    result = convert_paths([tmp_path / "src"], opts)
    assert [(s.rel, s.reason, s.error) for s in (o.skipped for o in result.outcomes) if s is not None] == [
        ("k.cu", "took longer than 0.05 s to scan: left as it is (--file-timeout)", True)]
    assert (tmp_path / "out" / "k.cu").read_bytes() == b"void f() { cudaFree(0); }\n"   # copied as it is
