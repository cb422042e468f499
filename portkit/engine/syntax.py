"""Questions rules and rewriters ask about the tree: where a node is, what it is compared with, what it names.

The warp rules decide by context, not by the number alone: 32 next to `threadIdx` or a
variable called `lane` is a warp size, 32 in `dim3 block(32, 8)` is not.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Node

FUNCTION_QUALIFIERS = frozenset({b"__global__", b"__device__", b"__host__"})
# Names that say "this value is a thread, lane or warp index" (threadIdx.x, tid, laneId, warp_id...).
_THREADISH = re.compile(
    rb"threadIdx|blockDim|__lane_id|portkit_lane_id|\b(?:l?tid|t_?id|lane\w*|Lane\w*|warp\w*|Warp\w*|WARP\w*|"
    rb"wid|thread_?[iI]d\w*|thread_?[iI]dx|local_?id|lid)\b")
_WARPISH_NAME = re.compile(rb"warp|wavefront|lanes", re.I)
# Lane and warp indices only (not threadIdx): `warp_id * 32` is a warp size, `threadIdx.y * 32`
# is usually a tile stride.
_LANE_OR_WARP_INDEX = re.compile(rb"\b(?:lane\w*|Lane\w*|warp\w*|Warp\w*|WARP\w*|wid)\b")


# Constants that name a block's thread count (kBlock, BLOCK_SIZE, kThreadsPerBlock, num_threads):
# `kBlock / 32` is a warp count per block.
_BLOCK_SIZE_NAME = re.compile(
    rb"\b(?:k_?)?(?:[Bb]lock|BLOCK)(?:_?(?:[Ss]ize|SIZE|[Dd]im|DIM|[Tt]hreads|THREADS))?\b|"
    rb"\b(?:k_?|n_?|num_?|NUM_)?(?:[Tt]hreads|THREADS)(?:_?(?:[Pp]er|PER)_?(?:[Bb]lock|BLOCK))?\b|"
    rb"\b(?:block_size|block_dim|threads_per_block|nthreads)\b")


# 5, 31 and 32 as C++ may spell them (hex, binary, octal, suffixes; 37 and 40 too, over-reading
# octal): the literals the warp-size arithmetic reads
_WARP_LITERAL = re.compile(rb"\b(?:0[xX]0*(?:1[fF]|20|5)|0[bB]0*(?:11111|100000|101)|0*(?:5|31|32|37|40))[uUlL]*\b")


def may_hold_warp_size(text) -> bool:
    """Whether a file may hold what PK201 and its fixes find (engine/keywords.FileText): a shuffle's
    lane, a warp-size name, or a 5, 31 or 32 beside a thread index or a block size. The names'
    patterns read the file's tokens, one per line, not its bytes: a tenth of the text."""
    words = text.words
    return b"__shfl" in text.data or _WARPISH_NAME.search(words) is not None or (
        _WARP_LITERAL.search(words) is not None
        and (_THREADISH.search(words) is not None or _BLOCK_SIZE_NAME.search(words) is not None))


def walk(root: Node):
    """Every node under `root` (itself first), in source order, through a cursor.

    A loop over `node.children` makes py-tree-sitter build and keep a Python object for every
    node it reaches, for as long as `root` lives: about 230 MB for a 2 MB generated file. The
    cursor builds one object per node visited and keeps none."""
    cursor = root.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def block_size_name(text: bytes) -> bool:
    """`kBlock`, `BLOCK_SIZE`, `kThreadsPerBlock`, `num_threads`: a block's thread count."""
    return _BLOCK_SIZE_NAME.fullmatch(text.strip()) is not None


def threadish(text: bytes) -> bool:
    return _THREADISH.search(text) is not None


def lane_or_warp_index(text: bytes) -> bool:
    return _LANE_OR_WARP_INDEX.search(text) is not None


def index_expression(node: Node) -> bool:
    """A thread, lane or warp index, possibly offset by constants or scaled by block sizes:
    `threadIdx.x`, `(blockDim.x + 31)`, `blockIdx.x * blockDim.x + threadIdx.x`; not
    `(si + threadIdx.x)`, where another variable is mixed in (a tile coordinate)."""
    node = unparen(node)
    if node.type == "binary_expression" and operator(node) in (b"+", b"-"):
        parts = [node.child_by_field_name("left"), node.child_by_field_name("right")]
        return all(p is not None and (unparen(p).type == "number_literal" or index_expression(p)) for p in parts)
    return threadish(node.text)


def warpish_name(text: bytes) -> bool:
    """A constant's name that says it is a warp size (WARP_SIZE, kWarpSize, NUM_LANES...)."""
    return _WARPISH_NAME.search(text) is not None


# An integer literal longer than this (0x + 32 hex digits is a 128-bit one, with suffixes and
# digit separators) is no value a compiler keeps; a tree's 5,000-digit one is data, not a number.
LONGEST_LITERAL = 48


def int_value(node: Node) -> int | None:
    """The value of a number_literal, or None (floats, odd suffixes)."""
    raw = node.text
    if len(raw) > LONGEST_LITERAL:   # no C integer type holds it; int() refuses 4,300 digits
        return None
    if raw.isdigit() and (raw[0] != 48 or len(raw) == 1):   # plain decimal: most literals (`032` is octal)
        return int(raw)
    return _int_of(raw)


