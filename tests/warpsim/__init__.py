"""A lane-level wavefront simulator: the test oracle proving `convert --fix warp` right at 32 and 64 lanes.

Not a GPU emulator: it runs the restricted subset that warp idioms are written in (scalar C
arithmetic, structured control flow under an active mask, shuffles, votes, shared arrays,
barriers) for a block cut into wavefronts of 32 or 64 lanes, and refuses (SimError) whatever it
would otherwise have to guess: undefined shifts, out-of-bounds accesses, masks that do not match
the executing lanes, 32-bit masks handed to HIP's `_sync` intrinsics.
"""

from .cvalues import OutOfBounds, SimError, UnwrittenRead
from .host import run_host
from .launch import AMD32, AMD64, CUDA32, CUDA64, HIP_NVIDIA, Device, Target, load, run

__all__ = ["AMD32", "AMD64", "CUDA32", "CUDA64", "HIP_NVIDIA", "Device", "OutOfBounds", "SimError", "Target", "UnwrittenRead", "load", "run", "run_host"]
