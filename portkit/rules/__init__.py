"""The audit rules: an explicit registry, one module per rule, named by its code.

A rule module defines RULE (its metadata and documentation) and any of four hooks:

- NODES + check(ctx, view, node): tree-sitter node types the rule inspects in C/C++/CUDA files;
  a rule that inspects `number_literal` nodes lists the values it looks at in LITERALS (the scan
  never calls it on the others: most of a tree's literals are 0, 1, 2 ..., and every rule ran on
  each of them);
- NAMES + check_name(ctx, view, node): identifiers (bytes, member names included) it inspects;
- MASKED + check_masked(ctx, start, end, name): attributes hidden from the parser (source.py);
- FILE_KINDS + check_text(ctx): build, dependency and Python files, read line by line.

A rule that can fix what it finds declares its family, FIX_FAMILY (engine/fix.py's Family: what
`convert --fix NAME` selects), and, for a tree rule, FIX_NODES / FIX_LITERALS: the functions that
find a node's fix (a text rule attaches its fix where it reports). `fix_families()` is the one
table of which rules fix which family, read by the scan and the command line.

The PK0xx rules have no hook: the converter reports them while it rewrites; PK508/PK509
likewise come from the build-file migration (portkit/buildfiles/), and PK701-PK704 from `portkit verify`
(portkit/commands/verify/), which explains compile errors by the findings of every rule that declares
`breaks_build`.
To add a rule: write rules/PKnnn_name.py, add it to MODULES, add its cases under
fixtures/rules/PKnnn/ and its cost to mappings/effort.toml (CONTRIBUTING.md has the recipe).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Callable

from ..core.errors import PortkitError
from ..engine.rule import Rule
from ..engine.codes import Code
from ..engine import fix

MODULES = (
    "PK001_no_hip_equivalent", "PK002_needs_newer_rocm", "PK003_removed_in_rocm",
    "PK004_partial_conversion", "PK005_partially_parsed", "PK006_launch_not_converted",
    "PK007_name_built_by_preprocessor", "PK008_warp_fix_choice",
    "PK011_register_storage_class", "PK012_redefines_hip_device_function", "PK013_narrowing_brace_init",
    "PK014_deviceptr_as_integer",
    "PK101_deprecated_cuda_api", "PK102_experimental_hip_api", "PK103_cuda_version_guard",
    "PK104_cuda_version_value",
    "PK201_hardcoded_warp_size", "PK202_shuffle_offset_from_16", "PK203_full_warp_mask",
    "PK204_ballot_in_32_bits", "PK205_warp_sized_array", "PK206_warp_synchronous_code",
    "PK207_warp_size_as_constant", "PK208_one_warp_block", "PK209_warp_transpose_block_size",
    "PK301_inline_ptx_asm", "PK302_dynamic_parallelism", "PK303_cooperative_launch_needed",
    "PK304_texture_surface_reference", "PK305_wmma_tensor_cores", "PK306_hopper_features",
    "PK307_large_shared_memory", "PK308_nanosleep", "PK309_threadfence_system",
    "PK310_host_only_std_in_device_code", "PK311_dependent_type_without_typename",
    "PK312_torch_hipify_min_max", "PK313_device_function_without_return",
    "PK314_host_call_to_device_math",
    "PK401_cuda_only_library", "PK402_rewrite_blocker",
    "PK501_cmake_cuda_language", "PK502_cuda_architectures", "PK503_find_package_cuda",
    "PK504_cmake_cuda_targets", "PK505_nvcc_flags", "PK506_torch_cuda_extension",
    "PK507_cuda_visible_devices", "PK508_build_step_not_migrated", "PK509_build_migration_choice",
    "PK510_cuda_only_subdirectory",
    "PK601_cuda_only_python_package",
    "PK701_rocm_library_not_installed", "PK702_include_not_found", "PK703_hip_math_template_ambiguity",
    "PK704_vector_operator_ambiguity",
    "PK901_unused_suppression", "PK902_gate_policy_changed",
)

TreeCheck = Callable[..., None]


@lru_cache(maxsize=1)
def modules() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in MODULES)


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    return tuple(m.RULE for m in modules())


@lru_cache(maxsize=1)
def by_code() -> dict[str, Rule]:
    return {r.code: r for r in all_rules()}


# what a code no rule has (a report written by another version) reads as: no metadata
_UNKNOWN = Rule("", "", "info", "", "")


def of(code: str) -> Rule:
    """The rule of a finding's code, for its metadata (no rule: none of it set)."""
    return by_code().get(code, _UNKNOWN)


def get(code: str) -> Rule:
    try:
        return by_code()[code.upper()]
    except KeyError:
        raise PortkitError(f"{code}: no such rule (portkit rules lists them)") from None


def _hooks(keys: str, check: str) -> dict:
    """{key: (checks...)} over the rules that list keys in attribute `keys` (NODES, NAMES ...)."""
    found: dict = {}
    for m in modules():
        for key in getattr(m, keys, ()):
            found.setdefault(key, []).append(getattr(m, check))
    return {k: tuple(v) for k, v in found.items()}


# A rule that reads nodes, literals or fixes declares what a file must hold for it to find anything
# (KEYWORDS: a tuple of engine/keywords.py's entries, or a function giving one); a rule that reads
# names only needs none: its names are its keywords.
_READS_TREE = ("NODES", "LITERALS", "FIX_NODES", "FIX_LITERALS", "FIX_GATES")


