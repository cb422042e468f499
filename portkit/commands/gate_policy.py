"""The commit gate's policy: the configuration and the baseline `portkit check` applies, read from
the version of the repository the change is compared with, never from the change itself.

A pull request that adds `ignore = ["PK"]`, an `exclude` of the file it changes, a record in a
project mapping file that calls its non-portable name portable, or a baseline entry for its own
new hazard must not pass its own gate. So `check --diff-base REV` (and
pre-commit's --from-ref) reads both from REV, and `check --staged` (the commit being made) from
the index, where they are what the committer stages, and a change of policy the diff makes is
reported as a finding of its own (PK902). The project mapping files the configuration names
(`mappings`) are policy too: read from the same version, their changes reported. The baseline's
path must stay inside the project root and is never read or written through a symbolic link.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..project import baseline as baseline_file
from ..project import config, git, mapping_files
from ..core.errors import PortkitError
from ..core.files import link_on_path
from ..core.findings import Finding, fingerprint
from ..engine.codes import Code
from ..core.tables.project_tables import ProjectTable, changed_names


@dataclass(frozen=True)
class Policy:
    config: config.Config
    accepted: Counter          # baseline: fingerprint -> accepted count
    baseline_rel: str          # the baseline's path relative to the root
    config_rel: str            # the configuration file's path relative to the root ("": none)
    where: str                 # "the index", "commit 1a2b3c4d", "the work tree"
    problem: str = ""          # why this version's policy could not be read (the change's side only)
    tables: tuple[ProjectTable, ...] = ()   # the project mapping files `mappings` names, as in this version


def baseline_rel(root: Path, cfg: config.Config, explicit: Path | None, cwd: Path) -> str:
    """The baseline's root-relative path: --baseline FILE, else the configuration's `baseline`
    (relative to the configuration's directory). A user error when it leaves the root."""
    if explicit is not None:
        where = os.path.normpath(os.path.join(cwd, explicit))
        shown = str(explicit)
    else:
        where = os.path.normpath(os.path.join(cfg.root or root, cfg.baseline))
        shown = f"`baseline = {cfg.baseline!r:.80}` in {cfg.source or 'the configuration'}"
    # the folder resolved (a working directory reached through a link), the name itself not: a
    # baseline that is a link is refused by safe_path, never silently replaced by its target
    where = os.path.join(os.path.realpath(os.path.dirname(where)), os.path.basename(where))
    rel = os.path.relpath(where, os.path.realpath(root))
    if rel == "." or not config.inside_relative(rel):
        raise PortkitError(f"{shown}: the baseline must be inside the project root {root}; not read or written")
    return Path(rel).as_posix()


def safe_path(root: Path, rel: str) -> Path:
    """root/rel, refused when the file or any folder between the root and it is a symbolic link:
    a committed `.portkit-baseline.json -> ~/.bashrc` must never be read or written through."""
    try:
        link = link_on_path(root, rel)
    except OSError as exc:
        raise PortkitError(f"{root / rel}: cannot read: {exc.strerror or exc}") from None
    if link is not None:
        raise PortkitError(f"{link}: is a symbolic link; the baseline is never read or written through "
                           f"one (replace it with the file itself)")
    return root / rel


def from_worktree(root: Path, cwd: Path, cfg: config.Config, explicit: Path | None) -> Policy:
    rel = baseline_rel(root, cfg, explicit, cwd)
    return Policy(cfg, baseline_file.load(safe_path(root, rel)), rel, _config_rel(root, cfg), "the work tree",
                  tables=mapping_files.read(cfg))


def from_version(root: Path, cwd: Path, rev: str | None, explicit: Path | None) -> Policy:
    """The policy of commit `rev`, or of the index when `rev` is None. Read as blobs (a symbolic
    link or submodule there reads as absent), with two git calls for the configuration files and
    two for the baseline (and two for the project mapping files, when the configuration names any)."""
    where = "the index" if rev is None else f"commit {rev[:12]}"
    configs = _blobs(root, rev, config.candidates(root, cwd))
    cfg = config.find_in(root, cwd, configs.get, where)
    rel = baseline_rel(root, cfg, explicit, cwd)
    data = _blobs(root, rev, [rel]).get(rel)
    accepted = Counter() if data is None else baseline_file.loads(data, f"{rel} ({where})")
    tables = mapping_files.read_in(root, cfg, lambda paths: _blobs(root, rev, paths), where)
    return Policy(cfg, accepted, rel, _config_rel(root, cfg), where, tables=tables)


def _blobs(root: Path, rev: str | None, paths: list[str]) -> dict[str, bytes]:
    found = git.regular_blobs(root, rev, paths)
    return git.blobs(root, found) if found else {}


def _config_rel(root: Path, cfg: config.Config) -> str:
    if cfg.root is None:
        return ""
    name = "portkit.toml" if cfg.source == "portkit.toml" else "pyproject.toml"
    return Path(os.path.relpath(cfg.root / name, root)).as_posix()


def changes(applied: Policy, proposed: Policy) -> list[str]:
    """What the change does to the policy, in words ("ignore + PK3", "3 findings accepted")."""
    if proposed.problem:
        return [proposed.problem]
    a, b = applied.config, proposed.config
    out = []
    for label, old, new in (("select", a.select, b.select), ("ignore", a.ignore, b.ignore),
                            ("exclude", a.exclude, b.exclude), ("amd-macros", a.amd_macros, b.amd_macros),
                            ("mappings", a.mappings, b.mappings)):
        added = [v for v in new if v not in old]
        removed = [v for v in old if v not in new]
        out += [f"{label} + {v}" for v in added] + [f"{label} - {v}" for v in removed]
    out += _tables_changed(applied.tables, proposed.tables)
    for label, old, new in (("fail-on", a.fail_on, b.fail_on), ("rocm", a.rocm, b.rocm),
                            ("baseline", applied.baseline_rel, proposed.baseline_rel)):
        if old != new:
            out.append(f"{label} {old or 'default'} -> {new or 'default'}")
    more = sum((proposed.accepted - applied.accepted).values())
    fewer = sum((applied.accepted - proposed.accepted).values())
    if more:
        out.append(f"{more} more finding{'s' if more != 1 else ''} accepted in {proposed.baseline_rel}")
    if fewer:
        out.append(f"{fewer} finding{'s' if fewer != 1 else ''} no longer accepted in {proposed.baseline_rel}")
    return out


def _tables_changed(old: tuple[ProjectTable, ...], new: tuple[ProjectTable, ...]) -> list[str]:
    """A project mapping file both versions name, with other records: "mappings team.toml changed:
    myCudaGraphLaunch" (a record the change adds, alters or removes)."""
    before = {t.shown: t.text for t in old}
    out = []
    for table in new:
        if table.shown in before and before[table.shown] != table.text:
            names = changed_names(before[table.shown], table.text, table.shown)
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            out.append(f"mappings {table.shown} changed" + (f": {shown}" if names else ""))
    return out


def changed_finding(applied: Policy, proposed: Policy, described: list[str], enforced: Policy) -> Finding:
    """PK902 for a change of policy (from `applied` to `proposed`), on the file that holds the
    changed setting; `enforced` is the policy the gate used for this run."""
    from ..rules import get

    rule = get(Code.GATE_POLICY_CHANGED)
    settings = [d for d in described if "accepted in" not in d]
    path = (proposed.config_rel or applied.config_rel) if settings else proposed.baseline_rel
    subject = "; ".join(described)
    message = f"this change alters the gate's policy ({subject}); this run applied the policy of {enforced.where}"
    return Finding(rule.code, rule.name, rule.severity, rule.category, path, 1, 1, 1, 1, message, "",
                   rule.fix, subject, fingerprint=fingerprint(rule.code, path, subject, ""))
