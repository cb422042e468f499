"""The deep-mode worker stays light: it starts once per translation unit, in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_worker_loads_only_its_own_modules():
    """`python -m portkit.commands.deep.worker` runs portkit/__init__.py (which loads only core/version.py),
    the commands package's __init__.py (a docstring) and the worker's modules, never the scanner, the tables or tree-sitter."""
    probe = ("import sys, portkit.commands.deep.worker; "
             "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('portkit', 'tree_sitter'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.split() == ["portkit", "portkit.commands", "portkit.commands.deep", "portkit.commands.deep.worker",
                                  "portkit.commands.deep.worker_facts", "portkit.commands.deep.worker_includes",
                                  "portkit.commands.deep.worker_macros", "portkit.commands.deep.worker_unit",
                                  "portkit.core", "portkit.core.version"]
