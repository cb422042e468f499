"""The constants of 32 a tree's headers define that make a kernel's block one warp in the files that
include them: learned once, so that the definition is reported (and fixed) where it is.

PK208 follows a block size to its constant within one file. A library puts the constant in a
header (`uint32_t constexpr kBlockThreads = 32;` in `evaluate.cuh`) and launches the kernel, whose
`cub::WarpReduce<float>` has no logical width, from a .cu that includes it: the .cu sees a name it
cannot evaluate, the header sees a number nobody launches, and the defect (a 32-thread block that
is half an AMD wavefront) was missed in both. The pipeline reads each header's constants of 32
(tree-sitter, as PK208 does: `#define`, const/constexpr, enumerators, and derived ones that evaluate
to exactly 32: `kWarps * 32` with kWarps 1; `32 * k` for any other k is not a warp width) and, in
every source that reaches the header by #include (followed through other headers) and launches a
kernel with a width-less warp primitive, the launches whose block is that constant. A constant so
used is kept with every use that depends on it in the files that include its header (the
launch, the kernel's primitives and static_asserts, template arguments, shuffle widths, lane
arithmetic, array extents), so that one finding at the definition lists them all, and `--fix warp`
rewrites the definition where the single-file fix would. Which branch of an `#if` a definition is
in is the platform model's business at the header's own scan (faiss's DeviceDefs.cuh defines
kWarpSize 32 only in its NVIDIA branch, 64 in its AMD one: not reported).
"""

from __future__ import annotations

import re

from .. import rules
from ..core import parse
from ..core.files import Entry
from ..engine import syntax
from .includes import include_lines, nearest

_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".cuinc")
# a header worth parsing defines something as 32 (the evaluation decides what)
_DEFINES_32 = re.compile(rb"(?:=|#[ \t]*define[ \t]+\w+)[ \t(]*\b32[uU]?\b|\b32[ \t]*[*]|[*][ \t]*32\b")
_DEPTH = 8   # include chains followed this deep (a crafted cycle stays cheap)
_MAX_USES = 40   # uses kept per constant (the finding lists 12 and counts the rest)

Use = tuple[str, int, str]   # (file, line, what)


def model():
    """The module whose code decides which kernels are one warp (rules/_warpwidth.py): part of the facts' code key."""
    return rules.warp_width()


def learn(sources: list[tuple[Entry, bytes]]) -> tuple[tuple[str, str, int, bool, tuple[Use, ...]], ...]:
    """(name, header, line, literal, uses) of each header constant of 32 that is the block size of
    a one-warp launch in a file that includes the header; `literal`: its value is the literal 32
    (what a fix replaces)."""
    if not any(names_primitive(data) for _, data in sources):
        return ()   # no cub warp primitive in the tree: no kernel can rely on one-warp blocks
    ww = rules.warp_width()
    headers = _header_constants(sources, ww)
    if not headers:
        return ()
    reach = _reach(sources, set(headers))
    found: dict[tuple[str, bytes], list[Use]] = {}
    for entry, data in sources:
        visible = _visible(reach.get(entry.rel, ()), headers)
        if visible and b"<<<" in data and any(p in data for p in ww.PRIMITIVES) \
                and any(name in data for name in visible):
            _one_warp_uses(entry.rel, parse.parse(data).root_node, visible, ww, found)
    if not found:
        return ()
    for entry, data in sources:   # every file that includes the header (and the header): its uses depend on it too
        reached = (*reach.get(entry.rel, ()), entry.rel)
        names = {n for (h, n) in found if h in reached and re.search(rb"\b%s\b" % n, data)}
        root = parse.parse(data).root_node if names else None
        for name in sorted(names):
            header = next(h for (h, n) in found if n == name and h in reached)
            found[(header, name)] += [(entry.rel, line, what) for line, what
                                      in ww.uses(root, ww.Constant(name, None, True), [])]
    out = []
    for (header, name), uses in sorted(found.items()):
        constant = headers[header][name]
        ordered = tuple(sorted(set(uses), key=lambda u: (u[0] != header, u[0], u[1], u[2])))[:_MAX_USES]
        out.append((name.decode("latin-1"), header, constant.value.start_point[0] + 1, constant.literal, ordered))
    return tuple(out)


