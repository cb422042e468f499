"""Whether a kernel's 32-thread groups only split its block (PK201's precision).

`warp_id = threadIdx.x / 32`, `lane = threadIdx.x % 32`, `blockDim.x / 32` in a kernel that shares
data through `__shared__` memory and `__syncthreads()` and does nothing at warp level - no shuffle, vote, ballot, match, __syncwarp, warp-level CUB (WarpReduce,
BlockedToWarpStriped, a WARP_TRANSPOSE algorithm), cooperative groups, WMMA or inline assembly,
and calls no function that might - name groups of 32 threads that tile shared memory and global
loads, with __syncthreads between the phases. Nothing in such a kernel depends on how many lanes
the hardware runs together: on a 64-lane wavefront each wavefront holds two groups and the
results are the same (bitsandbytes' kTransformRowToFormat and kspmm_coo_very_sparse_naive, which
ROCm's port keeps as they are). A kernel that does any of those things, or calls a function
defined elsewhere that is not a CUDA device builtin, keeps PK201's finding as it was.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Node

from ..engine import syntax

# what works at warp level, as written in a kernel (any of these anywhere in its code keeps the
# finding: the test errs towards reporting; comments are left out, "// 4. Do mma operations")
WARP_LEVEL = re.compile(
    rb"\b(?:__shfl\w*|__ballot\w*|__any\w*|__all\w*|__activemask|__syncwarp|__match\w*|__reduce_\w+|__popc\w*"
    rb"|__ffs\w*|__fns\w*|__lanemask\w*|asm|__asm__|__asm|cooperative_groups|tiled_partition|thread_block_tile"
    rb"|coalesced_\w+|labeled_partition|binary_partition|wmma|mma\w*|Warp[A-Z]\w*|\w*WarpStriped\w*|WARP_\w+"
    rb"|Shuffle\w*|warpSize)\b")
# what a kernel that shares data by block, not by warp, is written with: both
BLOCK_LEVEL = (b"__shared__", b"__syncthreads")
CASTS = (b"reinterpret_cast", b"static_cast", b"const_cast", b"dynamic_cast")
# scopes whose functions are host-independent algorithms: cub's block-level ones (a warp-level
# one is named Warp... and WARP_LEVEL has it), std's
SAFE_SCOPES = (b"std", b"::std", b"cub", b"hipcub")
# a name for the warp's size (kWarpSize, WARP_SIZE, warp_size, kThreadsPerWarp), not a warp index
WARP_SIZE_NAME = re.compile(rb"(?i)warp_?size|wave(?:front)?_?size|threads_?per_?warp|lanes_?per_?warp")
DEPTH = 3   # how deep calls into the file's own device functions are followed


def split_only(node: Node) -> bool:
    """`node` (a PK201 site) is in a __global__ kernel whose 32-thread groups only split its block:
    it shares data through shared memory and block barriers, and does nothing at warp level."""
    function = syntax.enclosing(node, "function_definition")
    if function is None or b"__global__" not in syntax.function_qualifiers(function):
        return False
    memo = _file_memo(function)
    if function not in memo:
        memo[function] = _kernel_split_only(function, memo)
    return memo[function]


def _kernel_split_only(function: Node, memo: dict) -> bool:
    code = _code(function)
    if not all(re.search(rb"\b" + word + rb"\b", code) for word in BLOCK_LEVEL):
        return False
    if _DEFINITIONS not in memo:
        memo[_DEFINITIONS] = _definitions(_root(function))
    return _warp_free(function, memo[_DEFINITIONS], 0)


# What one file's kernels were found to be, and its function definitions: every PK201 site of a
# kernel asks (and its --fix warp fixer again), so a generated kernel of 1,500 `tid % 32` lines
# would walk its whole file 3,000 times (tests/test_huge_files.py). Keyed by the file's root node,
# which keeps its tree alive while it is the key, so no later tree can take its identity.
_DEFINITIONS = "definitions"
_memo_of: list = [None, {}]   # [root node, {function node or _DEFINITIONS: value}]


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


def _file_memo(function: Node) -> dict:
    root = _root(function)
    if _memo_of[0] != root:
        _memo_of[0], _memo_of[1] = root, {}
    return _memo_of[1]


def _warp_free(function: Node, definitions: dict[bytes, list[Node]], depth: int) -> bool:
    code = _code(function)
    if WARP_LEVEL.search(code) or WARP_SIZE_NAME.search(code):
        return False   # a warp-level operation, or a warp-size constant the groups are tied to (kWarpSize)
    local = _local_types(function)
    stack = [function]
    while stack:
        current = stack.pop()
        if current.type == "call_expression" and not _callee_ok(current.child_by_field_name("function"), local,
                                                                 definitions, depth):
            return False
        stack.extend(current.children)
    return True


def _callee_ok(callee: Node | None, local: set[bytes], definitions: dict[bytes, list[Node]], depth: int) -> bool:
    """The call does nothing at warp level: a cast, a local type's constructor or member (CUB's
    `LoadT(storage).Load(...)`), a std or block-level cub function, a CUDA device builtin, or a
    function of this file that is itself warp-free."""
    if callee is None:
        return False
    if callee.type == "template_function":
        callee = callee.child_by_field_name("name")
        if callee is None or callee.text in CASTS:
            return callee is not None
    if callee.type == "qualified_identifier":
        scope = callee.child_by_field_name("scope")
        return scope is not None and scope.text in SAFE_SCOPES
    if callee.type == "field_expression":
        target = callee.child_by_field_name("argument")
        made = target.child_by_field_name("function") if target is not None and target.type == "call_expression" \
            else None
        return made is not None and made.text in local
    if callee.type not in ("identifier", "type_identifier"):
        return False
    name = callee.text
    if name in local:
        return True
    if name in definitions:
        return depth < DEPTH and all(_warp_free(d, definitions, depth + 1) for d in definitions[name])
    return name in _device_builtins()


def _code(function: Node) -> bytes:
    """The function's text without its comments."""
    text, base, parts, last = function.text, function.start_byte, [], 0
    stack = [function]
    comments = []
    while stack:
        current = stack.pop()
        if current.type == "comment":
            comments.append((current.start_byte - base, current.end_byte - base))
        else:
            stack.extend(current.children)
    for start, end in sorted(comments):
        parts.append(text[last:start])
        last = end
    return b" ".join(parts + [text[last:]])


