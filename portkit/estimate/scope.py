"""What the headline prices: the product as its default build makes it, for AMD.

Every site the estimate prices (a finding's line, a file's units, a library's include line)
belongs to the headline ("") or to one named part that is priced apart, as a "Not included:
... adds N weeks" line, or not at all:

- code the default build leaves out (project/optional.py): its optional feature;
- a second distribution installed apart (project/product.py): "<dir>/ (installed apart)";
- benchmarks, tests, examples and dev code (project/product.py), when the tree has product code
  beside them (a tree of samples is priced whole), except the tests the project's test command
  builds (product.OwnBuild.tests): done means they pass on AMD, so they are the headline's, even
  behind a build switch such as BUILD_TESTS (issue 50); in a project with CUDA C/C++ sources, also
  the Python scripts outside its own packages (llm.c's train_gpt2.py reference, ggml's
  conversion scripts) and, when it has no Python package, its requirements files;
- NVIDIA-only code: what the project's own `#if` keeps out of its AMD build (the platform
  model's "nvidia" regions, Metrics.nvidia_lines). The port builds without it; bringing that
  feature to AMD is a decision of its own (ggml's WMMA indexer under `!defined(GGML_USE_HIP)`);
- Python imports the code runs without: those in a `try:` that catches ImportError
  (engine/optional_imports.py, Metrics.optional_imports: mamba's flash_attn);
- not priced at all: AMD code (a parallel AMD implementation's own directory or file) and the
  CUDA directory or file such an implementation replaces (flash-attention's csrc/flash_attn
  beside csrc/flash_attn_ck, bitsandbytes' ops.cu beside ops.hip): project/amd_paths.py; and
  the copy of a vendor-neutral library the tree carries (nccl's src/include/nvtx3):
  project/carried.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .. import rules
from ..engine.context import Metrics
from ..project import carried as carried_copies, product
from ..project.amd_paths import AmdPaths
from ..project.product import OwnBuild
from ..project.packages import package_dir
from ..core.tables.ecosystem import normalize

NVIDIA_ONLY = "NVIDIA-only code paths (the project's AMD build leaves them out)"
OPTIONAL_IMPORTS = "Python imports the code runs without (try/except ImportError)"
NOT_PRODUCT = product.NOT_PRODUCT
_COMPONENT = " (a distribution installed apart)"


def component_label(directory: str) -> str:
    return f"{directory}/{_COMPONENT}"


def is_part(feature: str) -> bool:
    """A part of the tree (not product, NVIDIA-only, another distribution), not a build option."""
    return feature in (NVIDIA_ONLY, NOT_PRODUCT, OPTIONAL_IMPORTS) or feature.endswith(_COMPONENT)


@dataclass
class Scope:
    """Where each priced site belongs (see the module docstring)."""

    optional: object = None                  # project/optional.OptionalCode, or None when not known
    amd: AmdPaths = field(default_factory=AmdPaths)
    components: tuple[str, ...] = ()
    nvidia: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    guarded: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)   # optional Python imports
    split_product: bool = False              # product code beside benchmarks/tests/examples
    own_packages: frozenset[str] | None = None   # project/packages.py; None: not known
    cuda_sources: bool = False               # the project has CUDA C/C++ sources
    carried: tuple[tuple[str, str], ...] = ()   # (library, directory): copies of vendor-neutral libraries
    build: OwnBuild = field(default_factory=OwnBuild)   # the root's build file, the tests done runs
    branch_only: bool = False                # the AMD evidence is a build branch the code does not back
    unbuilt: int = 0                         # then: the constructs of its sources that do not compile for AMD

    @classmethod
    def of(cls, files: Iterable[tuple[str, Metrics]], optional=None, amd: AmdPaths | None = None,
           components: tuple[str, ...] = (), own_packages: frozenset[str] | None = None,
           carried: tuple[tuple[str, str], ...] = (), build: OwnBuild | None = None,
           findings: Iterable | None = None) -> "Scope":
        files = list(files)
        amd = amd or AmdPaths()
        scope = cls(optional, amd, components,
                    {path: m.nvidia_lines for path, m in files if m.nvidia_lines}, own_packages=own_packages,
                    cuda_sources=any(has_cuda(m) for _, m in files), carried=carried,
                    guarded={path: m.optional_imports for path, m in files if m.optional_imports},
                    build=build or OwnBuild())
        scope.split_product = any((has_cuda(m) or m.kind == "python") and not product.non_product(path)
                                  and scope.priced(path) for path, m in files)
        if findings is not None and amd.builds and not amd.sources_differ:
            scope.unbuilt, scope.branch_only = _branch_only(scope, files, list(findings))
        return scope

    @property
    def includes(self) -> dict:
        return self.optional.includes if self.optional is not None else {}

    @property
    def links(self) -> dict:
        """A Makefile's `-l` lines per path (project/optional.py), for the features of library links."""
        return self.optional.links if self.optional is not None else {}

    @property
    def builds_for_amd(self) -> bool:
        return self.amd.builds and not self.branch_only

    def priced(self, path: str) -> bool:
        """False for AMD code, for CUDA code a parallel AMD implementation replaces, and for a
        carried library's copy."""
        return not self.amd.is_amd(path) and not self.amd.replaced_by(path) \
            and not (self.carried and carried_copies.library_of(path, self.carried))

    def whole(self, path: str) -> str:
        """The part a whole file belongs to ("" = the headline), before any line of it is asked."""
        if self.optional is not None and path in self.optional.files:
            return self.optional.files[path]   # only a feature's build compiles it, a test too
        if self.build.runs(path) and not product.component(path, self.components):
            return ""   # a test the definition of done runs, whatever test switch builds it
        where = product.component(path, self.components)
        if where:
            return component_label(where)
        if self.split_product and (product.non_product(path) or self._script(path)):
            return NOT_PRODUCT
        return ""

    def done(self) -> str:
        """The definition of done in one line: what it compiles and runs, what is priced apart."""
        tests = self.build.tests
        named = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        built = (f"the tests its test command builds are included: {named}" if tests
                 else "its test command builds no GPU tests portkit found")
        return (f"Done means the converted code compiles for AMD GPUs and passes the project's own tests there "
                f"({built}); examples, benchmarks and docs are priced apart; performance tuning is not included.")

    def _script(self, path: str) -> bool:
        """A Python script or requirements list beside a CUDA C/C++ project, outside its packages."""
        if not self.cuda_sources or self.own_packages is None:
            return False
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".py") and name != "setup.py":
            top = package_dir(path)
            return top is None or normalize(top) not in self.own_packages
        return name.startswith("requirements") and name.endswith(".txt") and not self.own_packages

    def feature(self, path: str, line: int) -> str:
        """The part a line belongs to ("" = the headline)."""
        whole = self.whole(path)
        if whole:
            return whole
        if self.optional is not None:
            feature = self.optional.feature(path, line)
            if feature:
                return feature
        if any(first <= line <= last for first, last in self.nvidia.get(path, ())):
            return NVIDIA_ONLY
        if any(first <= line <= last for first, last in self.guarded.get(path, ())):
            return OPTIONAL_IMPORTS
        return ""


