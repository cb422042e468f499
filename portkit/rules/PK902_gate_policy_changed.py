"""A change that alters the commit gate's own policy: its configuration or its baseline.

Reported by `portkit check` (portkit/commands/gate_policy.py), never by the audit.

What it finds:
    A change under review that edits `[tool.portkit]` / `portkit.toml` (select, ignore, exclude,
    fail-on, rocm, amd-macros, mappings, the baseline's path), a record of a project mapping file
    that `mappings` names, or accepts or drops findings in `.portkit-baseline.json`. The gate
    applies the policy of the version it compares with (the base revision in CI, the index for
    a commit), so the change cannot pass its own gate by switching it off; this finding tells
    the reviewer that it tried, or that it legitimately changes what the gate accepts from the
    next change on.

Why it matters on AMD GPUs:
    A gate that the reviewed change can turn off lets inline PTX, warp-size-32 code and other
    non-portable code land unseen: `ignore = ["PK"]`, an `exclude` of the changed file, a
    mapping record that gives the change's own CUDA name a HIP name, or a baseline entry for
    the change's own hazard.

Example:
    [tool.portkit]
    ignore = ["PK3"]        # added by the pull request that adds inline PTX

Instead:
    Change the policy in a change of its own, reviewed as such; accept one finding with a
    suppression comment that names its code and gives a reason on its line.

Effort:
    Minutes: a reviewer's decision.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK902", name="gate-policy-changed", severity="medium", category="meta")
