"""setup.py switches: the extensions a plain install leaves out, so their sources are optional.

apex builds every CUDA extension under a switch: `if has_flag("--cuda_ext", "APEX_CUDA_EXT"):`
appends amp_C, syncbn, ...; each contrib extension has its own (`--fast_layer_norm`,
`"--xentropy" in sys.argv`, `os.environ.get("APEX_GROUP_NORM", "0") == "1"`). The sources an
extension lists under a switch belong to that switch, named by its flag (`--fast_layer_norm`), and
so does a compile unit no extension lists beside sources of that switch only.

A switch is an `if` whose test is false with no flag given and no variable set, and true with its
own flag (or variable) on: a call with a `--flag` argument, `"--flag" in sys.argv`, a comparison of
`os.environ.get("X", default)` / `os.getenv` with a constant, `"X" in os.environ`, `not`, `and`,
`or` of these, or a module-level name assigned one. Other tests (versions, paths, platforms) are
taken to hold, as they do on the machine the port is built on.

When EVERY CUDA extension is behind a switch, installing with no switch builds no CUDA at all: that
package is not what the user is porting. The default build is then the switch that builds the
most CUDA extensions (apex: `--cuda_ext`, 11 of them, which its README installs with), and the
other switches are optional features. A source listed by a default extension and an optional
one is default. The file is parsed with `ast`, never run; one over MAX_BYTES, or one that does not
parse, says nothing.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath

from .tree_paths import TreePaths

MAX_BYTES = 1 << 20
_ON_VALUES = ("1", "ON", "on", "TRUE", "true", "True", "yes")
_UNKNOWN = object()
_UNITS = (".c", ".cc", ".cpp", ".cxx", ".cu")


class _Switches:
    """One setup.py's switch tests, its extensions and their chains of switch labels."""

    def __init__(self, tree: ast.Module, base: str, paths: "frozenset[str] | TreePaths"):
        self.base, self.paths = base, paths if isinstance(paths, TreePaths) else TreePaths(paths)
        self.names: dict[str, ast.expr] = {}   # module-level name -> the test it holds
        self.exts: list[tuple[tuple[str, ...], list[str], bool]] = []   # (labels, sources, CUDA)
        self.blocks: list[tuple[tuple[str, ...], int, int]] = []         # (labels, first, last line)
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.names.setdefault(node.targets[0].id, node.value)
        self.visit(tree.body, ())

    def visit(self, body: list[ast.stmt], chain: tuple[str, ...]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                label, inverted = self.switch(node.test)
                inner = chain + (label,) if label and not inverted else chain
                other = chain + (label,) if label and inverted else chain
                start = len(self.exts)
                self.visit(node.body, inner)
                if len(self.exts) > start and inner != chain:
                    self.blocks.append((inner, node.lineno, node.end_lineno or node.lineno))
                self.visit(node.orelse, other)
                continue
            nested = [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]
            nested += [h.body for h in getattr(node, "handlers", ())]
            if nested and not isinstance(node, ast.ClassDef):
                for part in nested:
                    self.visit(part, chain)
                if isinstance(node, (ast.For, ast.While, ast.With)):
                    self.calls(node.iter if isinstance(node, ast.For) else None, chain)
                continue
            self.calls(node, chain)

    def calls(self, node, chain: tuple[str, ...]) -> None:
        """The extensions a statement builds: `*Extension(...)` and `load(...)` with sources."""
        if node is None:
            return
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            name = _name(call.func)
            if not (name.endswith("Extension") or name == "load"):
                continue
            arg = next((k.value for k in call.keywords if k.arg == "sources"), None)
            if arg is None and len(call.args) > 1 and name != "load":
                arg = call.args[1]
            sources = self.files(arg) if arg is not None else []
            cuda = "CUDA" in name or any(s.endswith((".cu", ".cuh")) for s in sources)
            self.exts.append((chain, sources, cuda))

    def files(self, node: ast.expr) -> list[str]:
        """The tree's files a sources expression names (literals, +, glob.glob, os.path.join)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return [f for elt in node.elts for f in self.files(elt)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.files(node.left) + self.files(node.right)
        text = _path(node)
        if isinstance(node, ast.Call) and _name(node.func) in ("glob", "iglob") and node.args:
            pattern = _path(node.args[0])
            if not pattern:
                return []
            full = posixpath.join(self.base, pattern)
            return sorted(p for p in self.paths.matching_start(posixpath.normpath(full)) if _glob(full, p))
        if text is None:
            return []
        rel = posixpath.normpath(posixpath.join(self.base, text))
        return [rel] if rel in self.paths else []

    def switch(self, test: ast.expr) -> tuple[str | None, bool]:
        """(label, inverted) of a switch test: inverted when the test holds by default and not with
        the switch on (`if not has_flag(...)`: the else branch is the feature)."""
        for label in _labels(test, self.names):
            default, on = self.truth(test, None), self.truth(test, label)
            if default is False and on is True:
                return label, False
            if default is True and on is False:
                return label, True
        return None, False

    def truth(self, node: ast.expr, on: str | None, depth: int = 0):
        """The test's value with only `on` set (None: nothing set); _UNKNOWN tests hold (True)."""
        value = self.value(node, on, depth)
        return True if value is _UNKNOWN else bool(value)

    def value(self, node: ast.expr, on: str | None, depth: int = 0):
        if depth > 8:
            return _UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.value(self.names[node.id], on, depth + 1)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = [self.value(e, on, depth + 1) for e in node.elts]
            return _UNKNOWN if _UNKNOWN in values else tuple(values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.value(node.operand, on, depth + 1)
            return _UNKNOWN if inner is _UNKNOWN else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.truth(v, on, depth + 1) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare):
            return self.compare(node, on, depth)
        if isinstance(node, ast.Call):
            return self.call(node, on, depth)
        return _UNKNOWN

    def compare(self, node: ast.Compare, on: str | None, depth: int):
        if _flag(node.left) is not None and len(node.ops) == 1 and _mentions(node.comparators[0], "argv"):
            present = _flag(node.left) == on
            return present if isinstance(node.ops[0], ast.In) else not present
        if (isinstance(node.left, ast.Constant) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and _mentions(node.comparators[0], "environ")):
            present = node.left.value == on
            return present if isinstance(node.ops[0], ast.In) else not present
        left = self.value(node.left, on, depth + 1)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.value(right_node, on, depth + 1)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                ok = _OPS[type(op)](left, right)
            except (KeyError, TypeError):
                return _UNKNOWN
            if not ok:
                return False
            left = right
        return True

    def call(self, node: ast.Call, on: str | None, depth: int):
        name = _name(node.func)
        env = _env_name(node)
        if env is not None:
            default = self.value(node.args[1], on, depth + 1) if len(node.args) > 1 else None
            return _ON if env == on else default
        flags = [a for a in node.args if _flag(a) is not None]
        if flags:   # has_flag("--cuda_ext", "APEX_CUDA_EXT")
            return any(_flag(a) == on for a in flags) or any(_const(a) == on for a in node.args)
        if name in ("lower", "upper", "strip") and isinstance(node.func, ast.Attribute):
            inner = self.value(node.func.value, on, depth + 1)
            return getattr(inner, name)() if isinstance(inner, str) else _UNKNOWN
        if name in ("int", "bool", "str") and len(node.args) == 1:
            inner = self.value(node.args[0], on, depth + 1)
            try:
                return _UNKNOWN if inner is _UNKNOWN else {"int": int, "bool": bool, "str": str}[name](inner)
            except (TypeError, ValueError):
                return _UNKNOWN
        return _UNKNOWN


class _On(str):
    """The value of a variable switched on: equal to any usual spelling of "on"."""

    def __eq__(self, other):
        return other in _ON_VALUES or (isinstance(other, str) and other.lower() in ("1", "on", "true", "yes"))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def lower(self):
        return _On("1")

    upper = strip = lower


_ON = _On("1")
_OPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
        ast.In: lambda a, b: any(a == x for x in b) if isinstance(b, tuple) else a in b,
        ast.NotIn: lambda a, b: not any(a == x for x in b) if isinstance(b, tuple) else a not in b}


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _const(node: ast.expr):
    return node.value if isinstance(node, ast.Constant) else None


