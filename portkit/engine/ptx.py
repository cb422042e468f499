"""Inline PTX blocks whose whole meaning HIP has: one instruction, plain operands (issue 48).

One decision read by both sides: rewrite/inline_ptx.py writes the HIP form, and rule PK301 reports
no block that convert rewrites (convert and audit never disagree). A block is taken only when its
template is exactly one of these instructions, its operands are the ones the instruction reads or
writes with the register classes it needs, and nothing else is in it (no predicate, no second
instruction, no named or `goto` operand, no escape but whitespace):

- `mov.u32 %0, %laneid;` ("=r"): `OUT = __lane_id()` (the lane within the warp; HIP declares it in
  amd_device_functions.h at 5.2, amd_warp_functions.h at 6.2). tiny-cuda-nn writes `%laneid`
  with one `%` in an extended block, which nvcc takes as `%%laneid`; both are read.
- `mov.u32 %0, %clock;` ("=r"), `mov.u64 %0, %clock64;` ("=l"): `clock()`, `clock64()`, which CUDA
  defines by these very instructions, cut to the register's width.
- `membar.{cta,gl,sys};` and `fence.sc.{cta,gpu,sys};` (the same on sm_70+, PTX ISA "membar"):
  `__threadfence_block()`, `__threadfence()`, `__threadfence_system()`, sequentially consistent
  fences at the same scope on both platforms.
- `red[.relaxed][.gpu][.global].add.{u32,s32,u64,f32,f64} [%0], %1;` ("l" address, the value in
  its type's class, or a float's bits in an integer register): `atomicAdd((T*)(ADDR), (T)(VALUE))`
  (`__uint_as_float((unsigned int)(VALUE))` for the bits). `red` without `.sem`/`.scope` is relaxed
  at GPU scope, as atomicAdd is (CUDA compiles an atomicAdd whose result is unused to this very
  instruction; HIP's is a relaxed agent-scope fetch-add). The address comes from a 64-bit integer
  register, so ADDR may be a pointer or an integer (nccl-tests passes `int64_t*`): the C cast takes
  both. A `"memory"` clobber orders nothing another thread can see without a fence, so it is dropped.
Everything else (shared-space or other-scope `red`, vector forms, `atom` with a result, macro
bodies, whose uses project/asm_macros.py reports apart) stays PK301's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from .context import View

# red's value type -> (the C type, {the value's register class: how its bits read as that type}): a
# float's bits may come in an integer register (tiny-cuda-nn's atomic_add_gmem_float: `"r"(in_int)`)
_ADD_TYPES = {"u32": ("unsigned int", {"r": "(unsigned int)(%s)"}), "s32": ("int", {"r": "(int)(%s)"}),
              "u64": ("unsigned long long", {"l": "(unsigned long long)(%s)"}),
              "f32": ("float", {"f": "(float)(%s)", "r": "__uint_as_float((unsigned int)(%s))"}),
              "f64": ("double", {"d": "(double)(%s)", "l": "__longlong_as_double((long long)(%s))"})}
_RED = re.compile(r"red(?:\.relaxed)?(?:\.gpu)?(?:\.global)?\.add\.(u32|s32|u64|f32|f64) \[ ?%0 ?\] ?, ?%1")
# special register reads: (pattern, constraint, HIP expression)
_READS = ((re.compile(r"mov\.[usb]32 %0 ?, ?%laneid"), "=r", "__lane_id()"),
          (re.compile(r"mov\.[usb]32 %0 ?, ?%clock"), "=r", "(unsigned int)clock()"),
          (re.compile(r"mov\.[usb]64 %0 ?, ?%clock64"), "=l", "clock64()"))
_FENCES = {"membar.cta": "__threadfence_block()", "membar.gl": "__threadfence()", "membar.sys": "__threadfence_system()",
           "fence.sc.cta": "__threadfence_block()", "fence.sc.gpu": "__threadfence()",
           "fence.sc.sys": "__threadfence_system()"}
_OPERAND_LISTS = ("gnu_asm_output_operand_list", "gnu_asm_input_operand_list", "gnu_asm_clobber_list")
# outputs written without parentheses: they bind tighter than `=`
_TIGHT = frozenset({"identifier", "field_expression", "subscript_expression", "qualified_identifier",
                    "pointer_expression"})


@dataclass(frozen=True)
class Equivalent:
    """The HIP form of one block: byte ranges of the original file and their replacement text
    (the operands' own bytes stay, so the conversion of names inside them still applies)."""
    hip: str                                     # what the block becomes, for the edit's description
    pieces: tuple[tuple[int, int, bytes], ...]


def equivalent(view: View, node: Node) -> Equivalent | None:
    """The HIP form of the `gnu_asm_expression` `node`, or None where HIP has no exact one."""
    if view.base or node.parent is None or node.parent.type != "expression_statement":
        return None   # a macro body's block is reported with its uses; an asm inside an expression is not ours
    template, outputs, inputs, extended = _parts(view, node)
    if template is None or outputs is None or inputs is None:
        return None
    if extended:
        template = template.replace("%%", "%")
    instruction = _one_instruction(template)
    if instruction is None:
        return None
    start, end = view.start(node), view.end(node)
    if not outputs and not inputs and instruction in _FENCES:
        hip = _FENCES[instruction]
        return Equivalent(hip, ((start, end, hip.encode()),))
    if len(outputs) == 1 and not inputs:
        for pattern, constraint, hip in _READS:
            if pattern.fullmatch(instruction) and outputs[0][0] == constraint:
                return _assigned(view, node, outputs[0][1], hip)
    red = _RED.fullmatch(instruction)
    if red and not outputs and len(inputs) == 2:
        kind, reads = _ADD_TYPES[red.group(1)]
        (address_class, address), (value_class, value) = ((c, o.children[2]) for c, o in inputs)
        if address_class == "l" and value_class in reads:
            before, after = reads[value_class].split("%s")
            return Equivalent(f"atomicAdd({kind}*)", (
                (start, view.start(address), f"atomicAdd(({kind}*)(".encode()),
                (view.end(address), view.start(value), f"), {before}".encode()),
                (view.end(value), end, f"{after})".encode())))
    return None


def _assigned(view: View, node: Node, operand: Node, hip: str) -> Equivalent:
    """`OUT = HIP` from the block whose one output is `operand` (the `(...)` of `"=r"(...)`)."""
    target = operand.children[2]
    first, last = (target, target) if target.type in _TIGHT else (operand.children[1], operand.children[3])
    return Equivalent(hip, ((view.start(node), view.start(first), b""),
                            (view.end(last), view.end(node), f" = {hip}".encode())))


def _parts(view: View, node: Node):
    """(template, outputs, inputs, extended): the template as one string (None when it holds an
    escape other than whitespace, or a prefixed or raw literal), each operand as (constraint, its
    parenthesised expression as a node whose children are `(`, the expression, `)`), None for a
    list with a named or unusual operand."""
    template, outputs, inputs, extended = "", [], [], False
    for child in node.children:
        if child.type in ("string_literal", "concatenated_string"):
            literals = [child] if child.type == "string_literal" else child.named_children
            for literal in literals:
                text = _literal(view, literal)
                if text is None:
                    return None, None, None, False
                template += text
        elif child.type in _OPERAND_LISTS:
            extended = True
            if child.type != "gnu_asm_clobber_list":
                found = _operands(view, child)
                if found is None:
                    return None, None, None, False
                (outputs if child.type == "gnu_asm_output_operand_list" else inputs).extend(found)
        elif child.type not in ("asm", "__asm__", "__asm", "gnu_asm_qualifier", "(", ")"):
            return None, None, None, False   # asm goto's labels, or what the parser could not read
        elif child.type == "gnu_asm_qualifier" and child.text not in (b"volatile", b"__volatile__", b"inline"):
            return None, None, None, False
    return template, outputs, inputs, extended


def _literal(view: View, literal: Node) -> str | None:
    raw = view.text(literal)
    if literal.type != "string_literal" or not raw.startswith(b'"') or not raw.endswith(b'"'):
        return None
    body = raw[1:-1].replace(b"\\n", b"\n").replace(b"\\t", b"\t")
    return None if b"\\" in body else body.decode("latin-1")


def _operands(view: View, operands: Node) -> list[tuple[str, Node]] | None:
    """Each operand of an output or input list as (constraint, operand node), or None."""
    found = []
    for operand in operands.named_children:
        kids = operand.children
        if len(kids) != 4 or kids[0].type != "string_literal" or kids[1].type != "(" or kids[3].type != ")":
            return None   # a named operand ([r] "=r"(x)) or what the parser could not read
        constraint = _literal(view, kids[0])
        if constraint is None:
            return None
        found.append((constraint, operand))
    return found


def _one_instruction(template: str) -> str | None:
    """The template's one instruction, spaces normalised, without its `;`; None for anything more."""
    text = " ".join(template.split())
    if text.endswith(";"):
        text = text[:-1].rstrip()
    if not text or any(c in text for c in ";{}@"):
        return None
    return text
