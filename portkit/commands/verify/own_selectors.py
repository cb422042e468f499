"""The project's own AMD selectors, read off the code the project wrote, not off convert's output.

The platform facts learn a selector from an `#ifdef X` whose branch uses HIP (ggml's
GGML_USE_HIP around `#include "vendors/hip.h"`), and verify defines it for every unit that reads
such a file, as the project's AMD build would. In a converted tree every branch uses HIP, since
convert wrote HIP into all of them: llm.c's `#if defined(ENABLE_BF16)` around
`typedef __nv_bfloat16 floatX` became one around `__hip_bfloat16`, and `#ifdef ENABLE_CUDNN`
around cuDNN's frontend holds hipMalloc. Read as selectors, its dev/cuda units were compiled with -DENABLE_BF16 (a
bf16 floatX the fp32 layernorm kernel never expected: `no viable overloaded '='`) and
-DENABLE_CUDNN (cudnn_frontend.h), and the audit of the converted tree took both branches for
the project's AMD code, so no finding explained either error.

With --source, a file's selectors are those its CUDA original reveals (the file at the same path
in the source tree; a `.hip` that --rename wrote is read as its `.cu`). A file convert wrote
from nothing, and a tree verified without --source, keep what the converted file reveals.
"""

from __future__ import annotations

from pathlib import Path

from ...core.files import read_regular
from ...engine.platform import facts as platform_facts

__all__ = ["OwnSelectors"]

_RENAMED = {".hip": (".cu", ".cuh"), ".hpp": (".cuh",)}   # convert --rename: the HIP name's CUDA names


class OwnSelectors:
    """The selectors each file of the converted tree `root` reveals, read from its original in
    `source` when there is one. Each file is read and walked once."""

    def __init__(self, root: Path, source: Path | None):
        self.root = root.absolute()
        self.source = source.absolute() if source is not None else None
        self._learned: dict[str, platform_facts.FileMacros] = {}
        self._converted: dict[Path, platform_facts.FileMacros] = {}

    def of(self, path: str) -> platform_facts.FileMacros:
        """What the file at `path` (in the converted tree or out of it) reveals: `learned` from
        the project's own code, `defined` from the file compiled."""
        if path not in self._learned:
            here = self._as_converted(Path(path))
            original = self._original(Path(path))
            if original is not None:
                here = platform_facts.FileMacros(_learn(original).learned, here.tested, here.defined)
            self._learned[path] = here
        return self._learned[path]

    def keep(self, selectors: tuple[str, ...], rels) -> tuple[str, ...]:
        """`selectors` less those that only convert's output reveals: a name some converted file
        teaches (`rels`, relative to the root) and no original does. A name no file teaches is
        configured (`amd-macros`) and stays."""
        if self.source is None:
            return selectors
        converted: set[str] = set()
        own: set[str] = set()
        for rel in rels:
            path = self.root / rel
            converted |= self._as_converted(path).learned
            own |= self.of(str(path)).learned
        return tuple(name for name in selectors if name in own or name not in converted)

    def _as_converted(self, path: Path) -> platform_facts.FileMacros:
        if path not in self._converted:
            self._converted[path] = _learn(path)
        return self._converted[path]

    def _original(self, path: Path) -> Path | None:
        if self.source is None:
            return None
        try:
            rel = path.absolute().relative_to(self.root)
        except ValueError:        # a header outside the tree (the ROCm pack, the system's)
            return None
        candidates = [self.source / rel] + [(self.source / rel).with_suffix(s) for s in _RENAMED.get(rel.suffix, ())]
        return next((c for c in candidates if c.is_file()), None)


def _learn(path: Path) -> platform_facts.FileMacros:
    try:
        return platform_facts.learn(read_regular(path, follow=True))
    except OSError:
        return platform_facts.FileMacros()
