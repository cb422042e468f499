"""Project configuration: `[tool.portkit]` in pyproject.toml, or portkit.toml, shared by audit and check.

Found from the files a command is given, as ruff finds it: the nearest directory above the folder
they all lie in that holds either file, stopping at a `.git` (for_paths); or the one file
`--config FILE` names. The gate reads it from the version it compares with (find_in).
Keys (all optional; command-line flags override):

    fail-on = "high"                 # check's and audit's --fail-on
    select = ["PK2", "PK301"]        # --select
    ignore = ["PK203"]               # --ignore
    baseline = ".portkit-baseline.json"
    exclude = ["third_party/**", "*.pb.cc"]   # glob patterns on paths relative to the root
    rocm = "6.2"                     # --rocm
    amd-macros = ["GGML_USE_HIP"]    # macros that select the project's AMD build (docs/platforms.md)
    mappings = ["cuda_wrappers.toml"]   # the project's own mapping files, relative to this file's
                                     # folder (docs/mapping-format.md, "Project mapping files")
    respect-gitignore = false        # also take the files git ignores (default: git's file set)
    port-style = "one-way"           # audit's --port-style: the estimate's headline (one-way, both-vendors)

An unknown key or a wrong type is an error (exit 2), so a typo never silently disables a rule.
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from ..core.errors import PortkitError
from ..core.tables.mappings import Version, parse_version

DEFAULT_BASELINE = ".portkit-baseline.json"
SEVERITY_NAMES = ("blocker", "high", "medium", "low", "info")
KNOWN = ("amd-macros", "baseline", "exclude", "fail-on", "ignore", "mappings", "port-style", "respect-gitignore", "rocm",
         "select")
# Every value is full-matched (never `^...$`, which takes a trailing newline), at its type.
_MACRO_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_RE = re.compile(r"[A-Za-z0-9]+")            # a rule code or prefix (PK3, PK301) or `all`
_PATH_RE = re.compile(r"[^\x00-\x1f\x7f]+")     # a path or pattern: one line, no control characters


@dataclass(frozen=True)
class Config:
    root: Path | None = None          # where the configuration file is (None: no file)
    source: str = ""                  # "pyproject.toml [tool.portkit]" or "portkit.toml"
    fail_on: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    baseline: str = DEFAULT_BASELINE
    exclude: tuple[str, ...] = field(default_factory=tuple)
    rocm: str | None = None
    amd_macros: tuple[str, ...] = field(default_factory=tuple)   # the project's AMD selector macros
    mappings: tuple[str, ...] = field(default_factory=tuple)     # its mapping files, relative to root
    respect_gitignore: bool = True   # in a git work tree, the files git would take (project/ignored.py)
    port_style: str = ""             # the estimate's port style (one-way, both-vendors; "": by the tree)

    @property
    def path(self) -> Path | None:
        """The file the configuration was read from (None: none, the defaults)."""
        return None if self.root is None else self.root / self.source.removesuffix(" [tool.portkit]")

    def excluded(self, rel: str) -> bool:
        """True when a root-relative path matches an `exclude` pattern (`dir/**` covers the tree)."""
        return any(fnmatch.fnmatchcase(rel, pattern) or
                   (pattern.endswith("/**") and (rel + "/").startswith(pattern[:-2]))
                   for pattern in self.exclude)


def inside_relative(path: str) -> bool:
    """A relative path that cannot leave the directory it is relative to (the baseline's)."""
    pure = PurePosixPath(path.replace("\\", "/"))
    return bool(path) and "\0" not in path and not pure.is_absolute() and ".." not in pure.parts \
        and not (len(path) > 1 and path[1] == ":")


def find(start: Path | None = None) -> Config:
    """The configuration that applies at `start` (default: the working directory)."""
    here = (start or Path.cwd()).absolute()
    for directory in (here, *here.parents):
        portkit_toml = directory / "portkit.toml"
        pyproject = directory / "pyproject.toml"
        if portkit_toml.is_file():
            return _parse(directory, portkit_toml, _read(portkit_toml), "portkit.toml")
        if pyproject.is_file():
            table = _portkit_table(pyproject, _read(pyproject))
            if table is not None:
                return _parse(directory, pyproject, table, "pyproject.toml [tool.portkit]")
        if (directory / ".git").exists():
            break
    return Config()


def for_paths(paths: list[Path], given: Path | None = None) -> Config:
    """The configuration of the files a command is given, as ruff finds it: the nearest one above
    the folder they all lie in, wherever the command runs from (from the working directory, a run
    from outside the repository read none: no team mapping file, other findings), or the one file
    `--config` names."""
    if given is not None:
        return read_file(given)
    bases = [p.absolute() if p.is_dir() else p.absolute().parent for p in paths]
    try:
        start = Path(os.path.commonpath([str(b) for b in bases])) if bases else None
    except ValueError:   # paths on different drives share no folder: each would have its own
        start = None
    return find(start)


def read_file(path: Path) -> Config:
    """--config FILE: a portkit.toml, or a pyproject.toml with a [tool.portkit] table (a file of
    any other name is read as portkit.toml is). Its folder is the root its paths are relative to."""
    path = path.absolute()
    if not path.is_file():
        raise PortkitError(f"{path}: --config: no such file")
    doc = _read(path)
    if path.name != "pyproject.toml":
        return _parse(path.parent, path, doc, path.name)
    table = _portkit_table(path, doc)
    if table is None:
        raise PortkitError(f"{path}: --config: no [tool.portkit] table")
    return _parse(path.parent, path, table, "pyproject.toml [tool.portkit]")


def candidates(root: Path, start: Path) -> list[str]:
    """The root-relative configuration files find_in() may read for `start`, nearest first."""
    try:
        rel = start.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        rel = "."
    parts = [] if rel == "." else rel.split("/")
    out = []
    for depth in range(len(parts), -1, -1):
        directory = "/".join(parts[:depth])
        out += [f"{directory}/{name}" if directory else name for name in ("portkit.toml", "pyproject.toml")]
    return out


def find_in(root: Path, start: Path, read: Callable[[str], bytes | None], where: str) -> Config:
    """The configuration that applies at `start` in another version of the repository at `root`
    (a commit, the index): the same walk as find(), up to the root, with files read by
    `read(root-relative path)` (None: no such file). `where` names that version in messages."""
    for path in candidates(root, start):
        data = read(path)
        if data is None:
            continue
        directory, _, name = path.rpartition("/")
        shown = Path(f"{path} ({where})")
        table = _loads(shown, data)
        if name == "pyproject.toml":
            table = _portkit_table(shown, table)
            if table is None:
                continue
        return _parse(root / directory, shown, table,
                      "portkit.toml" if name == "portkit.toml" else "pyproject.toml [tool.portkit]")
    return Config()


def _read(path: Path) -> dict:
    try:
        from ..core.files import read_regular  # a FIFO or device named pyproject.toml never blocks the run
        data = read_regular(path, follow=True)
    except OSError as exc:
        raise PortkitError(f"{path}: cannot read the configuration: {exc}") from None
    return _loads(path, data)


def _loads(path: Path, data: bytes) -> dict:
    from ..core.tables.toml_text import untrusted
    try:
        return untrusted(data.decode("utf-8"))
    except ValueError as exc:   # not UTF-8, not TOML, too deep, too long a number
        raise PortkitError(f"{path}: cannot read the configuration: {exc}") from None


def _portkit_table(path: Path, doc: dict) -> dict | None:
    """The [tool.portkit] table of a pyproject.toml, None when it has none; a `tool` or a
    `tool.portkit` that is not a table is an error, never a silent "no configuration"."""
    tool = doc.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise PortkitError(f"{path}: `tool` must be a table ([tool]), not {_toml_type(tool)}")
    table = tool.get("portkit")
    if table is not None and not isinstance(table, dict):
        raise PortkitError(f"{path}: `tool.portkit` must be a table ([tool.portkit]), not {_toml_type(table)}")
    return table


def _toml_type(value: object) -> str:
    """A TOML value's type as TOML names it."""
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
             dict: "a table"}
    return names.get(type(value), "a date or time")


