"""Record how long each test module takes, for the order the suite's workers take them in (tests/conftest.py).

    python -m pytest -q -n auto --durations=0 --durations-min=0.5 | tee LOG
    python tools/record_test_durations.py LOG [LOG ...]      # writes tests/durations.json

pytest's "slowest durations" lines (`12.48s call     tests/test_x.py::test_y[case]`) are summed by
module (setup, call and teardown, every test of it listed): a module's seconds decide how early its
tests are handed out, so the long ones start first and short ones fill the end, never the reverse.
The numbers are the measured run's, rounded to a tenth of a second; rerun it when the suite changes
much. A test missing from the file (new, or under the cutoff) is just not moved forward.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DURATION = re.compile(r"^\s*([0-9.]+)s (?:setup|call|teardown)\s+(tests/[\w/]+\.py)::\S+\s*$")
OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"


def module_seconds(lines) -> dict[str, float]:
    """Seconds per test module, summed over the duration lines among `lines`."""
    totals: dict[str, float] = {}
    for line in lines:
        found = DURATION.match(line)
        if found:
            totals[found.group(2)] = totals.get(found.group(2), 0.0) + float(found.group(1))
    return totals


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    totals: dict[str, float] = {}
    for log in argv:
        for module, seconds in module_seconds(Path(log).read_text(encoding="utf-8").splitlines()).items():
            totals[module] = totals.get(module, 0.0) + seconds
    if not totals:
        print(f"{', '.join(argv)}: no pytest duration lines (run pytest with --durations=0)", file=sys.stderr)
        return 2
    ordered = dict(sorted(((m, round(s, 1)) for m, s in totals.items()), key=lambda kv: (-kv[1], kv[0])))
    OUT.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(ordered)} modules, {sum(ordered.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
