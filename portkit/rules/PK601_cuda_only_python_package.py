"""A Python package with no or partial ROCm support.

What it finds:
    Dependencies declared in requirements*.txt, pyproject.toml, setup.py and environment.yml,
    and imports in Python sources, of packages that mappings/ecosystem.toml marks as CUDA-only
    or partially supported on ROCm (tensorrt, pycuda, cupy-cudaXX, nvidia-* wheels, pynvml,
    flash-attn, bitsandbytes, apex, xformers ...), plus requirements that select a CUDA build
    (`jax[cuda12]`, `torch==2.3.1+cu121`, `--extra-index-url .../whl/cu121`).

Why it matters on AMD GPUs:
    The environment does not install or does not run: a package without ROCm wheels fails at
    `pip install` or at import, a partially supported one lacks the kernels the code calls.

Example:
    tensorrt==10.0.1
    import pycuda.driver as cuda

Instead:
    The ROCm alternative named in the finding (ROCm wheels from the vendor's index, AMD's forks,
    MIGraphX for TensorRT, hip-python for pycuda, amdsmi for pynvml).

Effort:
    From minutes (a ROCm wheel) to weeks (replacing TensorRT); see mappings/effort.toml.
"""

import re

from ..core.tables import ecosystem, blockers as rewrites
from ..engine import optional_imports
from ..engine.context import ScanContext
from ..engine.textlines import Line, lines
from ..engine.rule import define

RULE = define(__doc__, code="PK601", name="cuda-only-python-package", severity="high", category="python",
              package=True)
FILE_KINDS = ("requirements", "pyproject", "conda", "python")
_REQUIREMENT = re.compile(r"^\s*(?:-\s*)?(?:pip\s*:\s*)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?:[=<>!~;@ ]|$)")
_QUOTED = re.compile(r"""["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?:[=<>!~;][^"']*)?["']""")
_IMPORT = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\b)")
_CUDA_BUILD = re.compile(r"\+cu\d+\b|/whl/cu\d+|\[[^\]]*\bcuda\d*\w*[^\]]*\]")
_TRITON_JIT = re.compile(r"^\s*@\s*triton\.jit\b")


def check_text(ctx: ScanContext) -> None:
    eco = ecosystem.default()
    kind = ctx.metrics.kind
    setup = ctx.source.rel.rsplit("/", 1)[-1] == "setup.py"
    if kind == "python":   # imports the code runs without: priced apart (estimate/scope.py)
        ctx.metrics.optional_imports = optional_imports.guarded_lines(ctx.source.data)
    declared = _declared(ctx) if setup else None
    for line in lines(ctx):
        if kind == "python":
            _imports(ctx, eco, line)
            if not setup:
                continue
        found = _QUOTED.finditer(line.code) if kind in ("pyproject", "python") else \
            [m for m in [_REQUIREMENT.match(line.code)] if m]
        for match in found:
            if declared is None or ecosystem.normalize(match.group(1)) in declared:
                _requirement(ctx, eco, line, match)
        if kind == "requirements" and "--" in line.code and _CUDA_BUILD.search(line.code):
            m = _CUDA_BUILD.search(line.code)
            ctx.flag(RULE, line.offset(m.start()), line.offset(m.end()),
                     f"`{m.group(0)}` selects CUDA wheels; use the ROCm index (…/whl/rocmX.Y)",
                     subject="cuda-index", severity="medium")


def _declared(ctx: ScanContext) -> frozenset[str] | None:
    """What the project's setup() declares (install_requires and every extra, read with `ast`:
    project/packages.py), or None when that is not known. A string of setup.py outside them is
    not a requirement: mamba's `os.environ.get("NVIDIA_PRODUCT_NAME")` was "a package with no
    ROCm counterpart" (the nvidia- wheels' prefix), a high finding and 1.4 h."""
    facts = ctx.facts
    if facts.requirements is None:
        return None
    return facts.requirements.union(*(names for _, names in facts.extras))


def _requirement(ctx: ScanContext, eco: ecosystem.Ecosystem, line: Line, match: re.Match) -> None:
    name = match.group(1)
    if ecosystem.normalize(name) in ctx.facts.own_packages:
        return   # the project's own name (setup.py's name="apex" in apex): not a dependency
    package = eco.package(name)
    if package is not None and ecosystem.normalize(package.name) in ctx.facts.own_packages:
        return   # a distribution of the project's own family (Transformer Engine's transformer_engine_torch)
    rest = line.code[match.start():]
    build = _CUDA_BUILD.search(match.group(0)) or (_CUDA_BUILD.search(rest) if "+cu" in rest else None)
    if package is not None and package.status != "drop-in":
        if ctx.first(("PK601", package.name, "declared")):
            instead = f"; ROCm: {package.rocm}" if package.rocm else ""
            ctx.flag(RULE, line.offset(match.start(1)), line.offset(match.end(1)),
                     f"{name} {package.phrase}{instead}",
                     subject=package.name, severity=package.severity)
    elif build is not None:
        spec = match.group(1) + (match.group(2) or "")
        ctx.flag(RULE, line.offset(match.start(1)), line.offset(match.start(1) + len(spec)),
                 f"{spec}: selects the CUDA build; install the ROCm build",
                 subject=f"{ecosystem.normalize(name)}:cuda-build", severity="medium")


def _imports(ctx: ScanContext, eco: ecosystem.Ecosystem, line: Line) -> None:
    if _TRITON_JIT.match(line.code):
        ctx.metrics.triton_kernels += 1
    match = _IMPORT.match(line.code)
    if match is None:
        return
    modules = match.group(1).split(",") if match.group(1) else [match.group(2)]
    for module in modules:
        top = module.strip().split(".")[0]
        if not top:
            continue  # a relative import: the project's own code
        if ecosystem.normalize(top) in ctx.facts.own_packages:
            continue   # the project importing itself (apex's tests: `import apex`)
        ctx.metrics.imports.add(top)
        package = eco.module(top)
        if package is None or package.status == "drop-in" or rewrites.default().by_package(package.name) \
                or not ctx.first(("PK601", package.name, "import")):
            continue   # an import of a rewrite blocker (tensorrt ...) is PK402's
        col = line.code.find(top)
        instead = f"; ROCm: {package.rocm}" if package.rocm else ""
        ctx.flag(RULE, line.offset(col), line.offset(col + len(top)),
                 f"import {top}: {package.name} {package.phrase}{instead}",
                 subject=package.name, severity=package.severity)