def _did_you_mean(unknown: list[str]) -> str:
    """A "did you mean fail-on? " for a key typed as Python spells it (fail_on), or nearly."""
    import difflib
    close = [m for key in unknown for m in difflib.get_close_matches(key.replace("_", "-").lower(), KNOWN, 1, 0.75)]
    return f"did you mean {', '.join(dict.fromkeys(close))}? " if close else ""


def _parse(root: Path, path: Path, table: dict, source: str) -> Config:
    unknown = sorted(set(table) - set(KNOWN))
    if unknown:
        raise PortkitError(f"{path}: unknown portkit setting {', '.join(unknown)} "
                           f"({_did_you_mean(unknown)}known: {', '.join(KNOWN)})")
    lists = {key: _strings(path, table, key) for key in ("select", "ignore", "exclude", "amd-macros", "mappings")}
    for macro in lists["amd-macros"]:
        if not _MACRO_RE.fullmatch(macro):
            raise PortkitError(f"{path}: `amd-macros`: {macro!r:.80} is not a macro name")
    for key in ("select", "ignore"):
        for code in lists[key]:
            _check_code(path, key, code)
    for rel in lists["mappings"]:
        if not inside_relative(rel):   # one line without control characters: _strings checked it
            raise PortkitError(f"{path}: `mappings`: {rel!r:.200} must be a relative path inside the project "
                               f"(no `..`, not absolute)")
    respect_gitignore = table.get("respect-gitignore", True)
    if not isinstance(respect_gitignore, bool):
        raise PortkitError(f"{path}: `respect-gitignore` must be true or false")
    fail_on = table.get("fail-on")
    if fail_on is not None and (not isinstance(fail_on, str) or fail_on not in SEVERITY_NAMES):
        raise PortkitError(f"{path}: `fail-on` must be one of {', '.join(SEVERITY_NAMES)}")
    for key in ("baseline", "rocm"):
        if key in table and not isinstance(table[key], str):
            raise PortkitError(f"{path}: `{key}` must be a string")
    if "baseline" in table and (not inside_relative(table["baseline"]) or not _PATH_RE.fullmatch(table["baseline"])):
        raise PortkitError(f"{path}: `baseline` must be a relative path inside the project "
                           f"(no `..`, not absolute), got {table['baseline']!r:.200}")
    if "rocm" in table:
        rocm_release(table["rocm"], f"{path}: `rocm`")
    if table.get("port-style", "one-way") not in ("one-way", "both-vendors"):
        raise PortkitError(f"{path}: `port-style` must be \"one-way\" or \"both-vendors\"")
    return Config(root=root, source=source, fail_on=fail_on, select=lists["select"], ignore=lists["ignore"],
                  baseline=table.get("baseline", DEFAULT_BASELINE), exclude=lists["exclude"],
                  rocm=table.get("rocm"), amd_macros=lists["amd-macros"], mappings=lists["mappings"],
                  respect_gitignore=respect_gitignore, port_style=table.get("port-style", ""))


