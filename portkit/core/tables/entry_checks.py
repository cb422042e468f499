"""The rules every record of a mapping table obeys (docs/mapping-format.md, "Record fields").

Checked on the raw TOML record, before it becomes a Mapping (mappings.py), so that the shipped
tables and a project's own mapping files (project_tables.py) fail alike: one line naming the
file and the entry.
"""

from __future__ import annotations

import re

from ..errors import MappingError

KINDS = ("function", "type", "enum", "macro", "header", "namespace")
STATUSES = ("supported", "partial", "experimental", "unsupported", "removed")
VERSION_FIELDS = ("hip_since", "hip_deprecated", "hip_removed", "roc_since",
                  "cuda_since", "cuda_deprecated", "cuda_removed", "legacy_until", "defaults_in_hip")
STR_FIELDS = ("cuda", "hip", "roc", "kind", "status", "note", "roc_note", "legacy") + VERSION_FIELDS
ARG_FIELDS = ("symbol_arg", "drop_args", "cast_args", "arity_alias", "insert_args", "default_args",
              "replace_args", "move_args", "copy_args", "defaults_in_hip", "args_for")
ENTRY_KEYS = set(STR_FIELDS) | set(ARG_FIELDS)
# Every pattern full-matches (re.fullmatch): `^...$` would take a value with a trailing newline
# ("myHipAlloc\n"), which the converter writes into the source as it is; [0-9], never \d, which
# takes other scripts' digits. re.ASCII keeps \w to the characters a C++ name is made of.
# reinterpret_cast targets: pointer types (`const void*`, `void**`, `size_t*`)
_CAST_RE = re.compile(r"(const )?[A-Za-z_][A-Za-z0-9_]* ?\*{1,2}")
# text written as a whole argument: a name, a number, or a qualified name (never a comma or paren)
_ARG_TEXT_RE = re.compile(r"[A-Za-z0-9_:.]+")
# hipify-clang inserts two arguments at once (csrgemm2's operations, SpMM's stage and buffer)
_ARGS_TEXT_RE = re.compile(r"[A-Za-z0-9_:.]+(, [A-Za-z0-9_:.]+)*")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a namespace inside another one (thrust::cuda): matched where the code spells it so qualified
_QUALIFIED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+")
# roc names may be qualified (hipify-clang: curandStateSobol32 -> rocrand_device::sobol32_engine<false>)
_ROC_NAME_RE = re.compile(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*(<\w+>)?", re.ASCII)
# an include path as written between <> (`cublas_v2.h`, `hipblas/hipblas.h`, `thrust/system/cuda/...`):
# relative, '/'-separated parts of letters, digits and `_.+-`. The converter writes it inside the
# directive, so a quote, `>`, a space or a newline would end the directive and start another line.
_HEADER_RE = re.compile(r"[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*")
# free text shown to people (a note): one line, no control characters
TEXT_RE = re.compile(r"[^\x00-\x1f\x7f]*")
# an argument position ("2"): ASCII digits, few of them; str.isdigit() takes "²", which int() refuses
_POSITION_RE = re.compile(r"[0-9]{1,3}")

def check_entry(where: str, raw: dict) -> None:
    """Every field of one raw record checked; `where` names the file and the entry."""
    unknown = set(raw) - ENTRY_KEYS
    if unknown:
        raise MappingError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    for key in STR_FIELDS:
        if key in raw and not isinstance(raw[key], str):
            raise MappingError(f"{where}: field {key!r} must be a string")
    for key in ("note", "roc_note"):
        if key in raw and not TEXT_RE.fullmatch(raw[key]):
            raise MappingError(f"{where}: field {key!r} must be one line of text (no control characters)")
    for key in ("cuda", "kind", "status"):
        if key not in raw:
            raise MappingError(f"{where}: missing field {key!r}")
    if raw["kind"] not in KINDS:
        raise MappingError(f"{where}: bad kind {raw['kind']!r} (one of {', '.join(KINDS)})")
    if raw["status"] not in STATUSES:
        raise MappingError(f"{where}: bad status {raw['status']!r} (one of {', '.join(STATUSES)})")
    _check_names(where, raw)
    if "roc_note" in raw and "roc" not in raw:
        raise MappingError(f"{where}: roc_note needs a roc name")
    has_hip = "hip" in raw
    if raw["status"] == "unsupported" and has_hip:
        raise MappingError(f"{where}: status 'unsupported' but a hip name is given")
    if raw["status"] != "unsupported" and not has_hip:
        raise MappingError(f"{where}: status {raw['status']!r} needs a hip name")
    if raw["status"] == "removed" and "hip_removed" not in raw:
        raise MappingError(f"{where}: status 'removed' needs hip_removed")
    if raw["status"] == "partial" and not raw.get("note"):
        raise MappingError(f"{where}: status 'partial' needs a note saying what differs")
    if "symbol_arg" in raw and (type(raw["symbol_arg"]) is not int or raw["symbol_arg"] < 1):
        raise MappingError(f"{where}: symbol_arg must be a positive integer")
    if "drop_args" in raw:
        drops = raw["drop_args"]
        if not isinstance(drops, list) or not drops or any(type(d) is not int or d < 1 for d in drops):
            raise MappingError(f"{where}: drop_args must be a list of positive integers")
        if raw["status"] != "partial" and raw.get("args_for") != "roc":
            raise MappingError(f"{where}: drop_args changes behaviour, so the status must be 'partial'")
    if ("legacy" in raw) != ("legacy_until" in raw):
        raise MappingError(f"{where}: legacy and legacy_until go together")
    _check_positions(where, raw, "cast_args", _CAST_RE, "pointer types such as 'const void*' or 'size_t*'")
    _check_positions(where, raw, "arity_alias", _IDENT_RE, "CUDA names", first=0)
    for key in ("default_args", "replace_args"):
        _check_positions(where, raw, key, _ARG_TEXT_RE, "argument text (a name or a number)")
    _check_positions(where, raw, "insert_args", _ARGS_TEXT_RE, "argument text (names or numbers, ', '-separated)")
    _check_moves(where, raw)
    if raw.get("args_for", "hip") not in ("hip", "roc"):
        raise MappingError(f"{where}: args_for must be 'hip' or 'roc'")
    if "defaults_in_hip" in raw and "default_args" not in raw:
        raise MappingError(f"{where}: defaults_in_hip without default_args")


def _check_names(where: str, raw: dict) -> None:
    """The names the converter writes into sources (`hip`, `roc`, `legacy`), and the CUDA name."""
    if raw["kind"] == "header":
        _check_header(where, raw)
    elif raw["kind"] in ("namespace", "type", "function") and "::" in raw["cuda"]:
        _check_qualified(where, raw)   # thrust::cuda, thrust::cuda_category, cub::DispatchScan
    elif not _IDENT_RE.fullmatch(raw["cuda"]):
        raise MappingError(f"{where}: {raw['cuda']!r} is not an identifier")
    elif "hip" in raw and not _IDENT_RE.fullmatch(raw["hip"]):
        raise MappingError(f"{where}: hip name {raw['hip']!r} is not an identifier")
    if raw["kind"] != "header" and "roc" in raw and not _ROC_NAME_RE.fullmatch(raw["roc"]):
        raise MappingError(f"{where}: roc name {raw['roc']!r} is not a (qualified) name")
    if "legacy" in raw and not _IDENT_RE.fullmatch(raw["legacy"]):
        raise MappingError(f"{where}: legacy name {raw['legacy']!r} is not an identifier")


def _check_header(where: str, raw: dict) -> None:
    """Include paths: `cuda` as the code writes it, `hip` and `roc` as the converter will ("" for
    `hip`: HIP needs no include, the directive goes)."""
    for key in ("cuda", "hip", "roc"):
        value = raw.get(key)
        if value is not None and not _HEADER_RE.fullmatch(value) and not (key == "hip" and value == ""):
            raise MappingError(f"{where}: {key} header {value!r} is not an include path (letters, digits, "
                               f"'_.+-' and '/' between them)")


def _check_qualified(where: str, raw: dict) -> None:
    """thrust::cuda -> thrust::hip: only the innermost name is renamed. A library's member
    (cub::DispatchScan, a type; thrust::cuda_category, a function) is matched only so qualified:
    a project's own DispatchScan or cuda_category is not the library's."""
    cuda, hip = raw["cuda"], raw.get("hip")
    if not _QUALIFIED_RE.fullmatch(cuda):
        raise MappingError(f"{where}: {cuda!r} is not a qualified name")
    if hip is not None and (not _QUALIFIED_RE.fullmatch(hip) or hip.rsplit("::", 1)[0] != cuda.rsplit("::", 1)[0]):
        raise MappingError(f"{where}: hip name {hip!r} must keep the enclosing namespaces of {cuda!r}")


def _check_positions(where: str, raw: dict, key: str, value_re: re.Pattern, what: str, first: int = 1) -> None:
    """`{ "N" = "text" }` with N >= first and every text matching `value_re`."""
    if key not in raw:
        return
    table = raw[key]
    if (not isinstance(table, dict) or not table
            or any(not _POSITION_RE.fullmatch(k) or int(k) < first or not isinstance(v, str)
                   or not value_re.fullmatch(v)
                   for k, v in table.items())):
        raise MappingError(f"{where}: {key} must map argument numbers to {what}")


def _check_moves(where: str, raw: dict) -> None:
    for key, fields in (("move_args", ("from", "before", "count")), ("copy_args", ("from", "before"))):
        items = raw.get(key, [{f: 1 for f in fields}])
        if (not isinstance(items, list) or not items
                or any(not isinstance(i, dict) or set(i) - set(fields) or "from" not in i or "before" not in i
                       or any(type(v) is not int or v < 1 for v in i.values()) for i in items)):
            raise MappingError(f"{where}: {key} must be a list of {{ {', '.join(fields)} }} "
                               f"records of positive integers")
