"""Generate mappings/<family>.toml from AMD HIPIFY's documentation tables.

Usage:
    python tools/gen_mappings.py --tables DIR --out mappings/ \
        [--overrides tools/mapping_overrides.toml] [--cuda-include DIR ...]

DIR holds the markdown files of ROCm/HIPIFY docs/tables. The committed tables were made
from commit 014177b with --cuda-include /usr/local/cuda/include --cuda-include
/tmp/nvinc/include (CUDA 13 toolkit headers plus the cuBLAS/cuFFT/cuRAND/cuSPARSE headers,
which tools/fetch_cuda_lib_headers.sh /tmp/nvinc puts there);
without the second folder about 35 cuBLASLt/cuFFT names get their kind from the name rules
below (enum instead of macro). headers.toml is hand-curated and never written here.
The tables are parsed by their header names (CUDA, HIP, ROC or MIOPEN, each followed by
its A/D/C/R[/E] version columns), never by fixed positions, so new columns do not break us.

Status: a HIP name gives "supported"; an E (experimental) version gives "experimental"; an
R (removed) version gives "removed" with hip_removed; no HIP name gives "unsupported".
A HIP name that HIPIFY lists without a version is dropped (the format requires hip_since)
unless tools/mapping_overrides.toml supplies one; the run reports how many were dropped.
A HIP name that is not a C identifier (`void*`) is left out of its entry and counted (a
CUDA name like that would drop its whole entry); a ROC name may be qualified, as hipify-clang
writes it (`rocrand_device::sobol32_engine<false>`).
[meta.<family>] roc_library names the library hipify-clang --roc ports the family to (then a
name without a ROC name is left under --roc); [[roc_args]] in the overrides gives the entries it
names the argument rewrites of their roc function (`args_for = "roc"`), or a `roc_note`.
A CUDA name listed by two families is kept once: in the family named for it under
[placement] in the overrides, else in the first family of PRECEDENCE (most specific first).

Kind heuristic, first rule that applies:
  1. function section (heading without "type"/"Data"): "function"; except a name that the
     CUDA headers declare as a typedef (callback types such as cufftCallbackLoadC), "type";
  2. the CUDA headers given by --cuda-include: `#define NAME` -> "macro", enumerator inside
     an `enum {...}` body -> "enum", struct/union/enum tag or typedef name -> "type";
  3. cub family: "macro" (HIPIFY's CUB table lists preprocessor macros only);
  4. ALL_CAPS names (digits and an 'x' as in INT8x4 allowed): "macro" when they look like
     a version or math constant (ending _VERSION, _VER_X or _PATCHLEVEL; CUDART_ prefix),
     else "enum" (CUBLAS_STATUS_SUCCESS, CUFFT_R2C);
  5. anything else in a data-type section: "type" (cudnnHandle_t, cusparseMatDescr).
Overrides may still set `kind` on any entry.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport has the same API
    import tomli as tomllib

COMMIT = "014177b"
# family -> (HIPIFY table file, title). *_and_ROC / *_and_MIOPEN files carry the roc column.
FAMILIES = {
    "runtime": ("CUDA_Runtime_API_functions_supported_by_HIP.md", "CUDA Runtime API"),
    "driver": ("CUDA_Driver_API_functions_supported_by_HIP.md", "CUDA Driver API"),
    "device": ("CUDA_Device_API_supported_by_HIP.md", "CUDA device functions and types"),
    "rtc": ("CUDA_RTC_API_supported_by_HIP.md", "NVRTC (CUDA runtime compilation)"),
    "complex": ("cuComplex_API_supported_by_HIP.md", "cuComplex"),
    "cublas": ("CUBLAS_API_supported_by_HIP_and_ROC.md", "cuBLAS and cuBLASLt"),
    "curand": ("CURAND_API_supported_by_HIP_and_ROC.md", "cuRAND"),
    "cufft": ("CUFFT_API_supported_by_HIP.md", "cuFFT"),
    "cusparse": ("CUSPARSE_API_supported_by_HIP_and_ROC.md", "cuSPARSE"),
    "cusolver": ("CUSOLVER_API_supported_by_HIP_and_ROC.md", "cuSOLVER"),
    "cudnn": ("CUDNN_API_supported_by_HIP_and_MIOPEN.md", "cuDNN"),
    "cub": ("CUB_API_supported_by_HIP.md", "CUB"),
}
# Most specific first: a library owns its names before the driver, the driver before runtime.
PRECEDENCE = ["device", "complex", "rtc", "cub", "cublas", "curand", "cufft", "cusparse",
              "cusolver", "cudnn", "driver", "runtime"]
NAME_COLUMNS = {"CUDA": "cuda", "HIP": "hip", "ROC": "roc", "MIOPEN": "roc"}
FIELD_ORDER = ["cuda", "hip", "roc", "kind", "status", "hip_since", "hip_deprecated",
               "hip_removed", "roc_since", "cuda_since", "cuda_deprecated", "cuda_removed",
               "legacy", "legacy_until",
               "symbol_arg", "drop_args", "cast_args", "arity_alias", "insert_args", "default_args",
               "defaults_in_hip", "replace_args", "move_args", "copy_args", "args_for", "note", "roc_note"]
KINDS = {"function", "type", "enum", "macro", "header", "namespace"}
STATUSES = {"supported", "partial", "experimental", "unsupported", "removed"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
ROC_NAME = re.compile(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*(<\w+>)?\Z")
VERSION = re.compile(r"\d+\.\d+(\.\d+)?\Z")
MACRO_HINT = re.compile(r"^CUDART_|_VERSION$|_VER_[A-Z]+$|_PATCHLEVEL$")


class Report:
    """Counts and messages gathered while generating, printed once at the end."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lines: list[str] = []

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def say(self, line: str) -> None:
        self.lines.append(line)


