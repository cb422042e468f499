"""A <<<...>>> launch that --launch-syntax hip could not rewrite.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    With --launch-syntax hip, a kernel launch kept as <<<...>>>: a launch used as an expression
    or as the argument of a macro that does not use it as a statement (hipLaunchKernelGGL is a
    statement, do { ... } while (0)); a launch through a pointer, member or kernel-pointer
    variable (hipify-clang leaves these too); a configuration that cannot be read (a macro giving
    grid and block, an unparsed region); a // comment between the launch's pieces.

Why it matters on AMD GPUs:
    None on correctness: HIP compiles <<<...>>> launches; only the requested style is not met.

Example:
    KERNEL_TABLE[i]<<<grid, block>>>(args);

Instead:
    Rewrite it as hipLaunchKernelGGL(kernel, grid, block, shmem, stream, args...) by hand if the
    style matters.

Effort:
    Minutes.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK006", name="launch-not-converted", severity="low", category="launch")
