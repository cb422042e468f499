"""The public API's implementation (re-exported, lazily, by portkit/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .commands.convert import ConvertResult, convert_bytes
from .commands.convert import convert_paths as _convert_paths
from .core.edits import Edit
from .core.errors import PortkitError
from .core.findings import Finding
from .engine.context import Metrics
from .report.document import AuditDocument

__all__ = ["convert_text", "convert_paths", "audit_paths", "scan_options", "Converted", "ConvertResult",
           "AuditDocument", "Edit", "Finding", "Metrics", "PortkitError"]


@dataclass(frozen=True)
class Converted:
    """The result of converting one text: the new bytes, the edits that made them, the findings."""

    output: bytes
    edits: list[Edit]
    findings: list[Finding]
    metrics: Metrics

    @property
    def changed(self) -> bool:
        return bool(self.edits)


from .project.settings import OFFLOAD_ARCH, offload_archs, scan_options  # noqa: F401  (the public API)
from .project.settings import resolve


def convert_text(source: str | bytes, *, filename: str = "input.cu", launch_syntax: str = "cuda",
                 rocm: str | None = None, prefer_roc: bool = False,
                 offload_arch: str | list[str] | None = None, builtins: str = "cuda") -> Converted:
    """Convert one CUDA source, or one build file (named CMakeLists.txt, Makefile, setup.py ...),
    held in memory. `str` input is encoded as UTF-8."""
    from .buildfiles import FORMATS
    from .core.files import kind_of
    data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    options = resolve(rocm=rocm, launch_syntax=launch_syntax, prefer_roc=prefer_roc, offload_arch=offload_arch,
                      builtins=builtins)
    kind = kind_of(filename.rsplit("/", 1)[-1])
    scan, output = convert_bytes(filename, data, options, kind if kind in FORMATS else "source")
    return Converted(output if output is not None else data, scan.edits, scan.findings, scan.metrics)


def convert_paths(paths: list[str | Path], *, output: str | Path | None = None, in_place: bool = False,
                  backup: bool = False, force: bool = False, diff: bool = False, check: bool = False,
                  jobs: int = 1, launch_syntax: str = "cuda", rocm: str | None = None, prefer_roc: bool = False,
                  offload_arch: str | list[str] | None = None, build_files: bool = True,
                  builtins: str = "cuda", rename: bool | str = False, polyfills: bool = True,
                  fix_warp: bool = False, config: bool | str | Path = True,
                  fixes: str | list[str] | tuple[str, ...] = ()) -> ConvertResult:
    """Convert files and trees on disk, as `portkit convert` does (without printing). `rename`:
    True for --rename, or a suffix map such as ".cu=.hip,.cuh=.hpp"; `polyfills`: False for
    --no-polyfills; `fixes`: the fix families to apply, as --fix takes them ("warp", "warp,build", or a
    list; an unknown one raises PortkitError); `fix_warp`: True for --fix warp (kept for callers that
    predate `fixes`); `force`: True for --force (rewrite read-only
    files in place too). `config`, as for audit_paths: True applies the project configuration
    `portkit convert` would apply here (its exclude, amd-macros and mappings, and its rocm where
    `rocm` is unset); a directory: the configuration found from there; False: none."""
    from .commands.convert import configured
    from .project.rename import parse_map
    cfg = _config(config)
    scan = dict(launch_syntax=launch_syntax, prefer_roc=prefer_roc, offload_arch=offload_arch,
                build_files=build_files, builtins=builtins, polyfills=polyfills, fixes=_fix_families(fixes, fix_warp))
    opts = configured(cfg, rocm=rocm, scan=scan, output=Path(output) if output is not None else None,
                      in_place=in_place, backup=backup, force=force, diff=diff, check=check, jobs=jobs,
                      rename=(parse_map(rename if isinstance(rename, str) else None) if rename else None))
    return _convert_paths([Path(p) for p in paths], opts)


def _fix_families(fixes: str | list[str] | tuple[str, ...], fix_warp: bool) -> frozenset[str]:
    """convert_paths' `fixes` (and the older `fix_warp=True`, which is `fixes="warp"`) as --fix reads them."""
    from .rules import fix_names
    names = [fixes] if isinstance(fixes, str) else list(fixes)
    return fix_names(names + (["warp"] if fix_warp else []))


def _config(config: bool | str | Path):
    """The project configuration an API call applies (`config` as audit_paths and convert_paths take it)."""
    from .project import config as project_config
    from .project.config import Config
    return Config() if config is False else project_config.find(None if config is True else Path(config))


def audit_paths(paths: list[str | Path], *, rocm: str | None = None, select: tuple[str, ...] = (),
                ignore: tuple[str, ...] = (), fail_on: str | None = None, team_size: int = 1,
                focus_hours: float | None = None, jobs: int = 1, polyfills: bool = True,
                config: bool | str | Path = True) -> AuditDocument:
    """Audit files and trees as `portkit audit` does; the result is its JSON document, typed
    (portkit.report.document.AuditDocument: a dict, indexed as before). `polyfills`: False for
    --no-polyfills. `config`: True applies the project configuration `portkit audit` would apply
    here ([tool.portkit] in pyproject.toml or portkit.toml, found from the working directory up to
    the repository root): its exclude, amd-macros, and its rocm, select, ignore and fail-on where
    the arguments leave them unset; a directory: the configuration found from there instead;
    False: none."""
    from typing import cast

    from .commands.audit import audit_paths as _audit_paths
    from .commands.audit import configured
    from .report.model import audit_document

    cfg = _config(config)
    opts = configured(cfg, rocm=rocm, select=tuple(select), ignore=tuple(ignore), fail_on=fail_on,
                      scan={"polyfills": polyfills}, team_size=team_size, focus_hours=focus_hours, jobs=jobs)
    return cast(AuditDocument, audit_document(_audit_paths([Path(p) for p in paths], opts)))
