"""Coverage-guided fuzzing of the scan (convert and audit) with atheris (libFuzzer for Python).

    pip install '.[fuzz]'
    python fuzz/fuzz_scan.py -max_total_time=300 -seed=1 fuzz/corpus-work fixtures/convert fixtures/bad/input

Each input is scanned as a CUDA source in convert mode (edits applied, then converted again:
idempotence, for inputs that parse without errors) and in audit mode. Any exception is a crash: libFuzzer writes the input to
crash-<hash>; minimise it (-minimize_crash=1), add it to fixtures/bad/input/ with its expected
output, and fix the bug. portkit's Python code is instrumented; tree-sitter's C parser is not
(its coverage does not guide the search, but its crashes would still be caught).
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["portkit"]):
    from portkit.core.edits import apply_edits
    from portkit.commands.scan.walk import Options, scan_source
    from portkit.core.source import SourceFile

CONVERT = Options(launch_syntax="hip", builtins="hip")
AUDIT = Options(audit=True)


def one_input(data: bytes) -> None:
    source = SourceFile.from_bytes("fuzz.cu", data)
    scan = scan_source(source, CONVERT)
    out = apply_edits(data, scan.edits)
    again = scan_source(SourceFile.from_bytes("fuzz.cu", out), CONVERT)
    # idempotence is promised where the file parses: in a region tree-sitter could not parse
    # (PK005), error recovery can read the converted bytes differently from the original ones
    if not scan.metrics.partially_parsed and apply_edits(out, again.edits) != out:
        raise AssertionError("convert is not idempotent on this input")
    for f in scan_source(source, AUDIT).findings:
        if f.line < 1 or f.column < 1:
            raise AssertionError(f"finding outside the file: {f}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
