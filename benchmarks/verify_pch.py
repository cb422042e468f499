"""verify with and without the PCH of each unit's leading includes (commands/verify/precompiled.py):
the CPU seconds (user + sys of the command and its compilers) and wall seconds of a command run once
with PORTKIT_VERIFY_NO_PCH=1 and once without it, and whether the two JSON verdicts agree.

    python benchmarks/verify_pch.py -- portkit verify OUT --source TREE --rocm 6.2 \\
        --rocm-headers PACKS --offline -j 2 --no-cache --format json -o {json}
    python benchmarks/verify_pch.py -- python -m pytest -q -p no:cacheprovider tests/test_verify.py::NAME

`{json}` in the command is replaced by a file per run; the verdicts compared are every unit's JSON
but its seconds. The machine is shared: CPU seconds are the comparable number, wall time is noise.
Results: benchmarks/results/verify_pch.md.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(command: list[str], no_pch: bool, out: Path) -> tuple[float, float, int]:
    env = dict(os.environ, PORTKIT_VERIFY_NO_PCH="1" if no_pch else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([arg.replace("{json}", str(out)) for arg in command], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.returncode


def _verdict(path: Path) -> list | None:
    if not path.exists():
        return None
    units = json.loads(path.read_text()).get("units", [])
    for unit in units:
        unit.pop("seconds", None)
    return units


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1:] if "--" in argv else argv
    folder = Path(tempfile.mkdtemp(prefix="verify-pch-bench-"))
    rows, verdicts = [], {}
    for no_pch in (True, False):
        out = folder / f"{'plain' if no_pch else 'pch'}.json"
        cpu, wall, rc = _run(command, no_pch, out)
        verdicts[no_pch] = _verdict(out)
        rows.append(f"| {'PORTKIT_VERIFY_NO_PCH=1' if no_pch else 'PCH'} | {cpu:.1f} | {wall:.1f} | {rc} |")
    print("| run | CPU s | wall s | exit |\n|---|---|---|---|\n" + "\n".join(rows))
    if verdicts[True] is not None:
        print("verdicts identical:", verdicts[True] == verdicts[False])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