def names_primitive(data: bytes) -> bool:
    """Whether `data` names a cub warp primitive: learn() reads nothing more of a tree where no
    file does (file_facts.FileFacts.warp_primitive keeps the answer per file)."""
    return any(p in data for p in rules.warp_width().PRIMITIVES)


def _header_constants(sources: list[tuple[Entry, bytes]], ww) -> dict[str, dict[bytes, object]]:
    """header -> {name: Constant} of its namespace-scope constants whose value is 32."""
    found = {}
    for entry, data in sources:
        if not entry.rel.endswith(_HEADERS) or not _DEFINES_32.search(data):
            continue
        constants = {name: c for name, c in ww.file_constants(parse.parse(data).root_node).items()
                     if syntax.enclosing(c.value, "function_definition", "field_declaration_list") is None}
        if constants:
            found[entry.rel] = constants
    return found


def _reach(sources: list[tuple[Entry, bytes]], wanted: set[str]) -> dict[str, tuple[str, ...]]:
    """file -> the headers among `wanted` it reaches by #include (through other headers too)."""
    rels: dict[str, list[str]] = {}   # by file name: an include's candidates
    for entry, _ in sources:
        rels.setdefault(entry.rel.rsplit("/", 1)[-1], []).append(entry.rel)
    direct: dict[str, list[str]] = {}
    for entry, data in sources:
        if b"include" in data:
            direct[entry.rel] = [target for _, spelled in include_lines(data)
                                 if (target := _resolve(spelled, entry.rel, rels)) is not None]
    out = {}
    for rel in direct:
        seen, frontier = set(), list(direct[rel])
        for _ in range(_DEPTH):
            frontier = [t for t in frontier if t not in seen]
            seen.update(frontier)
            frontier = [n for t in frontier for n in direct.get(t, ())]
        if seen & wanted:
            out[rel] = tuple(sorted(seen & wanted))
    return out


def _resolve(spelled: str, near: str, rels: dict[str, list[str]]) -> str | None:
    """The tree file an include names: beside the includer, else the nearest path ending with it."""
    candidates = rels.get(spelled.rsplit("/", 1)[-1], ())
    here = near.rsplit("/", 1)[0] + "/" if "/" in near else ""
    if here + spelled in candidates:
        return here + spelled
    tail = spelled.lstrip("./")
    ends = [r for r in candidates if r == tail or r.endswith("/" + tail)]
    return nearest(ends, near) if ends else None


def _visible(reached: tuple[str, ...], headers: dict) -> dict[bytes, object]:
    """The header constants a file sees, each with its header (one header's name: the first)."""
    out = {}
    for header in reached:
        for name, constant in headers[header].items():
            out.setdefault(name, constant.__class__(name, None, constant.literal, header))
    return out


def _one_warp_uses(rel: str, root, visible: dict, ww, found: dict) -> None:
    """The one-warp launches of the file whose block is a header's constant: the constant's uses."""
    seen = set()
    for node in syntax.walk(root):
        if node.type != "type_identifier" or node.text not in ww.PRIMITIVES:
            continue
        kernel = ww.kernel_of(node)
        if kernel is None or kernel.id in seen:
            continue
        seen.add(kernel.id)
        warp = ww.one_warp(root, kernel, visible)
        for launch in warp.launches if warp is not None else ():
            constant = launch.constant
            if constant is not None and constant.header:
                uses = found.setdefault((constant.header, constant.name), [])
                uses += [(rel, line, what) for line, what in ww.uses(root, constant, [warp])]
