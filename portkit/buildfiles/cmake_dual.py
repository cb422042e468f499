"""--compat-header's CMake: the HIP build under an option beside the CUDA build, which stays as it was.

Maintainers who keep one CUDA source for both vendors keep one build too: ggml's GGML_HIP beside
GGML_CUDA, faiss's FAISS_ENABLE_ROCM. An option off by default selects the AMD build, and each
part of the file that differs is written twice:

    option(PROJ_USE_HIP "Build the GPU code for AMD GPUs with HIP (ROCm) instead of CUDA" OFF)
    if(PROJ_USE_HIP)
    project(proj LANGUAGES CXX HIP)
    else()
    project(proj LANGUAGES CXX CUDA)
    endif()

The HIP branch is exactly what `portkit convert` writes for the HIP-only build (cmake.py's edits,
applied to those lines only); the else() branch is the original lines, byte for byte, and every
byte outside the blocks is kept, so with the option OFF CMake runs the same commands as before.

A block covers whole lines and whole control blocks: an edited `if(CMAKE_CUDA_COMPILER)` takes its
block to endif(), and changed commands with only blank lines or comments between them share one
block, so a maintainer reads one if/else per region, never one per line. A raised
cmake_minimum_required (HIP needs 3.21) is not wrapped: the raised line opens the HIP branch of the
next block, as ggml's ggml-hip does, and the NVIDIA build keeps its policies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.edits import Edit, apply_edits
from .cmake_lexer import Command, commands

OPTION_HELP = "Build the GPU code for AMD GPUs with HIP (ROCm) instead of CUDA"
_OPENERS = {"if": "endif", "foreach": "endforeach", "while": "endwhile", "function": "endfunction",
            "macro": "endmacro", "block": "endblock"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}


@dataclass(frozen=True)
class DualCMake:
    """One CMake file in the dual-vendor form (the option line not yet in: who declares it is
    decided over the tree, compat.py). `output` is None when no new block was needed."""

    output: bytes | None
    option_at: int          # where in the output (or the file, when output is None) option() would go
    uses: bool              # the file tests the option (blocks written now or by an earlier run)
    declares: bool          # it already has option(NAME ...)
    newline: bytes


def option_name(project: str) -> str:
    """`project(tiny-cuda-nn ...)` -> TINY_CUDA_NN_USE_HIP: CMake's own spelling of a variable."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", project).strip("_").upper() or "PROJECT"
    return ("_" + stem if stem[0].isdigit() else stem) + "_USE_HIP"


def project_name(data: bytes) -> str | None:
    """The name the file's first project() gives, when it is written out (not a variable)."""
    for cmd in commands(data.decode("latin-1")):
        if cmd.lower == "project" and cmd.args and cmd.args[0].kind in ("unquoted", "quoted"):
            name = cmd.args[0].value
            return name if name and "${" not in name else None
    return None


def calls_project(data: bytes) -> bool:
    return any(cmd.lower == "project" for cmd in commands(data.decode("latin-1")))


def option_line(option: str, newline: bytes) -> bytes:
    return f'option({option} "{OPTION_HELP}" OFF)'.encode() + newline


def after_project(data: bytes) -> int:
    """Where a file that declares the option for its subdirectories puts it: after project()'s line."""
    text = data.decode("latin-1")
    for cmd in commands(text):
        if cmd.lower == "project":
            end = text.find("\n", cmd.close)
            return len(text) if end < 0 else end + 1
    return 0


def dual(data: bytes, edits: list[Edit], option: str) -> DualCMake:
    """The file with each region the HIP-only migration changes written as if(option)/else()."""
    text = data.decode("latin-1")
    newline = b"\r\n" if b"\r\n" in data[:data.find(b"\n") + 1] else b"\n"
    cmds = [c for c in commands(text) if c.close < len(text)]
    blocks = _blocks(cmds)
    mine = [k for k, c in enumerate(cmds) if _tests(c, option)]
    done = [(cmds[k].start, cmds[blocks[k][1]].close + 1) for k in mine if k in blocks]   # an earlier run's
    declares = any(c.lower == "option" and c.values()[:1] == [option] for c in cmds)
    stmts = _statements(text, cmds)
    owner = {k: s for s, (_, _, ks) in enumerate(stmts) for k in ks}
    by_stmt: dict[int, list[Edit]] = {}
    for e in edits:
        if not any(a <= e.start and e.end <= b for a, b in done):
            by_stmt.setdefault(_statement_of(e, stmts), []).append(e)
    bump = _minimum(cmds, owner, by_stmt)
    spans = _spans(cmds, blocks, stmts, owner, sorted(by_stmt))
    if bump is not None and not any(stmts[lo][0] > cmds[bump.cmd].start for lo, _ in spans):
        if not mine:   # no block after it to open: the raise is a block of its own
            by_stmt.setdefault(owner[bump.cmd], []).extend(bump.edits)
            spans = _spans(cmds, blocks, stmts, owner, sorted(by_stmt))
        bump = None    # (or an earlier run's block opens with it already)
    if not spans:
        at = _top_start(text, cmds, blocks, mine[0]) if mine else after_project(data)
        return DualCMake(None, at, bool(mine), declares, newline)
    return _write(text, cmds, blocks, stmts, spans, by_stmt, option, newline, bump, declares)


