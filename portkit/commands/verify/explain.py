"""Which portkit finding explains a compile error, and where the error was in the CUDA source.

The findings come from scanning the converted file itself, in audit mode, for the compiler's
ROCm release: conversion is idempotent, so what convert left (a CUDA name ROCm lacks, inline
PTX, a texture reference) is found again at the converted line, and nothing has to be carried
from the conversion run. An error is explained, in this order, by

0. inside the files of a library with no drop-in (CUTLASS's own headers, blocked_library.py): its
   decision, PK402, whatever else is on the line (CUTLASS's `__cvta_generic_to_shared`, PK001):
   the library's code is replaced, not ported;
0b. an undeclared warp primitive the target declares only with a define, or a newer release adds
   (PK002 naming the release, opt_in.py): the build stops on the release, whatever the line's
   findings say about the CUDA construct;
1. a finding on the error's line whose rule can break a build (`Rule.breaks_build`);
2. a finding in the unit or the error's file about the name the error quotes;
3. the tables, for what a scan of the converted file cannot see: a HIP name that only a newer
   ROCm has than the compiler's (PK002; the tree was converted for a newer target), a call whose
   arguments fit that name's signature in a newer release only (PK002: hipblasGemmEx with
   hipDataType at 6.x, whose form for them is hipblasGemmEx_v2), a HIP name
   removed by then (PK003), a ROCm library header the compiler cannot find (PK701), a header
   that is neither CUDA's nor ROCm's (PK702: the project's own dependency, not a porting gap), a HIP
   name the target lacks that the project's own shim #defines (PK002, project_shim.py);
4. the diagnostic itself: a defect of the compiler's headers (PK703).

An error none of these explain is a gap in portkit's rules or tables; verify marks it so.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ... import rules
from ...core.files import read_regular
from ...core.findings import Finding, fingerprint
from ...core.tables.mappings import Mapping, MappingDB, Version, format_version
from ...engine.facts import ProjectFacts
from ...engine.platform import regions
from ..scan.job import Job, scan_file
from ..scan.walk import Options
from ...core.source import SourceFile
from .diagnostics import Located, relative, shown
from . import torch_release
from .hip_index import HipIndex, hip_index as _hip_index
from .opt_in import WARP_PRIMITIVES, release_of
from .project_shim import shim_name
from .packs import not_found, provider
from .blocked_library import inside_blocked_library
from .toolchain import beyond_scan
from ...engine.codes import Code


@dataclass
class FileFacts:
    """What verify knows of one converted file: its findings, and its lines in the CUDA source."""

    findings: list[Finding]
    lines: list[bytes]
    source_lines: list[bytes] | None = None
    line_map: dict[int, int] = field(default_factory=dict)   # converted line -> CUDA line

    def source_line(self, line: int) -> tuple[int | None, str | None]:
        if self.source_lines is None:
            return None, None
        original = self.line_map.get(line)
        if original is None or original > len(self.source_lines):
            return None, None
        return original, _text(self.source_lines[original - 1])


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace").rstrip("\r\n")


def line_map(old: list[bytes], new: list[bytes]) -> dict[int, int]:
    """Converted line -> CUDA line. Conversion rewrites names inside lines, so changed runs of
    equal length pair line by line; an inserted include maps to nothing."""
    out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            for k in range(b1 - b0):
                out[b0 + k + 1] = a0 + k + 1
        elif tag == "replace":
            for k in range(b1 - b0):
                out[b0 + k + 1] = a0 + min(k, a1 - a0 - 1) + 1
    return out


class Facts:
    """Scans converted files on demand (once each) for the explanations."""

    def __init__(self, root: Path, scan: Options, source_root: Path | None, db: MappingDB,
                 project: ProjectFacts = ProjectFacts(), pack: bool = False, installed: Version | None = None):
        self.root = root
        self.pack = pack              # the compiler checks against a header pack, not an installation
        self.installed = installed    # the installation's release (the compiler's), which may not be the target's
        self.scan = scan              # the audit's settings at the release verified (project/settings.py)
        self.target = scan.target
        self.project = project        # what the project pipeline learned of the converted tree
        self.source_root = source_root
        self.db = db
        self._files: dict[str, FileFacts] = {}

    def of(self, rel: str) -> FileFacts:
        if rel not in self._files:
            self._files[rel] = self._load(rel)
        return self._files[rel]

    def _load(self, rel: str) -> FileFacts:
        try:
            data = read_regular(self.root / rel, follow=True)
        except OSError:
            return FileFacts([], [])
        try:
            findings = scan_file(SourceFile.from_bytes(rel, data), "source", Job(self.scan, self.project), self.db).findings
        except (RecursionError, ValueError):    # a file the scanner cannot take: its errors stay unexplained
            findings = []
        facts = FileFacts(findings, data.splitlines(keepends=True))
        if self.source_root is not None:
            try:
                original = read_regular(self.source_root / rel, follow=True).splitlines(keepends=True)
            except OSError:
                return facts
            facts.source_lines = original
            facts.line_map = line_map([l.rstrip(b"\r\n") for l in original],
                                      [l.rstrip(b"\r\n") for l in facts.lines])
        return facts


def explain(error: Located, unit_rel: str, facts: Facts) -> list[Finding]:
    """The findings that explain one error (empty when none does)."""
    subject = error.diagnostic.subject
    blocked = inside_blocked_library(error)
    if blocked is not None:
        return [_finding(blocked[0], error, facts, blocked[1], blocked[2])]
    if subject in WARP_PRIMITIVES:   # 0b: the release, before the line's findings
        cuda = facts.db.names.get(subject)
        release = release_of(subject, error.diagnostic.message, facts.target, cuda.hip if cuda else None)
        if release is not None:
            return [_finding(Code.NEEDS_NEWER_ROCM, error, facts, subject, release)]
    if error.rel is not None:
        here = facts.of(error.rel).findings
        stops = _at_error_directive(error, facts)
        on_line = [f for f in here if f.line <= error.line <= f.end_line and (stops or _breaks_build(f.code))] \
            or torch_release.before_step(error, facts, _breaks_build)
        about = [f for f in on_line if f.subject == subject]
        if about or on_line:
            return about or on_line
    directive = _missing_build_macro(error, facts)
    if directive is not None:
        return [directive]
    defect = beyond_scan(error, facts)   # in the compiler's headers: no scan sees it
    if defect is None:                # a torch extension written for an older torch than the pack's
        defect = torch_release.explain(error, facts.of(error.rel).lines if error.rel is not None else [])
    if defect is not None:
        return [_finding(defect[0], error, facts, defect[1], defect[2])]
    if subject:
        rels = dict.fromkeys([r for r in (unit_rel, error.rel) if r is not None])
        named = [f for rel in rels for f in facts.of(rel).findings
                 if f.subject == subject and f.severity != "info"]
        if named:
            return named[:1]
        from_tables = _from_tables(error, subject, facts)
        if from_tables is not None:
            return [from_tables]
    return []


def _at_error_directive(error: Located, facts: Facts) -> bool:
    """The error is an `#error` directive the build reached: any finding on that line is about why
    it is reached (PK103: `#if CUDA_VERSION < 8000` holds under hip-clang), though its rule's other
    findings (a branch an AMD build takes differently) do not stop a build, so the rule is not one
    that `breaks_build`: such a PK103 on the very line was not linked (issue 48)."""
    lines = facts.of(error.rel).lines if error.rel is not None else []
    return 0 < error.line <= len(lines) and _ERROR_DIRECTIVE.match(lines[error.line - 1]) is not None


@lru_cache(maxsize=None)
def _breaks_build(code: str) -> bool:
    return rules.by_code()[code].breaks_build if code in rules.by_code() else False


def _from_tables(error: Located, subject: str, facts: Facts) -> Finding | None:
    index = _hip_index(facts.db)
    message = error.diagnostic.message
    target = format_version(facts.target)
    if "file not found" in message:
        header = index.headers.get(subject)
        if header is None:
            through = _cuda_header_in_library(error, facts, subject)
            if through is not None:
                return through
            if subject in index.cuda_headers:
                return _cuda_header_in_amd_branch(error, facts, subject)
            if _looks_cuda(subject):
                return None     # a CUDA header the tables do not know: a gap, not the environment
            return _finding(Code.INCLUDE_NOT_FOUND, error, facts, subject,
                            f"{subject} is neither a CUDA nor a ROCm header, and the compiler cannot find it: "
                            f"a dependency of the project (give verify its flags with -p, -I or -D)")
        if header.hip_since is not None and header.hip_since > facts.target:
            return _finding(Code.NEEDS_NEWER_ROCM, error, facts, subject,
                            f"{subject} (for {header.cuda}) needs ROCm {format_version(header.hip_since)}, "
                            f"the compiler is ROCm {target}")
        if subject.startswith("hip/"):
            return None     # the HIP runtime's own headers come with the compiler
        return _finding(Code.ROCM_LIBRARY_NOT_INSTALLED, error, facts, subject,
                        _not_installed(subject, header, facts))
    if message.startswith("no matching function for call to"):
        return _older_signature(error, subject, facts, index)
    record = index.names.get(subject)
    if record is None:
        shim = shim_name(error, subject, facts.db, facts.target, facts.root)
        return _finding(shim[0], error, facts, shim[1], shim[2]) if shim is not None else None
    if record.hip_removed is not None and record.hip_removed <= facts.target:
        return _finding(Code.REMOVED_IN_ROCM, error, facts, subject,
                        f"{subject} (for {record.cuda}) was removed in ROCm {format_version(record.hip_removed)}; "
                        f"the compiler is ROCm {target}")
    if record.hip_since is not None and record.hip_since > facts.target:
        return _finding(Code.NEEDS_NEWER_ROCM, error, facts, subject,
                        f"{subject} (for {record.cuda}) needs ROCm {format_version(record.hip_since)}, the compiler "
                        f"is ROCm {target}: convert with --rocm {target} (the CUDA name is kept and reported) "
                        f"or build with a newer ROCm")
    return None


_NO_CONVERSION = re.compile(r"no known conversion from '([^']+)' to '([^']+)'")
# the define a library's headers take for their newer API before it became the default (hipblas.h at
# ROCm 6.x: "Compile with -DHIPBLAS_V2 to get new API with hipDataType now"; hipBLAS 3.0, ROCm 7.0,
# has only that API), and the release that has it by default
_NEWER_API_DEFINE = {"cublas": ("HIPBLAS_V2", "7.0")}


def _older_signature(error: Located, subject: str, facts: Facts, index: HipIndex) -> Finding | None:
    """A call to a HIP name whose arguments are those of a newer release's signature: the project's
    own AMD code calls hipblasGemmEx with hipDataType (CTranslate2, built with ROCm 7), which at
    ROCm 6.x takes hipblasDatatype_t; the tables name the form that takes them at the target
    (cublasGemmEx's HIP name from ROCm 6.0 is hipblasGemmEx_v2)."""
    record = index.legacy.get(subject)
    if record is None or record.legacy_until is None or record.legacy_until > facts.target:
        return None
    found = next((m for *_, text in error.diagnostic.notes if (m := _NO_CONVERSION.search(text))), None)
    if found is None:
        return None
    passed, wanted = found.groups()
    define, default = _NEWER_API_DEFINE.get(record.family, ("", ""))
    opt_in = f", or define {define} for the build, which gives {subject} that signature" if define else ""
    newer = (f"ROCm {default} or newer, where it has that signature by default" if default
             else "the ROCm the project targets")
    return _finding(Code.NEEDS_NEWER_ROCM, error, facts, subject,
                    f"{subject} takes '{wanted}' at ROCm {format_version(facts.target)} where the call passes "
                    f"'{passed}', the argument of its signature in a newer ROCm: call {record.hip} ({record.cuda}'s "
                    f"HIP name from ROCm {format_version(record.legacy_until)}, which takes it){opt_in}, or build "
                    f"with {newer}")


_ERROR_DIRECTIVE = re.compile(rb"\s*#\s*error\b")
_IF_LINE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b([^\n]*)", re.M)
_UNDEFINED = re.compile(rb"[ \t]*#[ \t]*(?:ifndef[ \t]+(\w+)|if[ \t]+!\s*defined\s*\(?\s*(\w+)\s*\)?)[ \t]*$")


def _missing_build_macro(error: Located, facts: Facts) -> Finding | None:
    """An error in the NVIDIA build's branch of an #if the project selects for AMD with its own
    macro (faiss: `#if !defined(USE_AMD_ROCM)` `#include <cuda_bf16.h>`; DeviceDefs.cuh's
    `#ifdef USE_AMD_ROCM ... #else #if CUDA_VERSION < 8000 #error`): verify was not given the
    macro the project's AMD build defines. Explained by the platform model (PK103), with the -D."""
    place = _place(error, facts)
    if place is None:
        return None
    lines, data, offset, worlds, kind = place
    is_error = _ERROR_DIRECTIVE.match(lines[error.line - 1]) is not None
    before = list(_IF_LINE.finditer(data, 0, offset))
    if is_error and before:   # `#ifndef TCNN_HALF_PRECISION` `#error ... must define this`: the build's -D
        undefined = _UNDEFINED.match(before[-1].group(0))
        if undefined is not None:
            name = (undefined.group(1) or undefined.group(2)).decode()
            return _finding(Code.CUDA_VERSION_GUARD, error, facts, name,
                            f"#error unless {name} is defined: the build defines it where verify does not read "
                            f"(a condition, an option); pass -D{name}=VALUE, or -p with the build's "
                            f"compile_commands.json")
    # ported code (an #if with an AMD branch) is never the AMD build's; an NVIDIA-only #error is
    # where its #if group names the AMD macro too
    if kind != regions.PORTED and not (kind in (regions.NVIDIA, regions.FALLBACK) and is_error):
        return None
    amd = worlds.amd
    macro = next((name for m in reversed(before) for name in re.findall(rb"\w+", m.group(1))
                  if amd.get(name.decode()) == 1 and name.decode() not in ("__HIP__", "__HIPCC__")), None)
    if macro is None:
        return None
    name = macro.decode()
    return _finding(Code.CUDA_VERSION_GUARD, error, facts, name,
                    f"the NVIDIA build's branch of an #if that {name} selects for AMD: the project's AMD "
                    f"build defines {name}, this compile did not (pass -D{name}, or -p with that build's "
                    f"compile_commands.json)")


def _place(error: Located, facts: Facts):
    """Where an error is in its file's platform model: (lines, bytes, the line's offset, the
    worlds, the region kind there), or None for an error outside the tree's files."""
    if error.rel is None:
        return None
    lines = facts.of(error.rel).lines
    if not 0 < error.line <= len(lines):
        return None
    data = b"".join(lines)
    offset = sum(len(line) for line in lines[:error.line - 1])
    worlds = regions.selectors(facts.project.amd_macros, (), (), facts.project.one_world)
    return lines, data, offset, worlds, regions.classify(data, worlds).kind_at(offset)


def _cuda_header_in_amd_branch(error: Located, facts: Facts, subject: str) -> Finding | None:
    """A CUDA header the tables map, left in a branch the project's own AMD build compiles (faiss's
    `#ifdef USE_AMD_ROCM` `#include <device_functions.h>`): the platform model leaves that branch as
    ported, since the project's AMD build translates it itself (faiss runs hipify over its tree).
    Explained by the platform model (PK103), with the HIP header and the two ways out."""
    place = _place(error, facts)
    if place is None or place[4] != regions.AMD:
        return None
    hip = facts.db.headers[subject].hip or "its HIP header"
    return _finding(Code.CUDA_VERSION_GUARD, error, facts, subject,
                    f"{subject} is CUDA's header (HIP: {hip}) in a branch only the project's AMD build compiles, "
                    f"which portkit leaves as the project wrote it: the project's own AMD build translates it "
                    f"(a hipify step), or convert with --no-platform-model to convert that branch too")


def _not_installed(subject: str, header: Mapping, facts: Facts) -> str:
    """One line: the library, that neither the pack nor the installation has it, and its package."""
    where = ("the header pack or the ROCm installation" if facts.pack
             else f"the ROCm {format_version(facts.installed or facts.target)} installation")
    return not_found(subject, where) or (f"{subject} belongs to a ROCm library ({_library(header)}) that is not "
                                         f"in {where}: install its development package, or pass its include "
                                         f"directory with -I")


_BACKEND = re.compile(r"^(?P<head>.*?/)cuda(?P<tail>/.*)$")


def _cuda_header_in_library(error: Located, facts: Facts, subject: str) -> Finding | None:
    """A CUDA header that a library header wants, reached through the project's own #include
    (rocThrust's thrust/system/cuda/error.h includes <driver_types.h>: the CUDA backend rocThrust
    keeps for its NVIDIA build). Explained at that #include by its chain, with the library's HIP
    backend when the pack or installation has the same header under hip/ instead of cuda/."""
    d = error.diagnostic
    hops = [*d.included_from, (d.path, d.line)]
    inside = [i for i, (path, _) in enumerate(hops) if relative(path, facts.root, facts.root) is not None]
    cuda = subject in _hip_index(facts.db).cuda_headers or _looks_cuda(subject)
    if d.path is None or not cuda or not inside or inside[-1] == len(hops) - 1:
        return None
    entry = Path(hops[inside[-1] + 1][0]).as_posix()     # the library header the project includes
    included = shown(entry, facts.root, facts.root)       # as the #include names it: thrust/system/cuda/error.h
    chain = " -> ".join(f"{shown(path, facts.root, facts.root)}:{line}" for path, line in hops[inside[-1]:])
    backend = _BACKEND.match(included)
    instead = "use the library's HIP API instead"
    what = "a library header that needs the CUDA toolkit"
    if backend is not None:
        known = provider(included)
        what = (f"{known[0] if known else 'the library'}'s CUDA backend ({backend.group('head')}cuda/), "
                f"which needs the CUDA toolkit")
        hip = f"{backend.group('head')}hip{backend.group('tail')}"
        if Path(entry[:len(entry) - len(included)] + hip).is_file():
            instead = f"convert to its HIP backend: <{hip}>"
    return _finding(Code.NO_HIP_EQUIVALENT, error, facts, included,
                    f"{chain} -> '{subject}' not found: a CUDA header reached through {what}; {instead}")


def _library(header: Mapping) -> str:
    """The ROCm library a header belongs to, as the ecosystem table names it."""
    from ...core.tables import ecosystem
    library = ecosystem.default().header(header.cuda)
    return library.rocm if library is not None and library.rocm else f"the ROCm library under {header.hip}"


_CUDA_HEADER_PREFIXES = ("cuda", "cu", "nv", "cub/", "thrust/", "cooperative_groups", "sm_", "mma.h")


def _looks_cuda(header: str) -> bool:
    """A CUDA toolkit header by its name (cuda_awbarrier.h, cuda/pipeline, nvml.h, cufftw.h)."""
    return header.lower().startswith(_CUDA_HEADER_PREFIXES)


def _finding(code: str, error: Located, facts: Facts, subject: str, message: str) -> Finding:
    rule = rules.get(code)
    snippet = ""
    if error.rel is not None:
        lines = facts.of(error.rel).lines
        if 0 < error.line <= len(lines):
            snippet = _text(lines[error.line - 1]).strip()
    path = error.rel or ""
    return Finding(rule.code, rule.name, rule.severity, rule.category, path, error.line, error.column,
                   error.line, error.column, message, snippet, rule.fix, subject,
                   fingerprint=fingerprint(rule.code, path, subject, snippet))
