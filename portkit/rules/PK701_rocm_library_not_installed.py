"""A ROCm library header the compiler cannot find.

Reported by `portkit verify` (portkit/commands/verify/), from the header tables and the compiler's errors.

What it finds:
    A converted file includes the header of a ROCm library (hipBLAS, hipFFT, hipSOLVER, RCCL,
    hipCUB, rocThrust ...) and the ROCm compiler verify ran cannot find it: the library is not
    installed there, or its include directory is not on the command line.

Why it matters on AMD GPUs:
    The conversion is right, the build machine is not ready: every file that includes the
    header fails to compile until the library is installed. ROCm installs each library as its
    own package, and a minimal ROCm (or Debian's hipcc) comes without most of them.

Example:
    #include <hipblas/hipblas.h>   ->   fatal error: 'hipblas/hipblas.h' file not found

Instead:
    Install the ROCm library's development package (with AMD's repositories: apt-get install
    hipblas-dev, hipfft-dev, hipsolver-dev, rccl-dev, hipcub-dev, rocthrust-dev ...), or pass
    its include directory to verify with -I or a compile_commands.json.

Effort:
    An hour or less per library, on each build machine.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK701", name="rocm-library-not-installed", severity="low", category="verify",
              breaks_build=True)
