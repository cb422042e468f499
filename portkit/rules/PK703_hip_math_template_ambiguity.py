"""A math function called with a half type, which clang's HIP <cmath> templates make a hard error.

Reported by `portkit verify` (portkit/commands/verify/toolchain.py), from the compiler's errors.

What it finds:
    A call of a <cmath> name that clang's HIP headers overload with templates for mixed
    arguments (`fma`, `pow`, `fmin`, `fmax`, `atan2`, `hypot`, `copysign`, `fmod`, `min`,
    `max` ...) with an argument of a type that converts to several arithmetic types (`__half`,
    `__hip_bfloat16`, a project's own half type), where hip-clang stops at `call to '__test' is
    ambiguous` in `__clang_hip_cmath.h`, "in instantiation of template class
    '__hip::__numeric_type<__half>'". The project's own overload for the type (tiny-cuda-nn's
    `__half fma(__half, __half, __half)`) is never chosen: the error comes first.

Why it matters on AMD GPUs:
    Argument-dependent lookup on `__half` (declared in the global namespace) brings clang's
    global templates into every unqualified call, also from inside the project's namespace.
    Deducing them instantiates `__numeric_type<__half>`, whose overloaded `__test` cannot pick
    one of the conversions, and that is an error, not a discarded template. nvcc's headers have no
    such templates. Fixed in clang's header by llvm/llvm-project#101341 (2024, LLVM 20: the
    trait fails quietly); a compiler from before it, such as ROCm 6.2's, stops at every such call.

Example:
    namespace proj {
    __device__ __half fma(__half a, __half b, __half c) { return __hfma(a, b, c); }
    template <typename T> __device__ T axpy(T a, T x, T y) { return fma(a, x, y); }   // T = __half
    }

Instead:
    Call the project's function by its qualified name (`proj::fma(a, x, y)`) or through
    parentheses (`(fma)(a, x, y)`, no argument-dependent lookup) where the arguments can be half
    types, or use the HIP half intrinsics (`__hfma`); or build with a compiler whose
    `__clang_hip_cmath.h` has the fix.

Effort:
    Minutes per call site; an hour where a macro writes the calls for many types.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK703", name="hip-math-template-ambiguity", severity="high", category="language",
              breaks_build=True)
