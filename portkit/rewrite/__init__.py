"""Mapping-driven rewriters: each turns captured nodes into byte-range edits (and notes).

The registry of the scan's passes: each module in MODULES declares its passes in `PASSES`
(engine/passes.py's `Pass`: its phase, the node kinds or names it handles, what runs before it),
and `registry()` builds them once into the order the walk runs, as rules/__init__.py builds the
rules. commands/scan/walk.py reads only the registry and names no rewriter.

include_directives, includes, polyfills (includes.py)   #include lines, duplicate removal, the
                inserted hip/hip_runtime.h and the polyfill header's #include
launches.py     <<<...>>> -> hipLaunchKernelGGL(...) on request
macros.py       macro bodies: re-parsed on their own so the same rewriters apply inside them
strings.py      CUDA names in string literals that name an API (hipify's strings)
identifiers.py  CUDA names in code (functions, types, enums, macros, namespaces), symbol and
                dropped-argument call fixes
builtins.py     --builtins hip: the legacy hipThreadIdx_x spellings
minmax.py       mixed-type min/max in device code
device_printf.py  std::printf in device code (HIP's device printf is ::printf only)
inline_ptx.py   an inline PTX block HIP has exactly (lane id, clocks, fences, red.add): its HIP form
strictness.py   C++ hip-clang rejects (register, narrowing brace initialisers, device functions
                HIP's headers define)
preproc_names.py  names the preprocessor builds (line splices, ## pastes): reported
lossy.py        two CUDA names written as one HIP name on a line: reported
guards.py       CUDA version and __CUDA_ARCH__ guards an AMD build reads differently
guard_fallbacks.py  a guard whose AMD branch leaves a name unconverted and whose other branch is
                the file's own fallback: PK103 at that branch
toolkit_asserts.py  static_asserts on the CUDA toolkit's release, kept for nvcc builds
transitive.py   headers CUDA's headers included and HIP's do not
deviceptr.py    CUdeviceptr integer arithmetic, kept as CUDA's integer (engine/deviceptr_plan.py)
nvidia_votes.py, nvidia_thrust.py   what keeps the converted file building through HIP's NVIDIA backend
codes.py        the codes of the notes the converter raises (PK0xx)
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType

from ..engine import passes

# the modules that declare passes; the order is only the tie-break among passes that declare no
# dependency between them (engine/passes.order): the run order is the declared dependencies'
MODULES = (
    "includes", "launches", "macros", "strings", "identifiers", "builtins", "minmax", "device_printf", "inline_ptx", "strictness",
    "preproc_names", "lossy", "guard_fallbacks", "guards", "toolkit_asserts", "transitive", "nvidia_votes", "nvidia_thrust", "deviceptr",
)


@lru_cache(maxsize=1)
def modules() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in MODULES)


def declared() -> tuple[passes.Pass, ...]:
    """Every pass the modules declare, in MODULES' order."""
    return tuple(p for module in modules() for p in module.PASSES)


@lru_cache(maxsize=1)
def registry() -> passes.Registry:
    """The passes in the order the walk runs them (a PassError on a cycle or an unknown name)."""
    return passes.build(declared())