def split_row(line: str) -> list[str]:
    """Cells of a markdown table row, without spaces, code backticks and bold marks."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return [c[2:-2] if c.startswith("**") and c.endswith("**") else c.strip("`") for c in cells]


def column_keys(header: list[str]) -> list[str]:
    """Map header cells to keys: 'cuda', 'hip', 'roc' and '<name>.A' style version keys."""
    keys, owner = [], "cuda"
    for cell in header:
        if cell in NAME_COLUMNS:
            owner = NAME_COLUMNS[cell]
            keys.append(owner)
        else:
            keys.append(f"{owner}.{cell}")
    return keys


def parse_tables(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Rows of every table in one HIPIFY markdown file, with their section heading."""
    rows, section, keys = [], "", None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section, keys = line.strip("# *"), None
        elif line.startswith("|**CUDA**"):
            keys = column_keys(split_row(line))
        elif line.startswith("|`") and keys:
            cells = split_row(line)
            rows.append((section, {k: v for k, v in zip(keys, cells) if v}))
    return rows


def strip_c_comments(text: str) -> str:
    """Remove C comments so commented-out declarations do not count."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))


def scan_header_text(text: str, kinds: dict[str, str]) -> None:
    """Record macro, enumerator and type names declared in one header's text."""
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)", text, re.M):
        kinds.setdefault(m.group(1), "macro")
    enum_re = r"\benum\s+(?:class\s+|struct\s+)?(?:__\w+\s+)*(\w*)\s*(?::[\w: ]+)?\{([^}]*)\}"
    for m in re.finditer(enum_re, text):
        if m.group(1):
            kinds.setdefault(m.group(1), "type")
        for item in re.sub(r"^\s*#.*$", "", m.group(2), flags=re.M).split(","):
            name = re.match(r"\s*([A-Za-z_]\w*)", item)
            if name:
                kinds.setdefault(name.group(1), "enum")
    for m in re.finditer(r"\b(?:struct|union)\s+(?:__\w+\s+)*(\w+)\s*[{;]", text):
        kinds.setdefault(m.group(1), "type")
    for m in re.finditer(r"\btypedef\b([^;{]*(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})?[^;]*);", text):
        decl = m.group(1)
        target = (re.search(r"\(\s*\w*\s*\*\s*(\w+)\s*\)\s*\(", decl)
                  or re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", decl))
        if target:
            kinds.setdefault(target.group(1), "type")


def scan_cuda_headers(dirs: list[str], report: Report) -> dict[str, str]:
    """Kind of every name the CUDA headers declare; the first declaration seen wins."""
    kinds: dict[str, str] = {}
    for top in dirs:
        if not os.path.isdir(top):
            report.say(f"warning: --cuda-include {top} not found; kinds fall back to heuristics")
            continue
        for root, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                text = Path(root, name).read_text(encoding="utf-8", errors="replace")
                scan_header_text(strip_c_comments(text), kinds)
    return kinds


def classify(name: str, family: str, section: str, kinds: dict[str, str]) -> str:
    """Kind of a CUDA name, by the rules in the module docstring."""
    if not re.search(r"[Tt]ype|Data", section):
        return "type" if family != "device" and kinds.get(name) == "type" else "function"
    if name in kinds:
        return kinds[name]
    if family == "cub":
        return "macro"
    if re.fullmatch(r"_*[A-Z][A-Z0-9_x]*", name) and re.search(r"[A-Z]{2}", name):
        return "macro" if MACRO_HINT.search(name) else "enum"
    return "type"


def make_entry(family: str, section: str, row: dict[str, str], kinds: dict[str, str],
               report: Report) -> dict | None:
    """One mapping record from one table row; None when the CUDA name is unusable."""
    cuda = row["cuda"]
    if not IDENT.match(cuda):
        report.count("skipped: CUDA name not an identifier")
        return None
    entry = {"cuda": cuda, "kind": classify(cuda, family, section, kinds)}
    for field, key in (("cuda_since", "cuda.A"), ("cuda_deprecated", "cuda.D"),
                       ("cuda_removed", "cuda.R")):
        if key in row:
            entry[field] = row[key]
    for field, key in (("hip", "hip"), ("hip_since", "hip.A"), ("hip_deprecated", "hip.D"),
                       ("hip_removed", "hip.R"), ("roc", "roc"), ("roc_since", "roc.A")):
        if key in row:
            entry[field] = row[key]
    for field, valid in (("hip", IDENT), ("roc", ROC_NAME)):
        if field in entry and not valid.match(entry[field]):
            report.count(f"skipped: {field} name not an identifier")
            report.say(f"  {family}: {cuda}: {field} {entry[field]!r} is not an identifier")
            entry.pop(field)
            entry.pop(f"{field}_since", None)
    if "hip" not in entry:
        for field in ("hip_since", "hip_deprecated", "hip_removed"):
            entry.pop(field, None)
    entry["status"] = status_of(entry, row)
    return entry


def status_of(entry: dict, row: dict[str, str]) -> str:
    """Status from the HIP columns: removed beats experimental beats supported."""
    if "hip" not in entry:
        return "unsupported"
    if "hip_removed" in entry:
        return "removed"
    return "experimental" if "hip.E" in row else "supported"


def build_family(family: str, tables: Path, kinds: dict[str, str], meta: dict,
                 report: Report) -> dict:
    """All entries of one family, keyed by CUDA name.

    meta `ignore_hip = true` drops the HIP columns on purpose (cuDNN: HIPIFY's HIP column
    names hipDNN, which no ROCm release ships), counted but not listed name by name.
    """
    entries = {}
    for section, row in parse_tables(tables / FAMILIES[family][0]):
        if meta.get("ignore_hip") and "hip" in row:
            report.count(f"HIP names ignored by meta ignore_hip ({family})")
            row = {k: v for k, v in row.items() if not k.startswith("hip")}
        entry = make_entry(family, section, row, kinds, report)
        if entry:
            entries[entry["cuda"]] = entry
    return entries


def resolve_duplicates(families: dict[str, dict], placement: dict[str, str],
                       report: Report) -> None:
    """Keep a CUDA name listed by several families in one of them only."""
    owners: dict[str, list[str]] = {}
    for family in PRECEDENCE:
        for cuda in families[family]:
            owners.setdefault(cuda, []).append(family)
    for cuda, fams in sorted(owners.items()):
        if len(fams) < 2:
            continue
        keep = placement.get(cuda, fams[0])
        for family in fams:
            if family != keep:
                del families[family][cuda]
        report.say(f"  duplicate {cuda}: in {', '.join(fams)}; kept in {keep}")
        report.count("duplicates resolved")


def apply_overrides(families: dict[str, dict], overrides: dict, report: Report) -> None:
    """Apply [entries.<family>] overrides: glob keys first, exact names after (they win).

    A key with `*`, `?` or `[` is a glob: it sets fields on the existing *unsupported*
    entries it matches (notes for families of gaps) and never adds entries. An exact key
    sets or replaces fields of its entry, or adds the entry; `unset = [...]` removes fields.
    """
    for family, table in overrides.get("entries", {}).items():
        if family not in families:
            sys.exit(f"overrides: unknown family {family!r}")
        entries = families[family]
        globs = {k: v for k, v in table.items() if any(c in k for c in "*?[")}
        for pattern, fields in globs.items():
            hits = [e for name, e in entries.items()
                    if fnmatch.fnmatchcase(name, pattern) and e.get("status") == "unsupported"]
            if not hits:
                report.say(f"  warning: {family}: glob {pattern!r} matches no unsupported entry")
            for entry in hits:
                entry.update(fields)
            report.count("entries touched by glob overrides", len(hits))
        for cuda, fields in table.items():
            if cuda not in globs:
                apply_one(entries, cuda, dict(fields), report)


def apply_one(entries: dict, cuda: str, fields: dict, report: Report) -> None:
    """Set fields of one entry (adding it when missing) and drop its `unset` fields."""
    unset = fields.pop("unset", [])
    report.count("overrides applied" if cuda in entries else "entries added by overrides")
    entry = entries.setdefault(cuda, {"cuda": cuda})
    for field in unset:
        entry.pop(field, None)
    entry.update(fields)


def apply_roc_args(families: dict[str, dict], groups: list[dict], report: Report) -> None:
    """[[roc_args]]: the argument rewrites (args_for = "roc") of the entries (names or globs)
    whose roc function takes other arguments than the CUDA one (hipify-clang's FuncArgCasts
    entries for --roc), or a `roc_note` where the fields cannot say them."""
    for group in groups:
        entries = families[group["family"]]
        fields = {k: v for k, v in group.items() if k not in ("family", "names", "note")}
        for pattern in group["names"]:
            hits = [e for name, e in entries.items() if fnmatch.fnmatchcase(name, pattern) and "roc" in e]
            if not hits:
                report.say(f"  warning: roc_args: {pattern!r} matches no entry with a roc name")
            for entry in hits:
                if "note" in group:
                    entry["roc_note"] = group["note"]
                if fields:
                    entry.update(fields, args_for="roc")
            report.count("roc entries given argument rewrites or notes by roc_args", len(hits))


def drop_unversioned_hip(families: dict[str, dict], report: Report) -> None:
    """Remove HIP names that have no hip_since: the format cannot express them."""
    for family, entries in families.items():
        for entry in entries.values():
            if "hip" in entry and "hip_since" not in entry:
                report.say(f"  {family}: {entry['cuda']}: HIP name {entry['hip']} has no "
                           "version in HIPIFY; dropped")
                report.count(f"HIP names without version dropped ({family})")
                for field in ("hip", "hip_deprecated", "hip_removed"):
                    entry.pop(field, None)
                if entry["status"] in ("supported", "experimental"):
                    entry["status"] = "unsupported"


def check_entry(entry: dict) -> list[str]:
    """Problems the loader would reject, so that generation fails first."""
    bad = [f"unknown field {k}" for k in entry if k not in FIELD_ORDER]
    if entry.get("kind") not in KINDS:
        bad.append(f"bad kind {entry.get('kind')!r}")
    if entry.get("status") not in STATUSES:
        bad.append(f"bad status {entry.get('status')!r}")
    for k, v in entry.items():
        if k.endswith(("_since", "_deprecated", "_removed")) and not VERSION.match(str(v)):
            bad.append(f"bad version {k}={v!r}")
    if "hip" in entry and "hip_since" not in entry:
        bad.append("hip without hip_since")
    if entry.get("status") == "unsupported" and "hip" in entry:
        bad.append("unsupported but has hip")
    if "roc_note" in entry and "roc" not in entry:
        bad.append("roc_note without roc")
    if entry.get("drop_args") and entry.get("args_for") != "roc" and (
            entry.get("status") != "partial" or "note" not in entry):
        bad.append("drop_args needs status partial and a note")
    return bad


def toml_value(value) -> str:
    """TOML literal for the few value types the format uses."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in sorted(value.items())) + " }"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def render(family: str, entries: dict, meta: dict) -> str:
    """The text of one mapping file: header keys, then one inline table per line."""
    table_file, title = FAMILIES[family]
    lines = ["# Generated by tools/gen_mappings.py from ROCm HIPIFY docs/tables; do not edit.",
             "# Change tools/mapping_overrides.toml and regenerate instead."]
    lines += [f"# {c}" for c in meta.get("comment", [])]
    lines += ["", "schema = 1", f'family = "{family}"', f"title = {toml_value(title)}",
              f'source = "ROCm HIPIFY docs/tables/{table_file} @ {COMMIT}"']
    for key in ("prefer_roc", "roc_library"):
        if key in meta:
            lines.append(f"{key} = {toml_value(meta[key])}")
    lines += ["", "entries = ["]
    for cuda in sorted(entries):
        entry = entries[cuda]
        body = ", ".join(f"{k} = {toml_value(entry[k])}" for k in FIELD_ORDER if k in entry)
        lines.append(f"  {{ {body} }},")
    lines.append("]")
    return "\n".join(lines) + "\n"


def write_all(families: dict[str, dict], out: Path, overrides: dict) -> int:
    """Check and write every family file; return the number of entry problems found."""
    problems = 0
    out.mkdir(parents=True, exist_ok=True)
    for family, entries in families.items():
        for entry in entries.values():
            for bad in check_entry(entry):
                print(f"error: {family}.toml: {entry['cuda']}: {bad}", file=sys.stderr)
                problems += 1
        text = render(family, entries, overrides.get("meta", {}).get(family, {}))
        tomllib.loads(text)  # what we write must parse
        (out / f"{family}.toml").write_text(text, encoding="utf-8")
    return problems


def print_summary(families: dict[str, dict], report: Report) -> None:
    """Per-file counts and the generator's findings."""
    for line in report.lines:
        print(line)
    for key, n in sorted(report.counts.items()):
        print(f"{key}: {n}")
    total = with_hip = 0
    for family, entries in families.items():
        n_hip = sum("hip" in e for e in entries.values())
        total, with_hip = total + len(entries), with_hip + n_hip
        print(f"{family + '.toml':15} {len(entries):6} entries, {n_hip:6} with a HIP name")
    print(f"{'total':15} {total:6} entries, {with_hip:6} with a HIP name")


def main(argv: list[str] | None = None) -> int:
    """Parse, place, override, check, write; exit 1 if any entry would fail to load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--overrides", type=Path,
                        default=Path(__file__).with_name("mapping_overrides.toml"))
    parser.add_argument("--cuda-include", action="append", default=None,
                        help="CUDA header folder used to tell macros, enums and types apart")
    args = parser.parse_args(argv)
    report = Report()
    kinds = scan_cuda_headers(args.cuda_include or ["/usr/local/cuda/include"], report)
    overrides = tomllib.loads(args.overrides.read_text(encoding="utf-8"))
    meta = overrides.get("meta", {})
    families = {f: build_family(f, args.tables, kinds, meta.get(f, {}), report)
                for f in FAMILIES}
    resolve_duplicates(families, overrides.get("placement", {}), report)
    apply_overrides(families, overrides, report)
    apply_roc_args(families, overrides.get("roc_args", []), report)
    drop_unversioned_hip(families, report)
    problems = write_all(families, args.out, overrides)
    print_summary(families, report)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