def _local_types(function: Node) -> set[bytes]:
    """The names a call may construct without calling code of the project: the function's own
    typedefs and aliases and its template's parameters."""
    names: set[bytes] = set()
    template = function.parent if function.parent is not None and function.parent.type == "template_declaration" \
        else None
    if template is not None:
        parameters = template.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else ():
            declared = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
            if declared is not None:
                names.add(declared.text)
    stack = [function]
    while stack:
        current = stack.pop()
        if current.type == "type_definition":
            names.update(d.text for d in current.children_by_field_name("declarator"))
        elif current.type == "alias_declaration":
            name = current.child_by_field_name("name")
            if name is not None:
                names.add(name.text)
        stack.extend(current.children)
    return names


def _definitions(root: Node) -> dict[bytes, list[Node]]:
    """The file's function definitions by name (a template's and an overload's all kept)."""
    found: dict[bytes, list[Node]] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "function_definition":
            declarator = current.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator is not None else None
            if name is not None:
                found.setdefault(name.text, []).append(current)
            continue
        stack.extend(current.children)
    return found


@lru_cache(maxsize=1)
def _device_builtins() -> frozenset[bytes]:
    """The CUDA functions the mapping tables know (device math, intrinsics, atomics): builtins,
    whose warp-level ones WARP_LEVEL names."""
    from ..core.tables.mappings import load_tables_cached, tables_dir
    return frozenset(name for name, mapping in load_tables_cached(tables_dir()).names_by_bytes.items()
                     if mapping.kind == "function" and b"::" not in name)