def _strings(path: Path, table: dict, key: str) -> tuple[str, ...]:
    """A list of strings (one string is a list of one), none empty and none with a control character."""
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and _PATH_RE.fullmatch(v) for v in value):
        raise PortkitError(f"{path}: `{key}` must be a list of strings, each a non-empty line of text")
    return tuple(value)


def _check_code(path: Path, key: str, code: str) -> None:
    """A rule code or prefix that names at least one rule, as --select and --ignore take them."""
    from ..rules import expand   # the codes, without importing the rule modules
    if not _CODE_RE.fullmatch(code):
        raise PortkitError(f"{path}: `{key}`: {code!r:.80} is not a rule code or prefix (PK3, PK301, all)")
    try:
        expand([code])
    except PortkitError as exc:
        raise PortkitError(f"{path}: `{key}`: {exc}") from None


# The oldest release a port can target: ROCm before 5.0 is out of AMD's support, and the tables'
# records before it are history (when a name appeared), not a target anyone builds for.
OLDEST_TARGET = (5, 0)


@lru_cache(maxsize=1)
def known_releases() -> tuple[tuple[int, int], ...]:
    """The ROCm minor releases --rocm accepts: from OLDEST_TARGET to the newest the tables know,
    as the tables name them (every release a HIP name first appeared in; 5.0 ... 7.2 today).
    Computed once: a command validates --rocm and the configuration's `rocm`, each over every name."""
    from ..core.tables.mappings import default_db   # the tables decide which releases there are
    db = default_db()
    seen = {m.hip_since[:2] for m in (*db.names.values(), *db.headers.values()) if m.hip_since}
    return tuple(sorted(v for v in seen if v >= OLDEST_TARGET))


def rocm_release(rocm: str | Version | None, given: str = "--rocm") -> Version | None:
    """--rocm X.Y (or a release already parsed); None: the newest the tables know. A release the
    tables do not know (3.0, 6.9, 99.1) is refused with the list of those they do: targeting one
    would silently convert for a release nobody ships. A later release of the newest major (7.3
    when the tables end at 7.2) is accepted: ROCm ships them more often than portkit's tables.
    `given` names where the value comes from in messages (the configuration: "FILE: `rocm`")."""
    if rocm is None or isinstance(rocm, tuple):
        return rocm
    try:
        version = parse_version(rocm) if rocm else None
    except ValueError as exc:
        raise PortkitError(f"{given}: {exc}") from None
    if version is not None:
        known = known_releases()
        newest = known[-1]
        # a newer release of the newest major is one the tables predate: converted as of the newest
        if version[:2] not in known and not (version[0] == newest[0] and version[:2] > newest):
            raise PortkitError(f"{given} {rocm}: not a ROCm release portkit knows (known: "
                               f"{', '.join(f'{a}.{b}' for a, b in known)}, or a {newest[0]}.x after "
                               f"{newest[0]}.{newest[1]})")
    return version