@dataclass(frozen=True)
class _Raise:
    """cmake_minimum_required raised for HIP: its command and the migration's edits on it."""

    cmd: int
    edits: list[Edit]

    def line(self, cmds: list[Command], text: str) -> bytes:
        c = cmds[self.cmd]
        return apply_edits(text[c.start:c.close + 1].encode("latin-1"),
                           [e._replace(start=e.start - c.start, end=e.end - c.start) for e in self.edits])


def _tests(cmd: Command, option: str) -> bool:
    return cmd.lower == "if" and cmd.values() in ([option], ["NOT", option])


def _blocks(cmds: list[Command]) -> dict[int, tuple[int, int]]:
    """Each control command's whole block, (opener, closer) by command index; unmatched ones
    (a file CMake would reject) are left out."""
    out: dict[int, tuple[int, int]] = {}
    stack: list[tuple[int, list[int]]] = []
    for k, c in enumerate(cmds):
        if c.lower in _OPENERS:
            stack.append((k, []))
        elif c.lower in ("elseif", "else") and stack and cmds[stack[-1][0]].lower == "if":
            stack[-1][1].append(k)
        elif c.lower in _CLOSERS and stack and cmds[stack[-1][0]].lower == _CLOSERS[c.lower]:
            opener, middles = stack.pop()
            for m in (opener, *middles, k):
                out[m] = (opener, k)
    return out


def _statements(text: str, cmds: list[Command]) -> list[tuple[int, int, list[int]]]:
    """The file's commands as whole lines: (start, end, command indices); commands that share a
    line share a statement, and a statement runs to the end of its last line (its newline in)."""
    out: list[tuple[int, int, list[int]]] = []
    for k, c in enumerate(cmds):
        start = text.rfind("\n", 0, c.start) + 1
        end = text.find("\n", c.close)
        end = len(text) if end < 0 else end + 1
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]), out[-1][2] + [k])
        else:
            out.append((start, end, [k]))
    return out


def _statement_of(e: Edit, stmts: list[tuple[int, int, list[int]]]) -> int:
    """The statement an edit belongs to: the one holding its first byte (an insertion at a line's
    end, insert_after's, belongs to that line; one at a line's start, insert_before's, to the next)."""
    for s, (start, end, _) in enumerate(stmts):
        if start <= e.start < end or (e.start == end and s == len(stmts) - 1):
            return s
    return next((s for s, (start, _, _) in enumerate(stmts) if start >= e.start), len(stmts) - 1)


def _minimum(cmds: list[Command], owner: dict[int, int], by_stmt: dict[int, list[Edit]]) -> _Raise | None:
    """Take the raise of cmake_minimum_required out of the blocks, when it is the only change on
    its lines; the NVIDIA build keeps its own minimum and policies."""
    for k, c in enumerate(cmds):
        s = owner[k]
        if c.lower != "cmake_minimum_required" or s not in by_stmt:
            continue
        if sum(1 for j in owner if owner[j] == s) > 1 or \
                any(not (c.start <= e.start and e.end <= c.close + 1) for e in by_stmt[s]):
            return None
        return _Raise(k, by_stmt.pop(s))
    return None


def _spans(cmds, blocks, stmts, owner, changed: list[int]) -> list[tuple[int, int]]:
    """The blocks to write, as (first, last) statement: whole control blocks, neighbours merged."""
    spans: list[list[int]] = []
    for s in _whole_ifs(cmds, blocks, owner, changed):
        lo, hi = _balanced(s, s, cmds, blocks, stmts, owner)
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], hi)
            spans[-1][0], spans[-1][1] = _balanced(spans[-1][0], spans[-1][1], cmds, blocks, stmts, owner)
        else:
            spans.append([lo, hi])
    merged: list[list[int]] = []
    for lo, hi in spans:   # a block widened to its control block may now reach the one before it
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi) for lo, hi in merged]


