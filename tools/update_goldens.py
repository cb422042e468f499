"""Write fixtures/convert/*/expected* from the current converter. Review the diff before committing!

    python tools/update_goldens.py [CASE ...]

Goldens are the contract: regenerate only after reading what changed (git diff fixtures/), and
check the outputs still compile (pytest tests/test_compile_fixtures.py).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from cases import all_cases  # noqa: E402
from portkit.cli.app import main  # noqa: E402


def update(case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        code = main(["convert", str(case.input), "-o", str(out), "-q", *case.convert_args()])
        if code != 0:
            raise SystemExit(f"{case.name}: portkit convert exited {code}")
        if case.multi:
            shutil.rmtree(case.expected, ignore_errors=True)
            shutil.copytree(out, case.expected)
        else:
            case.expected.write_bytes((out / case.input.name).read_bytes())


def main_() -> None:
    wanted = set(sys.argv[1:])
    for case in all_cases():
        if not wanted or case.name in wanted:
            update(case)
            print(f"updated {case.name}")


if __name__ == "__main__":
    main_()
