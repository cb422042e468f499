"""Coverage-guided fuzzing of the build-file translators and the text rules with atheris.

    pip install '.[fuzz]'
    mkdir -p work-build && python fuzz/fuzz_buildfiles.py -max_total_time=300 -seed=1 work-build fuzz/seeds-build

The first byte of an input picks the kind of file (CMake, Makefile, setup.py, shell, requirements,
pyproject, conda environment); the rest is its text. Each input is scanned in convert mode (the
edits applied, every byte outside them checked unchanged, then converted again: idempotence) and
in audit mode (every text rule). Any exception is a crash: libFuzzer writes the input to
crash-<hash>; add it as an exact case to tests/test_robustness.py and fix the bug.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["portkit"]):
    from portkit.engine.context import Options
    from portkit.core.edits import apply_edits, normalize
    from portkit.core.source import SourceFile
    from portkit.commands.scan.text import scan_text

KINDS = [("cmake", "CMakeLists.txt"), ("make", "Makefile"), ("python", "setup.py"), ("shell", "run.sh"),
         ("requirements", "requirements.txt"), ("pyproject", "pyproject.toml"), ("conda", "environment.yml")]
CONVERT = Options(offload_arch=("gfx90a", "gfx942"))
AUDIT = Options(audit=True)


def check_outside_edits(data: bytes, out: bytes, edits) -> None:
    """Every byte that no edit covers comes out unchanged, in order."""
    pos = at = 0
    for edit in edits:
        gap = data[pos:edit.start]
        if out[at:at + len(gap)] != gap:
            raise AssertionError(f"bytes {pos}..{edit.start} changed outside the edits")
        at += len(gap) + len(edit.text)
        pos = edit.end
    if out[at:] != data[pos:]:
        raise AssertionError("bytes after the last edit changed")


def one_input(raw: bytes) -> None:
    if not raw:
        return
    kind, name = KINDS[raw[0] % len(KINDS)]
    data = raw[1:]
    scan = scan_text(SourceFile.from_bytes(name, data), kind, CONVERT)
    edits = list(normalize(scan.edits))
    out = apply_edits(data, scan.edits)
    check_outside_edits(data, out, edits)
    again = scan_text(SourceFile.from_bytes(name, out), kind, CONVERT)
    if apply_edits(out, again.edits) != out:
        raise AssertionError(f"converting the {kind} file again changes it")
    for f in scan_text(SourceFile.from_bytes(name, data), kind, AUDIT).findings:
        if f.line < 1 or f.column < 1:
            raise AssertionError(f"finding outside the file: {f}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