def _whole_ifs(cmds: list[Command], blocks: dict[int, tuple[int, int]], owner: dict[int, int],
               changed: list[int]) -> list[int]:
    """The changed statements, with the if() of each if-block that changes in every branch and
    mostly (`if(MSVC) flags else() flags endif()`): one block around it reads better than one
    inside each branch. Inner blocks first, so a whole inner block counts for the outer one."""
    marked = set(changed)
    ifs = sorted({b for k, b in blocks.items() if cmds[k].lower == "if"}, key=lambda b: b[1] - b[0])
    for opener, closer in ifs:
        cuts = [k for k in range(opener, closer + 1) if blocks.get(k) == (opener, closer)]
        branches = [range(a + 1, b) for a, b in zip(cuts, cuts[1:])]
        inside = [k for k in range(opener + 1, closer) if owner[k] not in (owner[opener], owner[closer])]
        hit = sum(1 for k in inside if owner[k] in marked)
        if all(any(owner[k] in marked for k in br) for br in branches if len(br)) and 2 * hit >= len(inside) > 0:
            marked.add(owner[opener])
    return sorted(marked)


def _balanced(lo: int, hi: int, cmds, blocks, stmts, owner) -> tuple[int, int]:
    """Widen statements lo..hi until every control block in them is whole (an edited if() takes
    its block to endif(); a block never opens in one branch and closes in the other)."""
    while True:
        first, last = stmts[lo][2][0], stmts[hi][2][-1]
        wide_lo, wide_hi = first, last
        for k in range(first, last + 1):
            if k in blocks:
                wide_lo, wide_hi = min(wide_lo, blocks[k][0]), max(wide_hi, blocks[k][1])
        if (wide_lo, wide_hi) == (first, last):
            return lo, hi
        lo, hi = owner[wide_lo], owner[wide_hi]


def _top_start(text: str, cmds, blocks, k: int) -> int:
    """The line start of the outermost statement around command k (where option() goes: at the
    top level, never inside another block)."""
    outer = k
    for opener, closer in set(blocks.values()):
        if opener <= outer <= closer:
            outer = min(outer, opener)
    changed = True
    while changed:
        changed = False
        for opener, closer in set(blocks.values()):
            if opener < outer <= closer:
                outer, changed = opener, True
    return text.rfind("\n", 0, cmds[outer].start) + 1


def _write(text: str, cmds, blocks, stmts, spans, by_stmt, option: str, newline: bytes,
           bump: _Raise | None, declares: bool) -> DualCMake:
    data = text.encode("latin-1")
    option_at = _top_start(text, cmds, blocks, stmts[spans[0][0]][2][0])   # nothing before it changes
    out: list[bytes] = []
    pos = 0
    for lo, hi in spans:
        start, end = stmts[lo][0], stmts[hi][1]
        indent = text[start:cmds[stmts[lo][2][0]].start]
        indent = "" if indent.strip() else indent
        edits = [e._replace(start=e.start - start, end=e.end - start)
                 for s in range(lo, hi + 1) for e in by_stmt.get(s, ())]
        first = b""
        if bump is not None and cmds[bump.cmd].start < start:
            first, bump = indent.encode("latin-1") + bump.line(cmds, text) + newline, None
        original = data[start:end]
        out += [data[pos:start], _block(original, first + apply_edits(original, edits), indent.encode("latin-1"),
                                        option.encode(), newline)]
        pos = end
    out.append(data[pos:])
    return DualCMake(b"".join(out), option_at, True, declares, newline)


def _block(original: bytes, hip: bytes, indent: bytes, option: bytes, nl: bytes) -> bytes:
    """One region twice: the HIP-only migration's lines under if(option), the original under else()
    (a file's last line without a line end keeps that: endif() ends it the same way)."""
    last = nl if original.endswith(b"\n") else b""
    original = original if last else original + nl
    hip = hip if not hip or hip.endswith(b"\n") else hip + nl
    if not hip.strip():   # the HIP build drops these lines: only the CUDA build runs them
        return indent + b"if(NOT " + option + b")" + nl + original + indent + b"endif()" + last
    return (indent + b"if(" + option + b")" + nl + hip + indent + b"else()" + nl + original
            + indent + b"endif()" + last)
