"""A PyTorch extension's edits by who makes them (commands/torch_sources.py decides): one source's
account, and the run's, which convert's summary and its JSON report (report/terminal.py, convert_json.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.findings import Finding


@dataclass(frozen=True)
class TorchSplit:
    """One file's edits by who makes them: written here, torch's at build time, a person's."""

    written: int   # changes convert wrote (the edits on one line for one name or construct are one change)
    torch: int     # CUDA references torch's hipify renames at build time
    person: int    # CUDA references on the lines left for a person
    left: tuple[Finding, ...]   # one per line whose edits neither convert nor torch makes: what to write there


@dataclass(frozen=True)
class TorchAccount:
    """The run's: which mode ran on the extension's sources, and the three counts its summary gives."""

    mode: str       # "cuda" (only torch's gaps written) or "hip" (--extension-sources hip: converted as any source)
    files: int      # the sources and headers torch hipifies at build time
    torch: str      # the torch release whose hipify map decides (mappings/torch_hipify.toml)
    # None with "hip": the references line and the changed files count what was converted
    written: int | None    # changes convert wrote in them
    renamed: int | None    # CUDA references torch's hipify renames at build time
    person: int | None     # CUDA references on the lines left for a person
    left: tuple[Finding, ...]   # those lines, as findings saying what to write

    def line(self) -> str:
        """What convert prints first: most of the tree's CUDA is left to torch on purpose."""
        head = f"a PyTorch extension ({self.files:,} files torch hipifies at build time, torch {self.torch}'s map): "
        if self.mode == "hip":
            return head + ("converted to HIP as any other source (--extension-sources hip); the default keeps them "
                           "CUDA and writes only what torch's hipify cannot")
        sites = f"{len(self.left):,} site{'' if len(self.left) == 1 else 's'}"
        return head + (f"their sources stay CUDA; convert wrote {self.written:,} change"
                       f"{'' if self.written == 1 else 's'} there that torch's hipify cannot make and nvcc compiles "
                       f"too, left {self.renamed:,} CUDA reference{'' if self.renamed == 1 else 's'} to torch's hipify at build time and {sites} to a "
                       f"person (\"Left for a person\" below; --extension-sources hip converts them all)")

    def converted(self, total: int) -> int:
        """The references convert wrote, of the run's `total` converted: not those left to torch or a person."""
        return total - self.renamed - self.person if self.mode == "cuda" else total