def has_cuda(m: Metrics) -> bool:
    """A source file with CUDA in it (device code, CUDA names to convert, launches): what the
    estimate's project facts and the AMD-build share count."""
    return m.kind == "source" and bool(m.has_device_code or m.refs_found or m.launches)


def _branch_only(scope: Scope, files: list[tuple[str, Metrics]], findings: list) -> tuple[int, bool]:
    """(N, True) when the tree's only AMD evidence is a build branch (setup.py's `if
    torch.version.hip:`, CMake's HIP language, a Makefile's hipcc) that its code does not back
    (issue 53): the headline's sources use no HIP API (no AMD or already-ported branch, no shim
    header) and N > 0 of their findings above low are left for a person, or, for a CMake or
    Makefile build (no hipify at build time), they still name CUDA APIs. N: those findings."""
    headline = [(path, m) for path, m in files if has_cuda(m) and scope.priced(path) and not scope.whole(path)]
    if any(m.shim or m.region_bytes.get("amd") or m.region_bytes.get("ported") for _, m in files):
        return 0, False
    left = sum(1 for f in findings if f.severity in ("medium", "high", "blocker") and f.platform not in
               ("ported", "fallback") and not rules.of(f.code).build_file and not rules.of(f.code).package
               and scope.priced(f.path) and not scope.feature(f.path, f.line))
    hipified = any(i.path.rsplit("/", 1)[-1] == "setup.py" for i in scope.amd.implementations if i.kind == "build")
    return left, bool(left) or (not hipified and any(m.refs_found for _, m in headline))
