"""The block-reduction shape of a per-warp shared array (PK205): partials written by warp index,
read back by lane index, and the guard a wider array needs on that read.

`if (lane == 0) s[warp_id] = v; __syncthreads(); v = s[lane_id]; v = warp_reduce_sum(v);` with
1024 threads writes 32 partials in 32-lane warps and every lane reads one. Sized for the wavefront
(`s[PORTKIT_WAVEFRONT_SIZE]`), 64 lanes read 64 entries while 1024 / 64 = 16 wavefronts wrote
theirs: 48 reads of shared memory nobody wrote, garbage on a GPU (ggml's norm.cu). The read must
take only the partials written, with the identity of the reduction that follows for the rest, as
ggml's own block_reduce does (`lane_id < block_size / WARP_SIZE ? s[lane_id] : sentinel()`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from ..engine import syntax

_LANE_NAME = re.compile(rb"^(?:lane\w*|Lane\w*|lid)$")
_WARP_NAME = re.compile(rb"^(?:warp\w*|Warp\w*|wid)$")
_THREAD = re.compile(rb"^\s*threadIdx\.x\s*$")
# the reduction a read partial feeds, by what the call says (ggml's warp_reduce_sum/max, llm.c's
# warpReduceSum, cg::reduce with cg::plus/greater/less, CUB's Sum()/Max()/Min())
_KINDS = (("sum", re.compile(rb"(?i)sum|plus|add")), ("max", re.compile(rb"(?i)max|greater")),
          ("min", re.compile(rb"(?i)min|less")))
_FLOATS = {b"float": (b"0.0f", b"-INFINITY", b"INFINITY"), b"double": (b"0.0", b"-INFINITY", b"INFINITY")}
_INTEGERS = (b"int", b"unsigned", b"unsigned int", b"long long", b"unsigned long long", b"int32_t", b"uint32_t",
             b"int64_t", b"uint64_t")


@dataclass(frozen=True)
class PartialRead:
    """`s[lane]` read unguarded after per-warp writes; `identity` None: the reduction is not known."""

    start: int
    end: int
    lane: bytes
    width: bytes | None      # the warp index's divisor; None: not `threadIdx.x / W`
    identity: bytes | None

    def guard(self, name: bytes) -> bytes:
        """What to write: only the partials the block's warps wrote, the identity for the rest."""
        width = self.width or b"W"
        return (b"%s < (blockDim.x + %s - 1) / %s ? %s[%s] : %s"
                % (self.lane, width, width, name, self.lane, self.identity or b"IDENTITY"))


def unguarded_reads(scope: Node, name: bytes, element: bytes) -> list[PartialRead]:
    """The reads of shared array `name` at a lane index, where the function writes it only at a
    warp index and the read is not already under a test of the lane (`lane < num_warps ? ...`)."""
    writes, reads = _accesses(scope, name)
    if not writes or any(_kind(scope, index) != "warp" for index in writes):
        return []
    width = _width(scope, writes[0])
    found = []
    for node in reads:
        index = node.child_by_field_name("indices") or node.child_by_field_name("index")
        lane = _index_text(index)
        if _kind(scope, lane) != "lane" or _guarded(node, scope, lane):
            continue
        identity = _identity(scope, node, element) if re.fullmatch(rb"\w+", lane) else None
        found.append(PartialRead(node.start_byte, node.end_byte, lane, width, identity))
    return found


def _index_text(index: Node | None) -> bytes:
    return index.text.strip(b"[] \t\n") if index is not None else b""


def _accesses(scope: Node, name: bytes) -> tuple[list[bytes], list[Node]]:
    writes, reads = [], []
    for node in syntax.walk(scope):
        if node.type != "subscript_expression" or node.child_by_field_name("argument").text != name:
            continue
        parent = node.parent
        if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
            writes.append(_index_text(node.child_by_field_name("indices") or node.child_by_field_name("index")))
        else:
            reads.append(node)
    return writes, reads


def _initializer(scope: Node, name: bytes) -> bytes | None:
    found = re.search(rb"\b" + re.escape(name) + rb"\s*=\s*([^;,]+)[;,]", scope.text)
    return found.group(1).strip() if found else None


