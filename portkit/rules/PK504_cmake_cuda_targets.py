"""CMake targets, commands and properties that only exist for CUDA.

What it finds:
    `CUDA::` imported targets (`CUDA::cudart`, `CUDA::cublas` ...), `cuda_add_executable` /
    `cuda_add_library`, `CUDA_SEPARABLE_COMPILATION`, `CUDA_RESOLVE_DEVICE_SYMBOLS`,
    `$<COMPILE_LANGUAGE:CUDA>`, `CUDA_NVCC_FLAGS`, `CMAKE_CUDA_FLAGS`, `CMAKE_CUDA_STANDARD`,
    and CUDA in a generator expression's language list (`$<COMPILE_LANGUAGE:CXX,CUDA>`), which
    `convert --fix build` writes as HIP where the build migration leaves it.

Why it matters on AMD GPUs:
    None of these exist for HIP; each has a HIP-side spelling (`hip::device`, `roc::hipblas`,
    `-fgpu-rdc`, `$<COMPILE_LANGUAGE:HIP>`, `CMAKE_HIP_FLAGS`) that must be written in.

Example:
    target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas)

Instead:
    `target_link_libraries(app PRIVATE hip::device roc::hipblas)`; `-fgpu-rdc` for separable
    compilation; `CMAKE_HIP_FLAGS` / `CMAKE_HIP_STANDARD`.

Effort:
    Minutes per occurrence (counted with the build-system cost).
"""

import re

from ..core.edits import Edit, EditKind
from ..engine.context import ScanContext
from ..engine.fix import SAFE, Family, Fix
from ..engine.rule import define
from ..engine.textlines import Line
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK504", name="cmake-cuda-targets", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake",)
PATTERN = re.compile(r"\bCUDA::\w+|\bcuda_add_(?:executable|library)\b|\bCUDA_SEPARABLE_COMPILATION\b|"
                     r"\bCUDA_RESOLVE_DEVICE_SYMBOLS\b|\$<COMPILE_LANGUAGE:CUDA>|\bCUDA_NVCC_FLAGS\b|"
                     r"\bCMAKE_CUDA_(?:FLAGS|STANDARD|COMPILER|HOST_COMPILER)\w*|"
                     r"\$<(?:COMPILE|LINK)_LANGUAGE:(?:\w+,)+CUDA\b(?:,\w+)*>|\$<(?:COMPILE|LINK)_LANGUAGE:CUDA(?:,\w+)+>",
                     re.I)
# `convert` writes most of what this rule finds; `--fix build` also writes HIP in a generator
# expression's language list, which the migration leaves when CUDA is not first: the HIP build
# compiles the `.cu` files as HIP, so the list would never hold there. ("Instead" is every
# finding's fix text in every report: it is kept as it was.) CMake's language names are
# case-sensitive, and CUDA's counterpart is HIP, the language the migration gives the CUDA sources.
_LANGUAGE_LIST = re.compile(r"\$<(?:COMPILE|LINK)_LANGUAGE:((?:\w+,)+\w+)>")
FIX_FAMILY = Family("build", EditKind.BUILD)   # `convert --fix build`


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "{}: CUDA-only CMake; HIP has its own targets and flags", fixed_by=fix_line)


def fix_line(line: Line, found: list[re.Match[str]]) -> Fix | None:
    """CUDA in a generator expression's language list becomes HIP, where the build migration leaves
    it: the migration writes a list that starts with CUDA itself (and a fix is applied whole or not
    at all, never over its edits), and a list already naming HIP is left for a person. Safe: the
    expression selects, in the HIP build, what it selected in the CUDA one."""
    edits = []
    for match in found:
        languages = _LANGUAGE_LIST.fullmatch(match.group(0))
        names = languages.group(1).split(",") if languages else []
        if "CUDA" not in names[1:] or "HIP" in names:
            continue
        at = match.start() + languages.start(1) + sum(len(n) + 1 for n in names[:names.index("CUDA")])
        edits.append(Edit(line.offset(at), line.offset(at + len("CUDA")), b"HIP", "build"))
    if not edits:
        return None
    return Fix(RULE.code, line.offset(found[0].start()), tuple(edits), applicability=SAFE,
               title="write HIP for CUDA in the generator expression's language list")