@lru_cache(maxsize=4096)
def _int_of(raw: bytes) -> int | None:
    """The warp rules ask for the values of the same few literals (32, 16, 0xffffffff) over and
    over: 1.8 million times in an audit of ggml."""
    text = raw.decode("ascii", "replace").lower().replace("'", "").rstrip("ul")
    try:
        return int(text, 0)
    except ValueError:
        return None


def unparen(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def up(node: Node) -> Node | None:
    """The parent, skipping parentheses and casts around an expression."""
    parent = node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        parent = parent.parent
    return parent


def other_operand(binary: Node, operand: Node) -> Node | None:
    left = binary.child_by_field_name("left")
    right = binary.child_by_field_name("right")
    if left is None or right is None:
        return None
    return right if left.start_byte <= operand.start_byte < left.end_byte else left


def operator(binary: Node) -> bytes:
    op = binary.child_by_field_name("operator")
    return op.text if op is not None else b""


def enclosing(node: Node, *types: str) -> Node | None:
    current = node.parent
    while current is not None:
        if current.type in types:
            return current
        current = current.parent
    return None


def function_qualifiers(function: Node) -> set[bytes]:
    """__global__/__device__/__host__ written on a function definition."""
    found = set()
    for child in function.children:
        if child.type in ("compound_statement", "function_declarator"):
            break
        for token in (child, *child.children):
            if token.text in FUNCTION_QUALIFIERS:
                found.add(token.text)
    return found


def in_device_code(node: Node) -> bool:
    """Inside a __global__ or __device__ function (a __host__ __device__ one counts)."""
    function = enclosing(node, "function_definition")
    while function is not None:
        quals = function_qualifiers(function)
        if quals & {b"__global__", b"__device__"}:
            return True
        function = enclosing(function, "function_definition")  # a lambda inside a kernel, etc.
    return False


def call_of_argument(node: Node) -> tuple[Node, int] | None:
    """(call_expression, 0-based index) when `node` is directly one argument of a call."""
    arg, parent = node, node.parent
    kind = parent.type if parent is not None else ""
    while kind in ("parenthesized_expression", "cast_expression"):
        arg, parent = parent, parent.parent
        kind = parent.type if parent is not None else ""
    if kind != "argument_list":
        return None
    call = parent.parent
    if call is None or call.type != "call_expression":
        return None
    if not arg.is_named or arg.type == "comment":   # a `(` or `,` of the list, a comment: no argument
        return None
    index, before = 0, arg.prev_named_sibling   # its place among the arguments, comments aside
    while before is not None:
        if before.type != "comment":
            index += 1
        before = before.prev_named_sibling
    return call, index


def callee_name(call: Node) -> bytes:
    """The last name of a call's function: `__shfl_down_sync`, `sync` for `grid.sync()`."""
    function = call.child_by_field_name("function")
    if function is None:
        return b""
    while function.type in ("qualified_identifier", "field_expression", "template_function"):
        nxt = (function.child_by_field_name("name") or function.child_by_field_name("field"))
        if nxt is None:
            break
        function = nxt
    return function.text


def declared_name(declarator: Node) -> bytes:
    """The identifier a (possibly nested) declarator declares."""
    node = declarator
    while node is not None and node.type not in ("identifier", "field_identifier"):
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            return b""
        node = nxt
    return node.text if node is not None else b""


def declaration_type(declaration: Node) -> bytes:
    """The written type of a declaration, qualifiers included (`const unsigned int`)."""
    parts = []
    for child in declaration.children:
        if child.type in ("init_declarator", "identifier", "array_declarator", "pointer_declarator",
                          "reference_declarator", ";", ","):
            break
        parts.append(child.text)
    return b" ".join(parts)


def is_call_to(node: Node, names: tuple[bytes, ...] | frozenset[bytes]) -> bool:
    node = unparen(node)
    return node.type == "call_expression" and callee_name(node) in names


_MACRO_COMMENT = re.compile(rb"//.*|/\*.*?\*/", re.S)


def define_value(define: Node) -> tuple[bytes, Node | None]:
    """The value of `#define NAME value` without comments or parentheses, and its node."""
    value = define.child_by_field_name("value")
    if value is None:
        return b"", None
    text = _MACRO_COMMENT.sub(b" ", value.text).strip()
    while text.startswith(b"(") and text.endswith(b")"):
        text = text[1:-1].strip()
    return text, value


def declarations(name: Node):
    """Where the variable `name` may be declared, nearest scope first, as (node, kind): the earlier
    declarations of its enclosing blocks and the enclosing for-loops' own ("local"), then its
    function's parameters ("param") and, for a template, its template parameters ("template")."""
    node = name
    while node.parent is not None:
        parent = node.parent
        if parent.type == "compound_statement":
            for sibling in parent.named_children:
                if sibling.start_byte >= node.start_byte:
                    break
                if sibling.type == "declaration":
                    yield sibling, "local"
        elif parent.type == "for_statement" and node != parent.child_by_field_name("initializer"):
            init = parent.child_by_field_name("initializer")   # for (int u = 0; ...): the loop's own variable
            if init is not None and init.type == "declaration":
                yield init, "local"
        elif parent.type == "function_definition":
            function = parent.child_by_field_name("declarator")
            params = function.child_by_field_name("parameters") if function is not None else None
            for param in params.named_children if params is not None else ():
                yield param, "param"
            template = parent.parent if parent.parent is not None and parent.parent.type == "template_declaration" else None
            params = template.child_by_field_name("parameters") if template is not None else None
            for param in params.named_children if params is not None else ():
                if param.type == "parameter_declaration":
                    yield param, "template"
            return
        node = parent
