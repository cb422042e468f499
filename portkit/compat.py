"""--compat-header: keep one CUDA source, build it for AMD through a generated header of macros.

Dual-vendor projects often do not fork their code: they include, only when compiling for ROCm,
a small header that maps the CUDA names they use to HIP names. This module writes that header
from the same scan and tables as `convert`:

- every CUDA name the converter would rename becomes `#define cudaName hipName` (a namespace,
  `namespace cub = hipcub;`), and every CUDA header it would replace becomes an #include of the
  HIP header, all under `#if defined(__HIP_PLATFORM_AMD__)`, sorted, so that it diffs well;
- the sources keep their CUDA code. Each CUDA #include line is guarded so that AMD builds take
  the compatibility header instead, and a file that uses CUDA without including a CUDA header
  (nvcc includes the runtime implicitly) gets one guarded include of it:

      #if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      #include "../include/portkit_hip_compat.h"
      #else
      #include <cuda_runtime.h>
      #endif

What a macro cannot do (an argument HIP needs wrapped, cast or dropped, a name whose HIP
spelling depends on the call) is listed as needing a source edit; what has no HIP counterpart
is reported as usual (PK001-PK003) and is left for the audit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .edits import Edit, apply_edits
from .errors import PortkitError
from .files import Entry, Skipped, discover, read
from .findings import Finding
from .mappings import format_version
from .scan import Options, scan_source
from .source import SourceFile
from .workers import ordered_map

# clang predefines __HIP__ for HIP sources (hipcc 5.2 adds nothing else); __HIP_PLATFORM_AMD__ comes
# from HIP's own headers, which are not included yet, or from the build (CMake's hip::host).
CONDITION = "defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)"
GUARD = b"#if " + CONDITION.encode()
RUNTIME_HEADER = "hip/hip_runtime.h"


@dataclass(frozen=True)
class CompatJob:
    """What every file is scanned with (picklable, for worker processes)."""

    scan: Options
    header: str                    # the header's path relative to the root, forward slashes


@dataclass
class FileCompat:
    entry: Entry
    names: dict[str, str] = field(default_factory=dict)      # CUDA name -> HIP name
    headers: set[str] = field(default_factory=set)           # HIP headers for the CUDA headers used
    manual: list[tuple[int, str]] = field(default_factory=list)   # (line, what a macro cannot do)
    drops: dict[str, int] = field(default_factory=dict)      # names whose first N arguments HIP drops
    findings: list[Finding] = field(default_factory=list)
    output: bytes | None = None                              # the source with its guarded includes
    skipped: Skipped | None = None


@dataclass
class CompatResult:
    root: Path
    header: Path
    header_text: bytes
    files: list[FileCompat]
    skipped: list[Skipped]
    rocm: str
    old_header: bytes | None = None          # the header on disk before this run

    @property
    def changed(self) -> list[FileCompat]:
        """Sources that get (or would get) guarded includes."""
        return [f for f in self.files if f.output is not None]

    @property
    def header_changed(self) -> bool:
        return self.old_header != self.header_text

    @property
    def header_rel(self) -> str:
        return self.header.absolute().relative_to(self.root).as_posix()

    @property
    def names(self) -> dict[str, str]:
        return {k: v for f in self.files for k, v in f.names.items()}

    @property
    def findings(self) -> list[Finding]:
        return [x for f in self.files for x in f.findings]


def _compat_entry(entry: Entry, job: CompatJob) -> FileCompat:
    result = FileCompat(entry)
    if not entry.is_source or entry.rel == job.header:
        return result
    data, skipped = read(entry)
    if data is None or skipped is not None:
        result.skipped = skipped
        return result
    source = SourceFile.from_bytes(entry.rel, data)
    scan = scan_source(source, job.scan)
    result.findings = [f for f in scan.findings if f.code in ("PK001", "PK002", "PK003", "PK004", "PK005")]
    spelled = _include_spelling(entry.rel, job.header)
    guards: list[Edit] = []
    conflicts: dict[str, set[str]] = {}
    for edit in scan.edits:
        original = data[edit.start:edit.end].decode("utf-8", "replace")
        text = edit.text.decode("utf-8", "replace")
        if edit.what == "hip runtime header":
            if spelled.encode() not in data:
                guards.append(Edit(edit.start, edit.start, _guarded(spelled, b"", source.newline)))
        elif edit.what.startswith("duplicate "):    # a CUDA include whose HIP header comes twice
            result.headers.add(edit.what[len("duplicate "):])
            guards.append(_guard_line(data, edit.start, spelled, source.newline))
        elif edit.what == "HIP_SYMBOL":
            continue    # HIP's C++ API also takes the symbol itself (template overloads), as CUDA's does
        elif edit.what.endswith(_DROPPED) and _leading_drops(edit.what) is not None:
            # written as a function-like macro that drops the leading arguments
            result.drops[edit.what.rsplit(" argument ", 1)[0]] = _leading_drops(edit.what)
        elif original[:1] in "<\"" and original[1:-1] == edit.what:         # a CUDA header
            result.headers.add(text[1:-1])
            guards.append(_guard_line(data, edit.start, spelled, source.newline))
        elif original == edit.what and text.isidentifier():                   # a CUDA name
            conflicts.setdefault(edit.what, set()).add(text)
            result.names[edit.what] = text
        elif edit.what == "cast":                                            # a call fix
            if text.startswith("reinterpret_cast"):
                result.manual.append((source.position(edit.start)[0],
                                      f"HIP's C signature takes this argument as {text[17:-2]}: write {text}...)"))
        elif original.isidentifier() and text.isidentifier():                # a call-dependent name
            result.manual.append((source.position(edit.start)[0],
                                  f"{original} here is {edit.what} in CUDA and {text} in HIP (by its arguments)"))
        else:
            result.manual.append((source.position(edit.start)[0], f"{edit.what}: HIP needs `{text}` here"))
    for name, targets in conflicts.items():
        if len(targets) > 1:       # one CUDA name, two HIP names by call: no macro can choose
            result.names.pop(name, None)
            result.manual.append((0, f"{name} becomes {' or '.join(sorted(targets))} depending on the call"))
    edits = sorted(set(g for g in guards if g is not None))
    if edits:
        result.output = apply_edits(data, edits)
    result.manual = sorted({(_line_after(line, edits, source), what) for line, what in result.manual})
    return result


def _line_after(line: int, edits: list[Edit], source: SourceFile) -> int:
    """A line of the original file as numbered after the guarded includes are in (0 stays 0)."""
    if line == 0:
        return 0
    shift = sum(e.text.count(b"\n") - source.data.count(b"\n", e.start, e.end)
                for e in edits if source.position(e.start)[0] < line)
    return line + shift


_DROPPED = tuple(f" argument {i}" for i in range(1, 10))


def _leading_drops(what: str) -> int | None:
    """`__shfl_down_sync argument 1`: how many leading arguments the mapping drops, when it drops
    only leading ones, which a function-like macro can do
    (`#define __shfl_down_sync(m, ...) __shfl_down(__VA_ARGS__)`); else None."""
    from .mappings import default_db
    mapping = default_db().names.get(what.rsplit(" argument ", 1)[0])
    if mapping is None or sorted(mapping.drop_args) != list(range(1, len(mapping.drop_args) + 1)):
        return None
    return len(mapping.drop_args) or None


def _include_spelling(rel: str, header: str) -> str:
    here = os.path.dirname(rel)
    return os.path.relpath(header, here or ".").replace(os.sep, "/")


def _guarded(spelled: str, original_line: bytes, newline: bytes) -> bytes:
    include = f'#include "{spelled}"'.encode()
    if not original_line:
        return GUARD + newline + include + newline + b"#endif" + newline
    return GUARD + newline + include + newline + b"#else" + newline + original_line + b"#endif" + newline


def _guard_line(data: bytes, pos: int, spelled: str, newline: bytes) -> Edit | None:
    """The whole #include line at `pos`, inside the AMD guard; None when it is guarded already."""
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    end = len(data) if end < 0 else end + 1
    before = data[:start].splitlines()[-3:]
    if len(before) == 3 and before[0].strip() == GUARD and before[2].strip() == b"#else":
        return None
    line = data[start:end]
    if not line.endswith((b"\n", b"\r")):
        line += newline
    return Edit(start, end, _guarded(spelled, line, newline))


