"""The project's promises about itself: README commands, CI script, shipped data."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block and text.index(block.group(0)) < 20, "README must start with the set-up commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_starts_with_exactly_two_commands_and_ci_runs_them():
    main_job, tests = readme_commands()
    # a fresh machine: a virtual environment first, then portkit alone (no test or deep extras)
    assert main_job.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . && ")
    assert "portkit convert fixtures/sample_project" in main_job
    assert "portkit audit fixtures/sample_project" in main_job and "--html out/" in main_job
    venv, activate, install, run = tests.split(" && ")   # its own shell: it makes or reuses the first's venv
    assert (venv, activate, install, run) == ("python3 -m venv .venv", ". .venv/bin/activate",
                                              "python -m pip install '.[test,deep]'", "python -m pytest -q -n auto")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert run in ci.splitlines() and "python -m pip install -q '.[test,deep]'" in ci
    assert "portkit convert fixtures/sample_project" in ci
    assert "portkit audit fixtures/sample_project" in ci
    assert "PORTKIT_REQUIRE_TOOLS=1" in ci
    assert "apt-get install -y -qq hipcc libamdhip64-dev rocm-device-libs" in ci
    assert "chromium chromium-driver" in ci


@pytest.mark.slow
def test_wheel_ships_the_mapping_tables(tmp_path: Path):
    """The tables are found inside an installed wheel, not only in a checkout."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-q", "-w", str(tmp_path), str(REPO)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("portkit-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    tables = sorted(p.name for p in (REPO / "mappings").glob("*.toml"))
    assert tables and all(f"portkit/_mappings/{t}" in names for t in tables)
    modules = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "portkit").rglob("*.py"))
    assert [m for m in modules if m not in names] == [], "every module ships (pyproject packages)"
    templates = sorted(p.name for p in (REPO / "reports").iterdir())
    assert templates and all(f"portkit/_reports/{t}" in names for t in templates)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import portkit.core.tables.mappings as m; "
             "print(m.tables_dir()); print(len(m.default_db()))")
    out = subprocess.run([sys.executable, "-c", probe, str(site)], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout.split()
    assert out[0] == str(site / "portkit" / "_mappings")
    assert int(out[1]) > 8000
