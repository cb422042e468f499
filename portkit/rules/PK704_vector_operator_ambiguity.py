"""An operator on a SIMD vector type that hip-clang finds ambiguous, where nvcc's host compiler does not.

Reported by `portkit verify` (portkit/commands/verify/toolchain.py), from the compiler's errors.

What it finds:
    `use of overloaded operator '<' is ambiguous (with operand types 'const FVec<SSE, float>' and
    '__m128' ...)` with a "built-in candidate" of a vector type among the notes: the project's own
    operator for its wrapper of an SSE/AVX vector, called with a raw `__m128` (bitsandbytes'
    include/Algo-Direct2.h: `IVec<SSE, float> vlem = vz < vxm;`).

Why it matters on AMD GPUs:
    hipcc compiles host code with clang, and clang offers its built-in vector operators
    (`__attribute__((vector_size))` types: `__m128`, `__m256d` ...) as overload candidates beside
    the project's operator. Where the wrapper converts to the raw vector and the raw vector to the
    wrapper, both are equally good and the call is an error. GCC, nvcc's host compiler, does not
    weigh the built-in vector operators this way, so the CUDA build compiles.

Example:
    struct FVec { __m128 vec; FVec(__m128 v); operator __m128() const; };
    IVec operator<(const FVec& a, const FVec& b);
    IVec lt = vz < vxm;   // vxm is a __m128

Instead:
    Call the project's operator by name, `operator<(vz, vxm)`, or convert the raw vector first,
    `vz < FVec(vxm)` (bitsandbytes' AMD port writes the former).

Effort:
    Minutes per expression; an hour where a header writes many.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK704", name="vector-operator-ambiguity", severity="high", category="language",
              breaks_build=True)
