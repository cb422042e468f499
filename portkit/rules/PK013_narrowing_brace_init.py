"""A narrowing conversion in a brace initialiser, which hip-clang rejects and nvcc only warns about.

Reported by the converter (portkit/rewrite/strictness.py), which inserts a static_cast.

What it finds:
    An element of a brace initialiser whose type does not fit the declared type: a size_t
    (`v.size()`, `sizeof`, a size_t variable) into an int, an int into a dim3's unsigned
    components (`dim3 grid{blocks}`), a double into a float. Only where both types can be read
    from the source: the declared type is arithmetic or dim3, and the element is a `.size()` or
    `.length()` call, a sizeof, or a non-const variable declared in the function.

Why it matters on AMD GPUs:
    C++11 forbids narrowing a non-constant value in braces. nvcc downgrades the error to warning
    #2361-D; hip-clang keeps it an error ("non-constant-expression cannot be narrowed from type
    'int' to 'uint32_t' in initializer list"), so the port does not compile.

Example:
    int counts[] = {v.size()};
    dim3 grid{blocks};

Instead:
    Convert explicitly, as nvcc did implicitly: `int counts[] = {static_cast<int>(v.size())};`,
    `dim3 grid{static_cast<unsigned int>(blocks)}`, or declare the variable with the wider type.
    The converter writes the static_cast where both types are known.

Effort:
    None after conversion where the cast was written; minutes per initialiser otherwise.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK013", name="narrowing-brace-init", severity="high", category="language",
              breaks_build=True, gpu_only=True)
