"""Load and validate the mapping tables (mappings/*.toml) and answer "what does this CUDA name become?".

The tables are data; this module only reads them. The format is documented in
docs/mapping-format.md; every rule there is enforced here and in entry_checks.py (a record's
fields), so a typo in a table is an error naming the file and the entry instead of a silently
wrong conversion.
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass, fields
from functools import lru_cache
from pathlib import Path

from ..errors import MappingError
from .toml_text import untrusted
from .entry_checks import TEXT_RE, VERSION_FIELDS, check_entry

NOT_TABLES = {"effort", "ecosystem", "rewrites", "build", "builtins", "platforms", "polyfills", "hip_device_functions",
              "roc_datatypes", "hopper_features", "targets", "coop_members", "torch_hipify"}
FILE_KEYS = {"schema", "family", "title", "source", "prefer_roc", "roc_library", "entries"}
# a family is a name (`team`, `cuda_wrappers`): listed, compared, and marked `team *` by `portkit mappings`
_FAMILY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
# full-matched, ASCII digits, a few of each: "6.2\n" or "6.²" is no version, nor one int() refuses
_VERSION_RE = re.compile(r"[0-9]{1,6}\.[0-9]{1,6}(\.[0-9]{1,6})?")

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    """'5.2' -> (5, 2, 0); raises ValueError on anything else."""
    if not isinstance(text, str) or not _VERSION_RE.fullmatch(text):
        raise ValueError(f"not a version: {text!r:.40} (expected X.Y or X.Y.Z)")
    parts = [int(p) for p in text.split(".")]
    return (parts[0], parts[1], parts[2] if len(parts) > 2 else 0)


def format_version(v: Version) -> str:
    return f"{v[0]}.{v[1]}" if v[2] == 0 else f"{v[0]}.{v[1]}.{v[2]}"


@dataclass(frozen=True)
class Mapping:
    """One record of a table: a CUDA name and what HIP has for it."""

    cuda: str
    kind: str
    status: str
    family: str
    hip: str | None = None
    roc: str | None = None
    hip_since: Version | None = None
    hip_deprecated: Version | None = None
    hip_removed: Version | None = None
    roc_since: Version | None = None
    cuda_since: Version | None = None
    cuda_deprecated: Version | None = None
    cuda_removed: Version | None = None
    note: str = ""
    symbol_arg: int = 0
    drop_args: tuple[int, ...] = ()
    cast_args: tuple[tuple[int, str], ...] = ()   # (1-based argument, type to reinterpret_cast to)
    arity_alias: tuple[tuple[int, str], ...] = ()  # (argument count, CUDA entry a call of that arity is)
    roc_note: str = ""        # how the roc function's arguments differ (reported as PK004 under --roc)
    roc_library: str = ""     # the family's roc library (rocBLAS...): under --roc, no `roc` = no conversion
    legacy: str | None = None           # the name releases before legacy_until take instead of hip
    legacy_until: Version | None = None
    # argument rewrites (docs/mapping-format.md, "Call arguments"); positions are CUDA's, 1-based
    insert_args: tuple[tuple[int, str], ...] = ()   # new argument written before argument N
    default_args: tuple[tuple[int, str], ...] = ()  # CUDA default arguments HIP lacks, filled in
    replace_args: tuple[tuple[int, str], ...] = ()  # argument N replaced by a constant
    move_args: tuple[tuple[int, int, int], ...] = ()  # (from, before, count): arguments moved
    copy_args: tuple[tuple[int, int], ...] = ()       # (from, before): an argument copied
    defaults_in_hip: Version | None = None   # the ROCm whose HIP declares default_args itself
    args_for: str = "hip"                    # the argument rewrites apply to the hip or the roc name
    origin: str = ""     # the project mapping file the record comes from ("": shipped; project_tables.py)

    @property
    def rewrites_args(self) -> bool:
        return bool(self.symbol_arg or self.drop_args or self.cast_args or self.insert_args
                    or self.default_args or self.replace_args or self.move_args or self.copy_args)

    def resolve(self, target: Version, prefer_roc: bool = False,
                legacy: bool = True) -> tuple[str | None, str, str]:
        """(name to write for ROCm `target`, problem, reason); problem is "" when it converts,
        else "missing", "newer" or "removed", and the name is None. `legacy=False`: the caller
        knows the name is not used where the legacy API is (an argument of another library)."""
        if prefer_roc and self.roc_library:
            return self._resolve_roc(target)
        if prefer_roc and self.roc and (self.roc_since is None or self.roc_since <= target):
            return self.roc, "", ""
        if legacy and self.legacy and self.legacy_until is not None and target < self.legacy_until:
            return self.legacy, "", ""
        if self.hip is None:   # "" (a header): HIP needs no include for it, the include goes
            reason = f"{self.cuda} has no HIP equivalent"
            return None, "missing", f"{reason}: {self.note}" if self.note else reason
        if self.hip_removed is not None and self.hip_removed <= target:
            return None, "removed", (f"{self.hip} (for {self.cuda}) was removed in ROCm "
                                     f"{format_version(self.hip_removed)}")
        if self.hip_since is not None and self.hip_since > target:
            return None, "newer", (f"{self.cuda} -> {self.hip} needs ROCm {format_version(self.hip_since)}, "
                                   f"the target is ROCm {format_version(target)}")
        return self.hip, "", ""

    def _resolve_roc(self, target: Version) -> tuple[str | None, str, str]:
        """--roc in a family ported to a roc library: as hipify-clang --roc, a name that library
        lacks is left (a hip* name would mix two APIs whose handles and types differ)."""
        if not self.roc:
            other = f"; without --roc it converts to {self.hip}" if self.hip else ""
            return None, "missing", f"{self.cuda} has no {self.roc_library} equivalent{other}"
        if self.roc_since is not None and self.roc_since > target:
            return None, "newer", (f"{self.cuda} -> {self.roc} needs ROCm {format_version(self.roc_since)}, "
                                   f"the target is ROCm {format_version(target)}")
        return self.roc, "", ""

    def conversion_note(self, name: str) -> str:
        """What the reader must check when `name` was written for this CUDA name ("" if nothing)."""
        if name == self.roc and name != self.hip:
            return self.roc_note
        return self.note if self.status == "partial" else ""


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    source: str
    path: str
    count: int
    project: bool = False   # from a project mapping file (path is that file), not mappings/


class MappingDB:
    """All tables, indexed by CUDA name (identifiers) and by include path (headers)."""

    def __init__(self, names: dict[str, Mapping], headers: dict[str, Mapping], families: list[Family]):
        self.names = names
        self.headers = headers
        # the scanner looks names up by the bytes it slices from the source
        self.names_by_bytes = {k.encode("ascii"): v for k, v in names.items()}
        # qualified namespaces by their innermost name: b"cuda" -> {b"thrust::cuda": mapping}
        self.qualified: dict[bytes, dict[bytes, Mapping]] = {}
        for key, mapping in self.names_by_bytes.items():
            if b"::" in key:
                self.qualified.setdefault(key.rsplit(b"::", 1)[1], {})[key] = mapping
        self.families = families
        versions = [m.hip_since for m in (*names.values(), *headers.values()) if m.hip_since]
        self.newest: Version = max(versions) if versions else (0, 0, 0)

    def __len__(self) -> int:
        return len(self.names) + len(self.headers)


def _make_mapping(where: str, family: str, raw: dict, roc_library: str = "") -> Mapping:
    check_entry(where, raw)
    versions = {}
    for key in VERSION_FIELDS:
        if key in raw:
            try:
                versions[key] = parse_version(raw[key])
            except ValueError as exc:
                raise MappingError(f"{where}: field {key!r}: {exc}") from None
    return Mapping(
        cuda=raw["cuda"], kind=raw["kind"], status=raw["status"], family=family,
        hip=raw.get("hip"), roc=raw.get("roc"), note=raw.get("note", ""),
        legacy=raw.get("legacy"),
        symbol_arg=raw.get("symbol_arg", 0), drop_args=tuple(raw.get("drop_args", ())),
        cast_args=tuple(sorted((int(k), v) for k, v in raw.get("cast_args", {}).items())),
        arity_alias=tuple(sorted((int(k), v) for k, v in raw.get("arity_alias", {}).items())),
        insert_args=_numbered(raw, "insert_args"), default_args=_numbered(raw, "default_args"),
        replace_args=_numbered(raw, "replace_args"),
        move_args=tuple((m["from"], m["before"], m.get("count", 1)) for m in raw.get("move_args", ())),
        copy_args=tuple((m["from"], m["before"]) for m in raw.get("copy_args", ())),
        args_for=raw.get("args_for", "hip"), roc_note=raw.get("roc_note", ""), roc_library=roc_library,
        **versions,
    )


def _numbered(raw: dict, key: str) -> tuple[tuple[int, str], ...]:
    return tuple(sorted((int(k), v) for k, v in raw.get(key, {}).items()))


def _load_file(path: Path) -> tuple[Family, list[Mapping]]:
    shown = f"mappings/{path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MappingError(f"{shown}: {exc}") from None
    return parse_table(shown, text, path.stem)


def parse_table(shown: str, text: str, stem: str | None = None) -> tuple[Family, list[Mapping]]:
    """One table's family and records, every rule of docs/mapping-format.md checked; errors name
    `shown` and the entry. `stem`: the family must equal it (shipped tables; a project's own
    mapping file names its family freely, project_tables.py)."""
    try:
        doc = untrusted(text)
    except ValueError as exc:
        raise MappingError(f"{shown}: {exc}") from None
    unknown = set(doc) - FILE_KEYS
    if unknown:
        raise MappingError(f"{shown}: unknown top-level key {sorted(unknown)[0]!r}")
    if stem is None and isinstance(doc.get("family"), str):   # a project's own file: only what it maps is asked for
        doc = {"title": doc["family"], "source": shown, **doc}
    for key in ("schema", "family", "title", "source", "entries"):
        if key not in doc:
            raise MappingError(f"{shown}: missing top-level key {key!r}")
    _check_file_keys(shown, doc, stem)
    entries = []
    for index, raw in enumerate(doc["entries"], start=1):
        if not isinstance(raw, dict):
            raise MappingError(f"{shown}: entry {index}: not a record")
        cuda = raw.get("cuda")
        where = f"{shown}: entry {index} ({cuda if isinstance(cuda, str) else '?'})"
        entries.append(_make_mapping(where, doc["family"], raw, doc.get("roc_library", "")))
    family = Family(doc["family"], doc["title"], doc["source"], shown, len(entries))
    return family, entries


def _check_file_keys(shown: str, doc: dict, stem: str | None) -> None:
    """The keys of a table besides its entries, each of its type and pattern."""
    if type(doc["schema"]) is not int or doc["schema"] != 1:   # a TOML `true` or 1.0 equals 1
        raise MappingError(f"{shown}: unsupported schema {doc['schema']!r:.40} (this portkit reads 1)")
    for key in ("family", "title", "source", "roc_library"):
        if not isinstance(doc.get(key, ""), str) or not TEXT_RE.fullmatch(doc.get(key, "")):
            raise MappingError(f"{shown}: {key!r} must be a string (one line of text)")
    if not _FAMILY_RE.fullmatch(doc["family"]):
        raise MappingError(f"{shown}: family {doc['family']!r:.80} is not a name (letters, digits, '_.+-')")
    if stem is not None and doc["family"] != stem:
        raise MappingError(f"{shown}: family {doc['family']!r} must equal the file name {stem!r}")
    if not isinstance(doc.get("prefer_roc", False), bool):
        raise MappingError(f"{shown}: 'prefer_roc' must be true or false")
    if not isinstance(doc["entries"], list):
        raise MappingError(f"{shown}: 'entries' must be a list of records")


def load_tables(directory: Path) -> MappingDB:
    """Read and validate every table in `directory`; duplicates within or across files are errors."""
    names: dict[str, Mapping] = {}
    headers: dict[str, Mapping] = {}
    families = []
    paths = sorted(p for p in directory.glob("*.toml") if p.stem not in NOT_TABLES)
    if not paths:
        raise MappingError(f"{directory}: no mapping tables found")
    for path in paths:
        family, entries = _load_file(path)
        families.append(family)
        for m in entries:
            index = headers if m.kind == "header" else names
            if m.cuda in index:
                raise MappingError(f"{family.path}: duplicate CUDA name {m.cuda!r} "
                                   f"(also in mappings/{index[m.cuda].family}.toml)")
            index[m.cuda] = m
    for m in names.values():
        for _, alias in m.arity_alias:
            if alias not in names:
                raise MappingError(f"mappings/{m.family}.toml: {m.cuda}: arity_alias names "
                                   f"{alias!r}, which no table has")
    return MappingDB(names, headers, families)


def target_release(rocm: "Version | None") -> "Version":
    """The ROCm release a run targets: the one the user gave, else the newest the shipped tables
    know (a project's mapping files never move it: project_tables.merged keeps their `newest`).
    Called by the settings alone (Options.target), so that "newest" is decided in one place."""
    return rocm or default_db().newest


def tables_dir() -> Path:
    """Where the shipped tables are: inside the package when installed, mappings/ in a checkout."""
    return data_dir("portkit._mappings", "mappings")


def data_dir(package: str, checkout_name: str) -> Path:
    """A data folder shipped as a package (wheel, editable install) or beside the package (checkout)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return Path(__file__).resolve().parents[3] / checkout_name


def load_tables_cached(directory: Path) -> MappingDB:
    """load_tables, kept as plain JSON (datacache.py) keyed by the tables' sizes and times and by
    this module's source: parsing 10,000 records takes ~0.4 s, reading the cache ~0.1 s."""
    from .. import datacache
    from . import entry_checks
    code = (Path(__file__), Path(entry_checks.__file__), Path(datacache.__file__))
    return datacache.cached("tables", sorted(directory.glob("*.toml")), code, lambda: load_tables(directory),
                            _plain, _from_plain)


_DEFAULTS = {f.name: f.default for f in fields(Mapping)}


def _plain(db: MappingDB) -> dict:
    """The tables as JSON data: each record with only its fields that differ from the default."""
    def record(m: Mapping) -> dict:
        return {k: v for k, v in ((k, getattr(m, k)) for k in _DEFAULTS) if v != _DEFAULTS[k]}
    return {"families": [astuple(f) for f in db.families], "names": [record(m) for m in db.names.values()],
            "headers": [record(m) for m in db.headers.values()]}


def _from_plain(doc: dict) -> MappingDB:
    """The tables back from their JSON form. 10,000 records through the frozen dataclass's
    __init__ (a setattr per field) took 0.27 s of every `portkit check`; the records were
    validated when the cache was written, so each is made from its own fields alone (JSON's
    lists as tuples): a field it does not hold reads the dataclass's default, a class attribute."""
    def record(r: dict) -> Mapping:
        for k, v in r.items():
            if type(v) is list:   # a version, or a tuple of argument tuples
                r[k] = tuple(map(tuple, v)) if k in _NESTED else tuple(v)
        m = object.__new__(Mapping)
        object.__setattr__(m, "__dict__", r)
        return m
    names = {r["cuda"]: record(r) for r in doc["names"]}
    headers = {r["cuda"]: record(r) for r in doc["headers"]}
    return MappingDB(names, headers, [Family(*f) for f in doc["families"]])


# the fields whose values are tuples of tuples (the argument rewrites); every other list is flat
_NESTED = frozenset(("cast_args", "arity_alias", "insert_args", "default_args", "replace_args",
                     "move_args", "copy_args"))


@lru_cache(maxsize=None)
def default_db() -> MappingDB:
    return load_tables_cached(tables_dir())