@lru_cache(maxsize=2)
def keyword_declarations(gpu: bool = True) -> tuple[tuple, ...] | None:
    """Every rule's keywords (names the tree defines, FACT_NAMES, come per run: fact_keywords), or
    None where a rule that reads the tree declares none: then every file is parsed. gpu=False: of
    the rules that report in a file no GPU compiler reads (not gpu_only)."""
    declared = []
    for m in modules():
        if m.RULE.gpu_only and not gpu:
            continue
        keywords = getattr(m, "KEYWORDS", None)
        if callable(keywords):
            keywords = keywords()
        if keywords is None and any(hasattr(m, attr) for attr in _READS_TREE):
            return None
        names = frozenset(getattr(m, "NAMES", ())) | frozenset(getattr(m, "MASKED", ()))
        declared.append(tuple(keywords) if keywords is not None else ((names,) if names else ()))
    return tuple(declared)


def fact_keywords(facts, gpu: bool = True) -> tuple:
    """The names this tree defines that a rule reads (FACT_NAMES), as identifiers (gpu=False: of the
    rules that are not gpu_only)."""
    return tuple(names for m in modules() if hasattr(m, "FACT_NAMES") and (gpu or not m.RULE.gpu_only)
                 and (names := getattr(facts, m.FACT_NAMES)))


@lru_cache(maxsize=1)
def tree_hooks() -> tuple[dict[str, tuple[TreeCheck, ...]], dict[bytes, tuple[TreeCheck, ...]]]:
    """Checks by node type, and checks by identifier, over all rules with tree hooks."""
    return _hooks("NODES", "check"), _hooks("NAMES", "check_name")


def warp_width() -> ModuleType:
    """The warp-width model PK208 reads one file with (rules/_warpwidth.py), for the project fact
    that follows a header's constant into the files that include it (project/warp_constants.py)."""
    from . import _warpwidth
    return _warpwidth


@lru_cache(maxsize=1)
def fact_name_hooks() -> tuple[tuple[str, TreeCheck], ...]:
    """(attribute of ProjectFacts, check) of the rules that read names the tree defines
    (FACT_NAMES: PK301's assembly macros): the walk adds them to the identifier hooks per tree."""
    return tuple((m.FACT_NAMES, m.check_name) for m in modules() if hasattr(m, "FACT_NAMES"))


@lru_cache(maxsize=1)
def literal_hooks() -> dict[int, tuple[TreeCheck, ...]] | None:
    """The number_literal checks by the literal's value (LITERALS), or None where a rule inspects
    every literal (then the scan calls each of them on all)."""
    found: dict[int, list[TreeCheck]] = {}
    for m in modules():
        if "number_literal" not in getattr(m, "NODES", ()):
            continue
        if not hasattr(m, "LITERALS"):
            return None
        for value in m.LITERALS:
            found.setdefault(value, []).append(m.check)
    return {k: tuple(v) for k, v in found.items()}


@lru_cache(maxsize=1)
def masked_hooks() -> dict[bytes, tuple[TreeCheck, ...]]:
    """Checks by attribute name, for the attributes the parser does not see."""
    return _hooks("MASKED", "check_masked")


@lru_cache(maxsize=1)
def text_hooks() -> dict[str, tuple[TreeCheck, ...]]:
    """Checks by file kind (cmake, make, python, requirements, pyproject, conda, shell)."""
    return _hooks("FILE_KINDS", "check_text")


@lru_cache(maxsize=1)
def fix_families() -> dict[str, fix.FamilyFixes]:
    """Each fix family, by name, with the rules that fix it and their fix functions (engine/fix.py)."""
    return fix.registry(modules())


@lru_cache(maxsize=2)
def gpu_families(gpu: bool) -> frozenset[str]:
    """The fix families no file gets unless a GPU compiler reads it (gpu=False: every rule of the
    family is gpu_only, as the warp family's are); gpu=True: none."""
    return frozenset() if gpu else frozenset(
        name for name, entry in fix_families().items() if entry.codes and all(by_code()[c].gpu_only for c in entry.codes))


def fix_names(names: list[str] | tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """The families `--fix` names (`warp`, `warp,build`, repeated); an unknown one is an error."""
    chosen = frozenset(n.strip() for raw in names for n in raw.split(",") if n.strip())
    known = fix_families()
    for name in sorted(chosen):
        if name not in known:
            raise PortkitError(f"--fix: unknown family {name!r} (known: {', '.join(sorted(known))})")
    return chosen


@lru_cache(maxsize=1)
def refines() -> dict[str, tuple[str, ...]]:
    """For each rule code, the converter codes its findings replace at the same position."""
    return {m.RULE.code: tuple(getattr(m, "REFINES", ())) for m in modules() if getattr(m, "REFINES", ())}


def expand(prefixes: list[str] | tuple[str, ...]) -> set[str]:
    """The codes a list of prefixes names (`PK3`, `PK301`, `all`); unknown prefixes are errors.
    From Code.ALL, the rule modules' codes (tests/test_architecture.py), without importing the
    modules: the commit gate validates its --select/--ignore even when nothing is staged, and
    the 45 modules were most of its start-up."""
    codes: set[str] = set()
    for raw in prefixes:
        prefix = raw.strip().upper()
        if not prefix:
            continue
        if prefix == "ALL":
            codes.update(Code.ALL)
            continue
        matched = {c for c in Code.ALL if c.startswith(prefix)}
        if not matched:
            raise PortkitError(f"{raw}: matches no rule code (portkit rules lists them)")
        codes |= matched
    return codes


def selected(select: list[str] | None, ignore: list[str] | None) -> frozenset[str]:
    """The enabled codes: everything (or `select`) minus `ignore`."""
    chosen = expand(select) if select else set(Code.ALL)
    return frozenset(chosen - expand(ignore or []))