def header_text(names: dict[str, str], headers: set[str], kinds: dict[str, str], rocm: str, command: str,
                drops: dict[str, int] | None = None) -> bytes:
    """The compatibility header: includes, then one mapping per line, sorted, stable across runs."""
    lines = [
        "// Generated by portkit: the CUDA names this project uses, mapped to HIP (ROCm " + rocm + ").",
        "// Compiled only for AMD GPUs; regenerate after changing the code, do not edit by hand:",
        "//   " + command,
        "#pragma once",
        "#if " + CONDITION,
        "",
    ]
    # HIP's headers expect hip_runtime.h before them (nvcc includes the runtime implicitly)
    lines += [f"#include <{h}>" for h in [RUNTIME_HEADER, *sorted(headers - {RUNTIME_HEADER})]]
    groups = (("namespace", "namespaces"), ("type", "types"), ("enum", "enumerators and constants"),
              ("macro", "macros"), ("function", "functions"))
    for kind, title in groups:
        chosen = sorted(n for n in names if kinds.get(n, "function") == kind)
        if not chosen:
            continue
        lines += ["", f"// {title}"]
        for name in chosen:
            if kind == "namespace":
                lines.append(f"namespace {name} = {names[name]};")
            elif drops and name in drops:    # HIP takes the call without its first arguments (a mask)
                dropped = ", ".join(f"portkit_drop{i}" for i in range(1, drops[name] + 1))
                lines.append(f"#define {name}({dropped}, ...) {names[name]}(__VA_ARGS__)")
            else:
                lines.append(f"#define {name} {names[name]}")
    lines += ["", "#endif  // AMD", ""]
    return "\n".join(lines).encode()


def compat_paths(paths: list[Path], header: Path, options: Options, jobs: int = 1,
                 progress=None) -> CompatResult:
    """Scan the tree and build the header text and each source's guarded includes (writes nothing)."""
    from .mappings import default_db
    root, entries, skipped = discover([Path(p) for p in paths])
    try:
        header_rel = header.absolute().relative_to(root).as_posix()
    except ValueError:
        raise PortkitError(f"{header}: the compatibility header must be inside the converted tree {root}") from None
    if header.exists() and not header.is_file():
        raise PortkitError(f"{header}: exists and is not a file")
    scan = Options(launch_syntax="cuda", rocm=options.rocm, prefer_roc=options.prefer_roc)
    job = CompatJob(scan, header_rel)
    files = list(ordered_map(_compat_entry, entries, job, jobs, progress))
    db = default_db()
    names = {k: v for f in files for k, v in f.names.items()}
    kinds = {n: db.names[n].kind for n in names if n in db.names}
    headers = {h for f in files for h in f.headers}
    rocm = format_version(options.rocm or db.newest)
    command = f"portkit convert --compat-header {header_rel} --in-place --rocm {rocm} ."
    drops = {k: v for f in files for k, v in f.drops.items() if k in names}
    text = header_text(names, headers, kinds, rocm, command, drops)
    old_header = header.read_bytes() if header.is_file() else None
    return CompatResult(root, header, text, files, skipped + [f.skipped for f in files if f.skipped], rocm,
                        old_header)
