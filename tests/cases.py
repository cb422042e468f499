"""The golden conversion corpus (fixtures/convert/<case>/): discovery and how each case is run.

A case folder holds `input.<ext>` and `expected.hip` (one file), or `input/` and `expected/`
(a small project), plus `case.toml`:

    description = "what the case covers"
    args = ["--launch-syntax", "hip"]     # extra convert flags; --rocm 5.2 is added unless given
    nvcc_flags = [...]                     # extra flags for the nvcc check of the input
    hipcc_flags = [...]                    # extra flags for the hipcc check of the output
    hipcc_skip = "reason"                  # the expected output is not compiled (reason required)
    nvcc_skip = "reason"                   # the input is not compiled (a CUDA library not installed here)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
CASES_DIR = REPO / "fixtures" / "convert"
DEFAULT_ROCM = "5.2"   # the toolchain the golden outputs are compiled with (Debian's hipcc)
CASE_KEYS = {"description", "args", "nvcc_flags", "hipcc_flags", "hipcc_skip", "nvcc_skip"}


@dataclass
class Case:
    name: str
    folder: Path
    description: str
    args: list[str]
    nvcc_flags: list[str] = field(default_factory=list)
    hipcc_flags: list[str] = field(default_factory=list)
    hipcc_skip: str = ""
    nvcc_skip: str = ""

    @property
    def multi(self) -> bool:
        return (self.folder / "input").is_dir()

    @property
    def input(self) -> Path:
        if self.multi:
            return self.folder / "input"
        found = sorted(p for p in self.folder.glob("input.*"))
        assert len(found) == 1, f"{self.folder}: expected exactly one input.* file, found {found}"
        return found[0]

    @property
    def expected(self) -> Path:
        return self.folder / ("expected" if self.multi else "expected.hip")

    def convert_args(self) -> list[str]:
        args = list(self.args)
        if "--rocm" not in args:
            args += ["--rocm", DEFAULT_ROCM]
        return args

    def input_files(self) -> list[Path]:
        return sorted(p for p in self.input.rglob("*") if p.is_file()) if self.multi else [self.input]

    def expected_files(self) -> list[Path]:
        return sorted(p for p in self.expected.rglob("*") if p.is_file()) if self.multi else [self.expected]


def load_case(folder: Path) -> Case:
    meta = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    unknown = set(meta) - CASE_KEYS
    assert not unknown, f"{folder}/case.toml: unknown keys {unknown}"
    return Case(folder.name, folder, meta["description"], list(meta.get("args", [])),
                list(meta.get("nvcc_flags", [])), list(meta.get("hipcc_flags", [])),
                meta.get("hipcc_skip", ""), meta.get("nvcc_skip", ""))


def all_cases() -> list[Case]:
    return [load_case(f) for f in sorted(CASES_DIR.iterdir()) if (f / "case.toml").is_file()]