def _flag(node: ast.expr) -> str | None:
    value = _const(node)
    return value if isinstance(value, str) and value.startswith("--") and len(value) > 2 else None


def _mentions(node: ast.expr, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr or isinstance(n, ast.Name) and n.id == attr
               for n in ast.walk(node))


def _env_name(node: ast.Call) -> str | None:
    """X of `os.environ.get("X", ...)` / `os.getenv("X", ...)`."""
    func = node.func
    env = (isinstance(func, ast.Attribute) and (func.attr == "getenv" or func.attr == "get"
                                               and _mentions(func.value, "environ")))
    if env and node.args and isinstance(_const(node.args[0]), str):
        return node.args[0].value
    return None


def _labels(test: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> list[str]:
    """The flags and variables a test names, flags first (`has_flag("--x", "APEX_X")`: --x)."""
    flags, envs = [], []
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id in names and depth < 8:
            flags += _labels(names[node.id], names, depth + 1)
        elif _flag(node) is not None:
            flags.append(node.value)
        elif isinstance(node, ast.Call) and _env_name(node) is not None:
            envs.append(_env_name(node))
        elif isinstance(node, ast.Compare) and _mentions(node, "environ") and isinstance(_const(node.left), str):
            envs.append(node.left.value)
    return list(dict.fromkeys(flags + envs))


def _path(node: ast.expr) -> str | None:
    """A literal path, or `os.path.join(this_dir, "csrc", "x.cu")` less its leading non-literals."""
    if isinstance(_const(node), str):
        return node.value
    if isinstance(node, ast.Call) and _name(node.func) == "join" and node.args:
        parts = [_const(a) for a in node.args]
        while parts and not isinstance(parts[0], str):
            parts.pop(0)
        if parts and all(isinstance(p, str) for p in parts):
            return posixpath.join(*parts)
    return None


def _glob(pattern: str, path: str) -> bool:
    pattern = posixpath.normpath(pattern)
    if "**" in pattern:
        return fnmatch.fnmatchcase(path, pattern)
    a, b = pattern.split("/"), path.split("/")
    return len(a) == len(b) and all(fnmatch.fnmatchcase(y, x) for x, y in zip(a, b))


def learn(path: str, data: bytes, paths: "frozenset[str] | TreePaths") -> tuple[dict[str, str], list[tuple[int, int, str]]]:
    """({source path: feature, "" for a default one} of every source an extension lists, the
    optional line ranges of setup.py itself)."""
    if len(data) > MAX_BYTES:
        return {}, []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, []
    found, default = read(tree, posixpath.dirname(path), paths)
    features: dict[str, set[str]] = {}
    for chain, sources, _ in found.exts:
        feature = next((label for label in chain if label not in default), "")
        for source in sources:
            features.setdefault(source, set()).add(feature)
    files = {p: "" if "" in f else sorted(f)[0] for p, f in features.items()}
    files.update(_beside(files, paths))
    ranges, seen = [], set()
    for chain, first, last in sorted(found.blocks, key=lambda b: (b[1], -b[2])):
        feature = next((label for label in chain if label not in default), "")
        if feature and not any(a <= first and last <= b for a, b in seen):
            ranges.append((first, last, feature))
            seen.add((first, last))
    return files, ranges


def read(tree: ast.Module, base: str, paths: "frozenset[str] | TreePaths") -> tuple[_Switches, frozenset[str]]:
    """The file's switches (`.switch(test)`: the label an `if` tests) and those a default build
    turns on; project/setup_defines.py asks them where a macro is written."""
    found = _Switches(tree, base, paths)
    return found, _default(found.exts)


def _beside(files: dict[str, str], paths: "frozenset[str] | TreePaths") -> dict[str, str]:
    """A compile unit no extension lists, in a directory whose listed sources all belong to one
    optional switch, belongs to it (apex's group_norm_nhwc.cpp beside --group_norm's sources)."""
    by_dir: dict[str, set[str]] = {}
    for path, feature in files.items():
        by_dir.setdefault(posixpath.dirname(path), set()).add(feature)
    out = {}
    for path in paths:
        features = by_dir.get(posixpath.dirname(path), set())
        if path not in files and path.endswith(_UNITS) and len(features) == 1 and "" not in features:
            out[path] = next(iter(features))
    return out


def _default(exts: list[tuple[tuple[str, ...], list[str], bool]]) -> frozenset[str]:
    """The switches a default build turns on: none when a CUDA extension is built without one, else
    the switch that builds the most CUDA extensions (then: the most sources). Extensions, not
    files: apex's `--group_norm` lists 47 generated instantiation files in 2 extensions, its
    `--cuda_ext` 36 files in 11 extensions, and `--cuda_ext` is the package people install."""
    cuda = [(chain, sources) for chain, sources, is_cuda in exts if is_cuda]
    if not cuda or any(not chain for chain, _ in cuda):
        return frozenset()
    counts: dict[str, list] = {}   # switch -> [extensions, their sources]
    for chain, sources in cuda:
        count = counts.setdefault(chain[0], [0, set()])
        count[0] += 1
        count[1].update(sources)
    best = max(sorted(counts), key=lambda label: (counts[label][0], len(counts[label][1])))
    return frozenset({best})
