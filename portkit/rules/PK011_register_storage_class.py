"""The `register` storage class, which C++17 removed.

Reported by the converter (portkit/rewrite/strictness.py), which drops the keyword.

What it finds:
    A declaration with `register` (`register float acc = 0.0f;`) in C++ or CUDA code.

Why it matters on AMD GPUs:
    nvcc accepts `register` in every language mode. hip-clang follows ISO C++17, where the
    storage class is an error ("ISO C++17 does not allow 'register' storage class specifier");
    it compiles C++17 by default from ROCm 6 and whenever a project sets -std=c++17. The keyword
    never changed code generation: compilers ignore it.

Example:
    register int i = threadIdx.x;

Instead:
    Drop the keyword (`int i = threadIdx.x;`); the converter does so. A GNU explicit register
    variable (`register int x asm("r0")`) keeps it and is left as it is.

Effort:
    None after conversion: the edit is the whole fix.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK011", name="register-storage-class", severity="low", category="language",
              breaks_build=True, gpu_only=True)
