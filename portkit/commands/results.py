"""What the commands return: convert's, audit's and verify's options and results (check's: check_result.py).

The report formatters (portkit/report/) and the CLI read these types; the commands
(convert.py, audit.py, verify/) fill them. Keeping them in a module below the commands lets
the reports depend on the result model without importing the commands that produce it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..project.config import Config
from ..engine.context import FileScan, Options
from ..core.files import Entry, LeftOut, Skipped
from ..core.findings import SEVERITIES, Finding
from ..core.tables.mappings import Version
from ..engine.facts import ProjectFacts
from ..engine.rename_plan import RenamePlan

if TYPE_CHECKING:
    from ..estimate.effort import Estimate
    from .torch_split import TorchAccount, TorchSplit
    from ..estimate.scope import Scope
    from .deep.engine import DeepOptions, DeepResult
    from ..project.buildconfig import BuildConfig
    from .verify.compiler import Compiler
    from .verify.cmake_errors import Stop
    from .verify.cmake_tool import CMakeTool
    from .scan.suppress import Suppression

DEFAULT_VERIFY_TIMEOUT = 300.0   # seconds one unit's compile may take (verify --timeout)


# ---- convert

@dataclass(frozen=True)
class ConvertOptions:
    output: Path | None = None       # -o: mirror the tree there ("-" = stdout, one file only)
    in_place: bool = False
    backup: bool = False
    force: bool = False              # --in-place also rewrites read-only files
    diff: bool = False
    check: bool = False
    jobs: int = 1
    scan: Options = Options()
    rename: tuple[tuple[str, str], ...] | None = None   # --rename: suffix map (rename.DEFAULT_MAP ...)
    deep: "DeepOptions | None" = None   # --engine clang: findings refined by libclang (edits unchanged)
    config: Config = Config()        # the project's settings (amd-macros, exclude: left as they are)
    leave_amd_built: bool = True     # files the tree's own AMD build compiles stay as they are (--convert-amd-built)
    output_name: str | None = None   # -o naming a file for one input file: the name written in `output`
    needs_person: bool = True        # run the audit's scan for needs_person (off where nothing shows it: -q text)
    cache: bool = True               # keep and reuse each file's scan by its content (convert_cache.py; --no-cache)
    # a PyTorch extension's sources: "cuda" writes only what torch's build-time hipify cannot (torch_sources.py),
    # "hip" converts them as any other source (--extension-sources)
    extension_sources: str = "cuda"


@dataclass
class FileOutcome:
    entry: Entry
    scan: FileScan | None = None     # None for files that are only mirrored or were skipped
    output: bytes | None = None      # converted bytes, when they differ from the input
    skipped: Skipped | None = None
    plan: RenamePlan | None = None   # --rename: the run's plan (the file's new name comes from it)
    input_digest: bytes | None = None   # of the bytes converted: --in-place rewrites only those (inplace.py)
    torch: "TorchSplit | None" = None   # a source torch hipifies at build time: whose edits are whose (torch_sources.py)

    @property
    def changed(self) -> bool:
        return self.output is not None

    @property
    def target_rel(self) -> str:
        """The name the file is written under (--rename changes it)."""
        return self.plan.target(self.entry.rel) if self.plan is not None else self.entry.rel

    @property
    def renamed(self) -> bool:
        return self.target_rel != self.entry.rel


@dataclass
class PolyfillHeader:
    """The generated portkit_polyfills.h of a conversion (polyfills.py)."""

    rel: str                          # relative to the output root
    path: Path | None                 # where it is written; None when nowhere (-o -, --diff, --check)
    text: bytes
    old: bytes | None                 # the header there before this run
    users: dict[str, list[str]]       # polyfill name -> the files that use it, sorted
    rocm: str = ""

    @property
    def changed(self) -> bool:
        return self.old != self.text


@dataclass
class ConvertResult:
    root: Path
    outcomes: list[FileOutcome] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[Skipped] = field(default_factory=list)   # about files written (a hard link that keeps the old bytes)
    written: int = 0
    written_paths: dict[str, Path] = field(default_factory=dict)   # lower-cased name -> path written (-o)
    diff_text: list[bytes] = field(default_factory=list)
    deep: "DeepResult | None" = None
    polyfills: PolyfillHeader | None = None   # the header, when the converted files use a polyfill
    active_only: bool = False   # --active-only: branches not compiled under -D/-U were left as they are
    left_out: LeftOut = LeftOut()   # what the paths hold that was not read: git ignores it, `exclude`
    amd_built: dict[str, str] = field(default_factory=dict)   # files left as they are: the tree builds them for AMD
    carried: dict[str, str] = field(default_factory=dict)     # files left as they are: a carried library's copy
    needs_person: list[Finding] = field(default_factory=list)  # the audit's, high or worse (convert_audit.py)
    torch_sources: frozenset[str] = frozenset()   # a PyTorch extension's, left CUDA but for torch's gaps (torch_sources.py)
    torch: "TorchAccount | None" = None   # which mode ran on them, and whose edits are whose: what convert prints first

    @property
    def scans(self) -> list[FileScan]:
        return [o.scan for o in self.outcomes if o.scan is not None]

    @property
    def findings(self) -> list[Finding]:
        """The converter's findings; a PyTorch extension's lines left for a person are its account's
        (FileOutcome.torch.left: "Left for a person" and needs_person), not a caveat of an edit made."""
        return [f for o in self.outcomes if o.scan is not None for f in o.scan.findings
                if o.torch is None or f not in o.torch.left]

    @property
    def changed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.changed]

    @property
    def all_skipped(self) -> list[Skipped]:
        return self.skipped + [o.skipped for o in self.outcomes if o.skipped is not None]

    @property
    def errors(self) -> list[Skipped]:
        return [s for s in self.all_skipped if s.error]

    def total(self, metric: str) -> int:
        return sum(int(getattr(s.metrics, metric)) for s in self.scans)


# ---- audit

@dataclass(frozen=True)
class AuditOptions:
    scan: Options = Options(audit=True)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    team_size: int = 1
    focus_hours: float | None = None
    jobs: int = 1
    deep: "DeepOptions | None" = None  # --engine clang: libclang's facts refine the findings
    config: Config = Config()         # the project's settings (amd-macros, exclude: not audited)
    cache: bool = True                # keep and reuse results by file content (commands/scan/resultcache.py)
    # a PyTorch extension's sources as convert's --extension-sources ports them (commands/scan/torch_gaps.py)
    extension_sources: str = "cuda"


@dataclass
class FileAudit:
    entry: Entry
    scan: FileScan | None = None
    skipped: Skipped | None = None
    content: str = ""   # the result cache's key of the bytes scanned (resultcache.content_key)


@dataclass
class AuditResult:
    root: Path
    options: AuditOptions
    files: list[FileAudit] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    estimate: Estimate | None = None
    deep: "DeepResult | None" = None
    facts: ProjectFacts = ProjectFacts()   # what the project pipeline learned of the tree
    scope: "Scope | None" = None           # where each priced site belongs (estimate/scope.py)
    left_out: LeftOut = LeftOut()          # what the paths hold that was not read: git ignores it, `exclude`

    @property
    def scans(self) -> list[FileScan]:
        return [f.scan for f in self.files if f.scan is not None]

    @property
    def findings(self) -> list[Finding]:
        return [x for s in self.scans for x in s.findings]

    @property
    def all_skipped(self) -> list[Skipped]:
        return self.skipped + [f.skipped for f in self.files if f.skipped is not None]

    @property
    def errors(self) -> list[Skipped]:
        return [s for s in self.all_skipped if s.error]

    def failed(self) -> bool:
        """True when a finding is at or above --fail-on."""
        if self.options.fail_on is None:
            return False
        limit = SEVERITIES.index(self.options.fail_on)
        return any(SEVERITIES.index(f.severity) <= limit for f in self.findings)


# ---- check: check_result.py (the gate imports no other command's results)

from .check_result import CheckResult  # noqa: E402,F401  (re-exported)


# ---- verify

@dataclass(frozen=True)
class VerifyOptions:
    compiler: str = "hipcc"
    rocm_path: str | None = None
    offload_arch: tuple[str, ...] = ("gfx90a",)
    compile_commands: Path | None = None     # -p: a build directory or its compile_commands.json
    includes: tuple[str, ...] = ()           # -I for every unit
    defines: tuple[str, ...] = ()            # -D for every unit
    source: Path | None = None               # the CUDA tree the output was converted from
    rocm: Version | None = None              # the release to explain against (default: the compiler's)
    config: Config = field(default_factory=Config)   # the file set under OUT (--exclude, --no-respect-gitignore)
    jobs: int = 1
    timeout: float = DEFAULT_VERIFY_TIMEOUT
    only: frozenset[str] | None = None       # compile only these files (convert --verify: what it wrote)
    std: str | None = None                   # --std: the language standard of every unit (wins)
    build_config: bool = True                # read the build's standard, -I and -D (CMake, Makefile)
    rocm_headers: str | None = None          # --rocm-headers: a ROCm header pack (or a folder of packs)
    torch_headers: str | None = None         # --torch-headers: the torch header pack (torch_pack.py)
    download: bool = True                    # a pinned pack not found may be downloaded (not --offline)
    cache: bool = True                       # reuse a unit's result while nothing it reads changed (unitcache.py)
    # convert --verify: `rocm` is the conversion's target, compiled against where its headers are
    # (installed, a pack); where they are not, the installed release compiles and explains
    explain_as_compiled: bool = False


@dataclass
class ErrorReport:
    rel: str | None                          # where in the converted tree (None: outside it)
    line: int
    column: int
    severity: str
    message: str
    source_line: int | None = None           # the same place in the CUDA source, when known
    source_text: str | None = None
    findings: list[Finding] = field(default_factory=list)
    consequence_of: str | None = None        # "file:line" of the explained error this one follows from
    include_chain: list[str] = field(default_factory=list)   # "file:line" from the unit to a library header
    decision: str = ""                       # the decision one of its findings is a site of (estimate/decisions.py)

    @property
    def explained(self) -> bool:
        return bool(self.findings) or self.consequence_of is not None


@dataclass
class UnitReport:
    rel: str
    status: str                              # "compiled", "failed", "not_reached" or "timeout"
    seconds: float
    command: tuple[str, ...]
    flags_from: str
    errors: list[ErrorReport] = field(default_factory=list)
    output: str = ""                         # the compiler's own words, for a failure with no parsed error
    missing_headers: list[str] = field(default_factory=list)   # every header it cannot find (standins.py)

    @property
    def failed(self) -> bool:
        return self.status != "compiled"

    @property
    def explained(self) -> bool:
        return self.status == "failed" and bool(self.errors) and all(e.explained for e in self.errors)

    @property
    def not_reached(self) -> bool:
        """Stopped at a header of a library not installed here: its porting errors were not seen."""
        return self.status == "not_reached"

    @property
    def failed_on_decision(self) -> bool:
        """Failed only where the estimate prices a decision (issue 48's target): every error that is not
        a consequence of another is explained by a finding that is a site of one (ErrorReport.decision:
        a library or rewrite not drop-in on ROCm, a build decision, a blocker), none by a site to fix
        (PK001 of a plain name, PK002) and none by a header not installed here (PK701, PK702: apart)."""
        return self.status == "failed" and bool(self.errors) and \
            all(e.decision or e.consequence_of is not None for e in self.errors)


@dataclass
class VerifyResult:
    root: Path
    compiler: "Compiler"
    target: Version
    offload_arch: tuple[str, ...]
    units: list[UnitReport] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)    # compile_commands files not in the tree
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    configurations: list[tuple["BuildConfig", int]] = field(default_factory=list)   # and how many units each
    std: str | None = None                   # --std, when given
    amd_selectors: tuple[str, ...] = ()      # the project's own AMD selectors, defined for every unit
    default_std: str | None = None           # the compiler's own, when known
    missing_libraries: list[str] = field(default_factory=list)   # one line per ROCm library not found
    torch: str | None = None                 # the torch header pack's description, when a unit used it
    torch_units: int = 0                     # how many units include torch's headers and got it
    # the build line that translates the tree's sources as it builds (faiss's hipify.sh): every unit was
    # compiled after what stands in for that step (verify/build_hipify.py): portkit's conversion, or
    # for torch's CUDAExtension torch's own hipify map
    hipify_step: str = ""
    hipify_standin: str = ""
    # the units the step is for when the tree has another build that compiles without it (tiny-cuda-nn's
    # CMake beside its setup.py: verify/hipify_scope.py); None: every unit
    hipify_units: tuple[str, ...] | None = None

    def count(self, what: str) -> int:
        if what == "compiled":
            return sum(not u.failed for u in self.units)
        if what == "failed":
            return sum(u.failed for u in self.units)
        if what == "explained":
            return sum(u.explained for u in self.units)
        if what == "unexplained":
            return sum(u.failed and not u.explained and not u.not_reached for u in self.units)
        if what == "not_reached":
            return sum(u.not_reached for u in self.units)
        if what == "failed_on_decision":
            return sum(u.failed_on_decision for u in self.units)
        raise ValueError(what)

    @property
    def ok(self) -> bool:
        return not any(u.failed for u in self.units)


# ---- verify --configure

DEFAULT_CONFIGURE_TIMEOUT = 600.0   # seconds the whole configure may take (a big tree's compiler checks)


@dataclass(frozen=True)
class ConfigureOptions:
    cmake: str | None = None                 # --cmake: this CMake, not the newest found
    rocm_path: str | None = None             # --rocm-path: ROCm's root, for CMake's HIP language
    offload_arch: tuple[str, ...] = ("gfx90a",)
    source: Path | None = None               # the CUDA tree: its .gitmodules too
    defines: tuple[str, ...] = ()            # --cmake-define NAME=VALUE, as cmake -D
    download: bool = True                    # False (--offline): the configure may not download
    timeout: float = DEFAULT_CONFIGURE_TIMEOUT


@dataclass
class ConfigureResult:
    root: Path
    cmake: "CMakeTool"
    rocm: str                                # how CMake reached ROCm, one phrase
    command: tuple[str, ...]
    status: str                              # "configured", "timeout", or the Stop's kind
    stop: "Stop | None" = None               # why it stopped (None: configured, or timed out)
    seconds: float = 0.0
    offline: bool = False                    # downloads were blocked (--offline)
    hip: bool = False                        # the HIP language was enabled or the hip package found
    hip_options: tuple[str, ...] = ()        # configured without HIP: the tree's GPU options, off

    @property
    def ok(self) -> bool:
        return self.status == "configured"

