"""A suppression comment that suppresses nothing.

Reported by the suppression filter (portkit/commands/scan/suppress.py) after the other rules ran.

What it finds:
    `portkit: ignore[...]` and `portkit: file-ignore[...]` comments that matched no finding of
    the codes they name (only codes that were enabled in the run count).

Why it matters on AMD GPUs:
    It does not, directly: a stale suppression hides the next real finding on that line and
    tells readers a hazard exists where none is left.

Example:
    int lane = threadIdx.x % warpSize;  // portkit: ignore[PK201] fixed already

Instead:
    Delete the comment.

Effort:
    Minutes.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK901", name="unused-suppression", severity="low", category="meta")
