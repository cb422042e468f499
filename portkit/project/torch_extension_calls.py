"""What the calls a setup.py makes to build its source lists answer, without running anything.

torch_extension_eval.py hands each call whose callee it knows here: builtins (`sorted`, `list`,
`zip`, `range`...), `os.path`, `glob`, `os.listdir`/`os.walk`, `itertools.product`/`chain`,
`pathlib.Path`, and the methods of str, list, dict and Path the source-listing idioms use. The
answers come from Python's own pure functions where they are safe and from the walked tree
(torch_extension_fs.Tree) where the file asks the disk; everything else is UNKNOWN. Sizes are
bounded (a range, a product, a repeated string) so that no setup.py can make the reader slow.
"""

from __future__ import annotations

import fnmatch
import itertools
import posixpath
import re

from .torch_extension_fs import PathValue, Tree, norm

ITEMS = 512   # the most items a list, range or product built here may have


class Unknown:
    """A value the reader cannot know (an environment variable, torch.cuda.is_available())."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()
CONSTANTS = {"os.sep": "/", "os.path.sep": "/", "os.curdir": ".", "os.pardir": "..", "os.pathsep": ":"}
_STR = frozenset({"split", "rsplit", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace", "join",
                  "lower", "upper", "partition", "rpartition", "removeprefix", "removesuffix", "count", "find",
                  "rfind", "isdigit", "splitlines"})
WIDE = re.compile(r"\{[^}]*:|%[^a-zA-Z%]*\d")   # a width or precision: a format that could allocate much


def text(v) -> str:
    """A path argument as a string; raises (the caller answers UNKNOWN) on anything else."""
    if isinstance(v, PathValue):
        return v.p
    if isinstance(v, str):
        return v
    raise TypeError(v)


def _bounded(items) -> list:
    out = list(itertools.islice(items, ITEMS + 1))
    if len(out) > ITEMS:
        raise ValueError("too many items")
    return out


def _path(name: str, args: list, kw: dict, tree: Tree):
    """os.path.NAME(*args) on paths relative to the setup.py's folder."""
    if name == "join":
        return posixpath.join(*(text(a) for a in args))
    p = text(args[0])
    simple = {"dirname": posixpath.dirname, "basename": posixpath.basename, "splitext": posixpath.splitext,
              "abspath": norm, "realpath": norm, "normpath": norm, "expanduser": norm, "relpath": norm}
    if name in simple:
        return simple[name](p)
    if name in ("exists", "isfile", "isdir", "lexists"):
        return tree.exists(p, {"isfile": "file", "isdir": "dir"}.get(name, ""))
    return UNKNOWN


def call(name: str, args: list, kw: dict, tree: Tree):
    """The value of calling the outside name `name` (dotted, as the file imported it)."""
    name = "os.path." + name[len("posixpath."):] if name.startswith("posixpath.") else name
    if name.startswith("os.path."):
        return _path(name[len("os.path."):], args, kw, tree)
    if name in ("glob.glob", "glob.iglob"):
        folder = text(kw["root_dir"]) if "root_dir" in kw else ""
        found = tree.glob(posixpath.join(folder, text(args[0])), recursive=kw.get("recursive") is True)
        return [f[len(folder) + 1:] for f in found] if folder else found
    if name == "os.listdir":
        return tree.children(text(args[0]) if args else "")
    if name == "os.walk":
        return tree.walk(text(args[0]))
    if name == "os.getcwd":
        return ""
    if name in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
        return PathValue(norm(posixpath.join(*(text(a) for a in args)) if args else ""))
    if name in ("itertools.product", "product"):
        return _bounded(itertools.product(*(_items(a) for a in args)))
    if name in ("itertools.chain", "chain"):
        return _bounded(itertools.chain(*(_items(a) for a in args)))
    if name in ("fnmatch.fnmatch", "fnmatch.fnmatchcase"):
        return fnmatch.fnmatchcase(text(args[0]), text(args[1]))
    return _builtin(name, args, kw)


def _items(v) -> list:
    if isinstance(v, (list, tuple, str)):
        return list(v)
    if isinstance(v, dict):
        return list(v)
    raise TypeError(v)


def _builtin(name: str, args: list, kw: dict):
    if name == "print":
        return None
    if name in ("list", "tuple", "sorted", "reversed", "set", "frozenset") and args:
        items = _items(args[0])
        if name == "sorted" and "key" not in kw and all(isinstance(i, str) for i in items):
            items = sorted(items, reverse=kw.get("reverse") is True)
        if name in ("set", "frozenset"):
            items = list(dict.fromkeys(items))
        return tuple(items) if name == "tuple" else items[::-1] if name == "reversed" else items
    if name in ("list", "tuple", "set") and not args:
        return () if name == "tuple" else []
    if name == "len" and args:
        return len(_items(args[0]))
    if name == "str" and args:
        return text(args[0]) if isinstance(args[0], (str, PathValue)) else UNKNOWN
    if name == "enumerate" and args:
        return list(enumerate(_items(args[0])))
    if name == "zip":
        return _bounded(zip(*(_items(a) for a in args)))
    if name == "range" and all(isinstance(a, int) for a in args):
        return _bounded(iter(range(*args)))
    if name == "dict" and not args:
        return dict(kw)
    return UNKNOWN


def method(obj, name: str, args: list, kw: dict, tree: Tree):
    """obj.name(*args): the pure methods of str, the list and dict methods that build source lists
    (in place, as Python does), and Path's."""
    if isinstance(obj, str) and name in _STR:
        if name == "join":
            return obj.join(text(a) for a in _items(args[0]))
        if any(not isinstance(a, (str, int, tuple, type(None))) for a in args):
            return UNKNOWN
        return getattr(obj, name)(*args)
    if isinstance(obj, str) and name == "format" and not WIDE.search(obj):
        return obj.format(*(text(a) if isinstance(a, PathValue) else a for a in args), **kw)
    if isinstance(obj, list) and name in ("append", "extend", "insert", "copy", "index", "count"):
        if name == "extend":
            obj.extend(_items(args[0]))
            return None
        return getattr(obj, name)(*args)
    if isinstance(obj, dict) and name in ("get", "keys", "values", "items", "copy", "setdefault", "update"):
        found = getattr(obj, name)(*args, **kw)
        return list(found) if name in ("keys", "values", "items") else found
    if isinstance(obj, PathValue):
        return _path_method(obj, name, args, tree)
    return UNKNOWN


def _path_method(obj: PathValue, name: str, args: list, tree: Tree):
    if name in ("glob", "rglob"):
        pattern = ("**/" if name == "rglob" else "") + text(args[0])
        return [PathValue(norm(p)) for p in tree.glob(posixpath.join(obj.p, pattern), recursive=True)]
    if name == "iterdir":
        return [PathValue(norm(posixpath.join(obj.p, n))) for n in tree.children(obj.p)]
    if name in ("exists", "is_file", "is_dir"):
        return tree.exists(obj.p, {"is_file": "file", "is_dir": "dir"}.get(name, ""))
    if name in ("resolve", "absolute", "expanduser"):
        return obj
    if name in ("as_posix", "__str__", "__fspath__"):
        return obj.p
    if name == "joinpath":
        return PathValue(norm(posixpath.join(obj.p, *(text(a) for a in args))))
    if name == "with_suffix":
        stem, dot, _ = obj.p.rpartition(".")
        base = stem if dot and "/" not in obj.p[len(stem):] else obj.p
        return PathValue(base + text(args[0]))
    return UNKNOWN
