"""Reading a project's own mapping files: `[tool.portkit] mappings` and `--mappings FILE`.

The files are read here, once per run, into `ProjectTable`s that travel in `Options.mappings`
(core/tables/project_tables.py merges and validates them). A file the configuration names is
relative to the configuration file's folder and must stay in the project: no `..`, not absolute
(config.py), and never reached through a symbolic link, since the commit gate reads the same
file from a commit, where a link is not a file (gate_policy.py). A file given on the command
line is the user's own choice and is read where it is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from ..core.errors import PortkitError
from ..core.files import link_on_path, read_regular
from ..core.tables.project_tables import ProjectTable
from .config import Config

MAX_BYTES = 16 * 1024 * 1024   # every shipped table together is about 2 MB


def read(cfg: Config, given: Sequence[Path] = ()) -> tuple[ProjectTable, ...]:
    """The configuration's mapping files (in its order), then those given with --mappings; a file
    named twice is read once."""
    tables: list[ProjectTable] = []
    seen: set[str] = set()
    for rel in cfg.mappings:
        path = (cfg.root or Path.cwd()) / rel
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            tables.append(_configured(cfg, rel, path))
    return tuple(tables) + read_given(given, seen)


def read_given(given: Sequence[Path], seen: set[str] | Config | None = None) -> tuple[ProjectTable, ...]:
    """The files given with --mappings, read where they are (links followed: the user named them);
    those whose real path is in `seen` (or that the Config `seen` names) are left out."""
    if isinstance(seen, Config):
        seen = {os.path.realpath((seen.root or Path.cwd()) / rel) for rel in seen.mappings}
    seen = set() if seen is None else seen
    tables = []
    for path in given:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            tables.append(ProjectTable(str(path), _text(path, str(path), "given with --mappings", follow=True), True))
    return tuple(tables)


def _configured(cfg: Config, rel: str, path: Path) -> ProjectTable:
    shown = Path(rel).as_posix()
    named = f"named by `mappings` in {cfg.source}"
    try:
        link = link_on_path(cfg.root, rel) if cfg.root is not None else None
    except OSError as exc:
        raise PortkitError(f"{shown}: cannot read the project mapping file {named}: {exc.strerror or exc}") from None
    if link is not None:
        raise PortkitError(f"{shown}: {link} is a symbolic link; a mapping file {named} is read only as a plain "
                           f"file inside the project (the commit gate reads it from git, where a link is no file)")
    return ProjectTable(shown, _text(path, shown, named, follow=False))


def _text(path: Path, shown: str, named: str, follow: bool) -> str:
    try:
        data = read_regular(path, follow=follow)
    except OSError as exc:
        raise PortkitError(f"{shown}: cannot read the project mapping file {named}: "
                           f"{exc.strerror or exc}") from None
    return decode(data, shown)


def decode(data: bytes, shown: str) -> str:
    """A mapping file's text: UTF-8, and no larger than MAX_BYTES."""
    if len(data) > MAX_BYTES:
        raise PortkitError(f"{shown}: the project mapping file is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PortkitError(f"{shown}: the project mapping file is not UTF-8: {exc}") from None


def paths_in(root: Path, cfg: Config) -> dict[str, str]:
    """{root-relative path: shown name} of the files the configuration names (the gate reads them from git)."""
    out = {}
    for rel in cfg.mappings:
        where = os.path.normpath(os.path.join(cfg.root or root, rel))
        out[Path(os.path.relpath(where, root)).as_posix()] = Path(rel).as_posix()
    return out


def read_in(root: Path, cfg: Config, blobs: Callable[[list[str]], dict[str, bytes]],
            where: str) -> tuple[ProjectTable, ...]:
    """The configuration's mapping files as they are in another version of the repository (a
    commit, the index): `blobs(root-relative paths)` reads the regular files among them."""
    named = paths_in(root, cfg)
    found = blobs(list(named)) if named else {}
    tables = []
    for rel, shown in named.items():
        if rel not in found:
            raise PortkitError(f"{shown}: the project mapping file named by `mappings` in {cfg.source} "
                               f"is not a file in {where}")
        tables.append(ProjectTable(shown, decode(found[rel], shown)))
    return tuple(tables)
