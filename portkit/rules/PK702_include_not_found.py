"""A header from neither CUDA nor ROCm that the compiler cannot find.

Reported by `portkit verify` (portkit/commands/verify/), from the compiler's errors.

What it finds:
    A converted file includes a header that is not CUDA's, not ROCm's and not in the converted
    tree, and the compiler cannot find it: a dependency of the project (OpenMP's omp.h, MPI,
    OpenGL, a third-party library), or an include directory that verify was not given.

Why it matters on AMD GPUs:
    It is not a porting problem, and portkit does not count it as one: the build of the
    converted tree needs the same dependencies and flags as the CUDA build (`-fopenmp`,
    `-I/path/to/dependency`), and verify has to be told them.

Example:
    #include <omp.h>   ->   fatal error: 'omp.h' file not found

Instead:
    Give verify the project's flags: `-p build/` (a compile_commands.json), or `-I DIR` and
    `-D NAME`; install the dependency on the build machine.

Effort:
    Minutes: a flag or a package.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK702", name="include-not-found", severity="info", category="verify",
              breaks_build=True)
