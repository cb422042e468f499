"""CMake builds CUDA as a language.

What it finds:
    `project(... LANGUAGES CUDA)`, `enable_language(CUDA)`, `LANGUAGE CUDA` source properties
    in CMakeLists.txt and *.cmake files.

Why it matters on AMD GPUs:
    CMake compiles HIP as its own language (`enable_language(HIP)`, CMake 3.21+), with hipcc's
    clang and `CMAKE_HIP_ARCHITECTURES`; the CUDA language needs nvcc, which a ROCm machine
    does not have.

Example:
    project(solver LANGUAGES CXX CUDA)

Instead:
    `project(solver LANGUAGES CXX HIP)` and mark the .cu sources `LANGUAGE HIP`
    (`set_source_files_properties(... PROPERTIES LANGUAGE HIP)`), or build them as C++ with
    `hip::device` linked.

Effort:
    An hour or two per CMake project (counted once with the build-system cost).
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK501", name="cmake-cuda-language", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake",)
PATTERN = re.compile(r"\benable_language\s*\(\s*CUDA\b|\bLANGUAGES?\b[^)]*?\bCUDA\b|"
                     r"\bproject\s*\([^)]*\bCUDA\b", re.I)


_CUDA = re.compile(r"\bCUDA\b")   # language names are case-sensitive: a project named `cuda` keeps its name
_LANGUAGE_OF_SOURCES = re.compile(r"\bLANGUAGE\s+CUDA\b", re.I)   # a source property, not a project's
QUOTED_MAX = 120   # a longer line is not quoted back in the fix


def fix_for(code: str) -> str | None:
    """The fix in the user's own words: their line with HIP for CUDA, never the example's project
    name (the rule's "Instead" keeps that, as help)."""
    line = " ".join(code.split())
    if not line or len(line) > QUOTED_MAX or "`" in line:
        return None
    written = f"write `{_CUDA.sub('HIP', line)}`"
    if _LANGUAGE_OF_SOURCES.search(line):
        return (f"{written} (CMake 3.21+, with `enable_language(HIP)`), or build the sources as C++ with "
                f"`hip::device` linked")
    return (f"{written} (CMake 3.21+) and mark the .cu sources `LANGUAGE HIP` (`set_source_files_properties(... "
            f"PROPERTIES LANGUAGE HIP)`), or build them as C++ with `hip::device` linked")


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "CUDA is a CMake language here ({}); HIP is its own language", fix=fix_for)
