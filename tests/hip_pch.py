"""HIP's runtime header parsed once per test session: precompiled headers for each side (host, device).

A HIP syntax check spends nearly all its time in hip/hip_runtime.h, parsed twice (host and device):
1.16 s of CPU of 1.3 for a golden case against the ROCm 6.2 pack, the same header a hundred times a
run (issue 52). A unit that begins with system includes ending at `#include <hip/hip_runtime.h>`
(`<cstdio>` then the runtime, or the runtime alone) checks the same through a PCH of exactly those
lines, made with the same compiler and flags: the unit's own includes of them are then no-ops (their
include guards). clang refuses a PCH made with other options, so a mismatch fails the check loudly
instead of passing it. Any other unit (other lines first, a -D or -std of its own, one of those
headers in its own -I folder) is checked exactly as before, in one invocation.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

LINE = re.compile(rb"([^\n]*)\n")
SYSTEM_INCLUDE = re.compile(rb"[ \t]*#[ \t]*include[ \t]*<([\w./+-]+)>[ \t]*\r?")
BLANK_OR_COMMENT = re.compile(rb"[ \t]*(//.*)?\r?")
RUNTIME = "hip/hip_runtime.h"
SIDES = ("--cuda-device-only", "--cuda-host-only")


def leading_includes(unit: Path) -> tuple[str, ...] | None:
    """The system headers the unit includes before anything else, through hip/hip_runtime.h; None when
    another line (code, a macro, a quoted include) comes first or the runtime is not among them."""
    headers = []
    for line in LINE.finditer(unit.read_bytes()):
        text = line.group(1)
        if BLANK_OR_COMMENT.fullmatch(text):
            continue
        include = SYSTEM_INCLUDE.fullmatch(text)
        if include is None:
            return None
        headers.append(include.group(1).decode())
        if headers[-1] == RUNTIME:
            return tuple(headers)
    return None


def include_folders(extra: list[str]) -> list[Path] | None:
    """The -I folders of a unit's own flags; None when it has any other flag (a -D, a -std, -fgpu-rdc
    change how the headers compile)."""
    folders, rest = [], list(extra)
    while rest:
        flag = rest.pop(0)
        if flag == "-I" and rest:
            folders.append(Path(rest.pop(0)))
        elif flag.startswith("-I") and len(flag) > 2:
            folders.append(Path(flag[2:]))
        else:
            return None
    return folders


class Precompiled:
    """The PCHs of one compiler command (`base`: compiler and flags, as the checks run it; `action`:
    -fsyntax-only, or -c -o /dev/null), made in `folder` the first time a prefix of includes asks."""

    def __init__(self, base: list[str], action: list[str], folder: Path, env: dict | None = None):
        self.base, self.action, self.folder, self.env, self.made = list(base), list(action), folder, env, {}

    def pch(self, headers: tuple[str, ...]) -> dict[str, Path] | None:
        """The PCH of each side for these leading includes; None when they do not compile by
        themselves (a header not found): the plain check then reports it as it always did."""
        if headers not in self.made:
            name = f"prefix{len(self.made)}"
            header = self.folder / f"{name}.h"
            header.write_text("".join(f"#include <{h}>\n" for h in headers))
            sides = {side: self.folder / f"{name}{side.replace('--cuda', '').replace('-only', '')}.pch"
                     for side in SIDES}
            made = all(subprocess.run([*self.base, side, "-Xclang", "-emit-pch", "-S", str(header), "-o", str(out)],
                                      capture_output=True, env=self.env, timeout=300).returncode == 0
                       for side, out in sides.items())
            self.made[headers] = sides if made else None
        return self.made[headers]

    def check(self, extra: list[str], unit: Path) -> subprocess.CompletedProcess:
        """`base action extra unit`, both sides; through a PCH, side by side, when it checks the same.
        The return code is the first failing side's (device first, as clang's driver runs them), or 0."""
        headers, folders = leading_includes(unit), include_folders(extra)
        if headers is None or folders is None or any((d / h).exists() for d in folders for h in headers) \
                or self.pch(headers) is None:
            return self._run([*self.base, *self.action, *extra, str(unit)])
        runs = []
        for side, pch in self.pch(headers).items():
            runs.append(self._run([*self.base, side, "-Xclang", "-include-pch", "-Xclang", str(pch), *self.action,
                                   *extra, str(unit)]))
            if runs[-1].returncode:
                break
        return subprocess.CompletedProcess(runs[-1].args, runs[-1].returncode, "".join(r.stdout for r in runs),
                                           "".join(r.stderr for r in runs))

    def _run(self, command: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(command, capture_output=True, text=True, env=self.env, timeout=300)
