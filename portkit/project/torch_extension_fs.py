"""The file-system calls a setup.py makes to list its sources, answered from the walked tree.

torch_extension_eval.py evaluates a setup.py without running it; where the file asks the disk
(`glob.glob("csrc/*.cu")`, `os.listdir(d)`, `os.walk(d)`, `osp.exists(p)`, `Path(d).glob(...)`),
the answer comes from the files portkit walked, relative to the setup.py's folder, as torch's
build sees them when it runs there (`__file__`'s folder is "" here: `osp.dirname(osp.abspath(
__file__))` joined with "csrc" is "csrc"). Nothing touches the disk.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass


def norm(path: str) -> str:
    """A path relative to the setup.py's folder, "" for the folder itself (abspath of it too)."""
    out = posixpath.normpath(path) if path else ""
    return "" if out == "." else out


@dataclass(frozen=True)
class PathValue:
    """A pathlib.Path the file builds (`Path(__file__).parent / "csrc"`)."""

    p: str

    def attribute(self, name: str):
        parts = self.p.rsplit("/", 1)
        base = parts[-1]
        stem, dot, suffix = base.rpartition(".")
        values = {"parent": PathValue(parts[0] if len(parts) > 1 else ""), "name": base,
                  "stem": stem if dot and stem else base, "suffix": dot + suffix if dot and stem else ""}
        return values.get(name)


class Tree:
    """The walked files under one folder (the setup.py's), as the calls above see them."""

    def __init__(self, files: set[str]):
        self.files = files
        self.dirs = {""} | {posixpath.dirname(f) for f in files}
        for d in list(self.dirs):
            while d:
                d = posixpath.dirname(d)
                self.dirs.add(d)

    def exists(self, path: str, kind: str = "") -> bool:
        p = norm(path)
        return (kind != "dir" and p in self.files) or (kind != "file" and p in self.dirs)

    def children(self, folder: str) -> list[str]:
        d = norm(folder)
        return sorted({p[len(d) + 1 if d else 0:].split("/", 1)[0] for p in self.files | self.dirs
                       if p and (not d or p.startswith(d + "/"))})

    def glob(self, pattern: str, recursive: bool = False) -> list[str]:
        """glob.glob's answer, spelled as the pattern spells its folder (`./csrc/*.cu` stays `./`)."""
        if not any(c in pattern for c in "*?["):
            return [pattern] if self.exists(pattern) else []
        lead = "./" if pattern.startswith("./") else ""
        rx = re.compile(_translate(norm(pattern), recursive))
        return sorted(lead + p for p in self.files | self.dirs if p and rx.fullmatch(p))

    def walk(self, folder: str) -> list[tuple[str, list[str], list[str]]]:
        """os.walk's triples, top-down, folders sorted."""
        out, todo = [], [folder]
        while todo:
            here = todo.pop(0)
            names = self.children(here)
            subs = [n for n in names if norm(posixpath.join(here, n)) in self.dirs]
            out.append((here, subs, [n for n in names if n not in subs]))
            todo += [posixpath.join(here, s) for s in subs]
        return out


def _translate(pattern: str, recursive: bool) -> str:
    """A glob pattern as a regex over /-separated paths: `*` stays in one folder, `**/` (with
    recursive) spans any number."""
    out, i = [], 0
    while i < len(pattern):
        if recursive and pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif recursive and pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1:]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1:end]
            out.append("[" + ("^" + re.escape(body[1:]) if body[:1] == "!" else re.escape(body)) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)