def _kind(scope: Node, index: bytes) -> str | None:
    """"warp" for `warp_id`, `threadIdx.x / W`, `>> 5`; "lane" for `lane_id`, `% W`, `& 31`."""
    text = (_initializer(scope, index) or index) if re.fullmatch(rb"\w+", index) else index
    if re.search(rb"meta_group_rank\s*\(|/|>>\s*5\b", text):
        return "warp"
    if re.search(rb"thread_rank\s*\(|%|&\s*31\b", text):
        return "lane"
    return "lane" if _LANE_NAME.match(index) else "warp" if _WARP_NAME.match(index) else None


def _width(scope: Node, index: bytes) -> bytes | None:
    """W of a warp index `threadIdx.x / W` (a literal 32 is the fixed code's warpSize)."""
    text = (_initializer(scope, index) or index) if re.fullmatch(rb"\w+", index) else index
    found = re.fullmatch(rb"\(?\s*([\w.]+)\s*/\s*(\w+)\s*\)?", text)
    if found is None:
        return None
    dividend = found.group(1)
    if not _THREAD.match(dividend) and not _THREAD.match(_initializer(scope, dividend) or b""):
        return None
    return b"warpSize" if found.group(2) == b"32" else found.group(2)


def _guarded(node: Node, scope: Node, lane: bytes) -> bool:
    """Under `cond ? s[lane] : x` or `if (cond) ... s[lane]` whose condition tests the lane."""
    tested = re.compile(rb"(?<!\w)" + re.escape(lane) + rb"(?!\w)|threadIdx")   # `warp.thread_rank()` too
    child, parent = node, node.parent
    while parent is not None and parent != scope:
        if parent.type in ("conditional_expression", "if_statement"):
            condition = parent.child_by_field_name("condition")
            if condition is not None and child != condition and tested.search(condition.text):
                return True
        child, parent = parent, parent.parent
    return False


def _identity(scope: Node, node: Node, element: bytes) -> bytes | None:
    """The identity of the reduction the read partial goes to (a sum: 0; a max: -INFINITY; a min:
    INFINITY), None where that reduction or the element type's identity is not known."""
    kind = _reduction(scope, node)
    if kind is None:
        return None
    element = b" ".join(element.split())
    if element in _FLOATS:
        return _FLOATS[element][("sum", "max", "min").index(kind)]
    return b"0" if kind == "sum" and element in _INTEGERS else None


def _reduction(scope: Node, node: Node) -> str | None:
    """A call taking the read (`warp_reduce_sum(s[lane])`), else the first call after it taking the
    variable it is assigned to (`v = s[lane]; v = warp_reduce_sum(v);`), classified by its words,
    or by the body of the function it calls where those say nothing (`warp_reduce(v)`)."""
    parent = node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression", "argument_list"):
        parent = parent.parent
    if parent is not None and parent.type == "call_expression":
        return _classify(scope, parent.text)
    target = parent.child_by_field_name("left" if parent.type == "assignment_expression" else "declarator") \
        if parent is not None and parent.type in ("assignment_expression", "init_declarator") else None
    if target is None or not re.fullmatch(rb"\w+", target.text):
        return None
    after = scope.text[node.end_byte - scope.start_byte:]
    call = re.search(rb"[\w:.()]+\s*(?:<[^<>;]*>)?\s*\([^;]*\b" + re.escape(target.text) + rb"\b[^;]*\)", after)
    return _classify(scope, call.group(0)) if call else None


def _classify(scope: Node, call: bytes) -> str | None:
    callee = re.match(rb"\s*([\w:.]+)", call)
    words = [kind for kind, pattern in _KINDS if pattern.search(call)]
    if len(words) == 1:
        return words[0]
    if words or callee is None:
        return None
    root = scope
    while root.parent is not None:
        root = root.parent
    body = re.search(rb"\b" + re.escape(callee.group(1).split(b"::")[-1]) + rb"\s*\([^;{)]*\)\s*\{(.*?)\n\}", root.text, re.S)
    if body is None or b"__shfl" not in body.group(1):
        return None
    ops = {kind for kind, pattern in (("sum", rb"\+=|\+\s*__shfl"), ("max", rb"fmaxf?\s*\(|\bmax\s*\("),
                                      ("min", rb"fminf?\s*\(|\bmin\s*\(")) if re.search(pattern, body.group(1))}
    return ops.pop() if len(ops) == 1 else None
