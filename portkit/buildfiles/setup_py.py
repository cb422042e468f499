"""PyTorch extension builds (setup.py with CUDAExtension, or torch.utils.cpp_extension.load).

PyTorch for ROCm builds a CUDAExtension by hipifying its sources itself and passing the
`extra_compile_args["nvcc"]` list to hipcc almost as written (it only renames CUDA to HIP
inside -D flags), so the class name, the "nvcc" key and the .cu sources stay. What must change
is what hipcc (clang) cannot take: nvcc-only options (translated or dropped, per
mappings/build.toml), GPU architectures (an `--offload-arch` in the list also makes PyTorch skip
its PYTORCH_ROCM_ARCH default), and CUDA libraries in `libraries=[...]`. TORCH_CUDA_ARCH_LIST
has no effect on ROCm (PYTORCH_ROCM_ARCH does) and is reported.

A file that imports torch.utils.cpp_extension keeps its NVIDIA build: hipcc's words go beside
nvcc's, in the ROCm branch the file has or one written for them (setup_torch.py); any other
setup.py that runs nvcc is migrated HIP-only. The file is read with Python's own parser; nothing
is executed.
"""

from __future__ import annotations

import ast
import re

from ..engine.context import ScanContext
from .nvcc import Word, translate
from . import setup_cuda_home, setup_torch
from .table import BuildTable
from .words import apply, note
from ..engine.codes import Code
from ..core.edits import EditKind

FLAG_KEYWORDS = ("extra_cuda_cflags",)     # torch.utils.cpp_extension.load(..., extra_cuda_cflags=[...])


def migrate(ctx: ScanContext, table: BuildTable) -> None:
    data = ctx.source.data
    if b"nvcc" not in data and b"cuda_cflags" not in data and b"libraries" not in data \
            and b"TORCH_CUDA_ARCH_LIST" not in data and b"CUDA_HOME" not in data:
        return
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return      # not Python we can read: the audit's text rules still report what they see
    offsets = _line_offsets(data)
    lists, names, called_from = _flag_lists(tree)
    if setup_torch.is_torch_extension(tree):
        _torch_extension(ctx, table, tree, lists, names, offsets, called_from)
        _arch_list(ctx, tree, offsets)
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            if any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
                lists.append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names \
                and isinstance(node.value, (ast.List, ast.Tuple)):
            lists.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
            if node.func.attr == "extend" and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
                lists.append(node.args[0])
            elif node.func.attr == "append" and node.args:
                _single(ctx, table, node, offsets)
    _arch_list(ctx, tree, offsets)
    seen: set[int] = set()
    for value in lists:
        if id(value) in seen:
            continue
        seen.add(id(value))
        words = _words(value, data, offsets)
        if words:
            apply(ctx, words, translate(words, table, ctx.options.offload_arch), style="python")
    for value in _library_lists(tree):
        _libraries(ctx, table, value, data, offsets)


def _arch_list(ctx: ScanContext, tree: ast.AST, offsets: list[int]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == "TORCH_CUDA_ARCH_LIST":
            start, end = _span(node, offsets)
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, start, end, "TORCH_CUDA_ARCH_LIST has no effect on ROCm: PyTorch for "
                 "ROCm builds for PYTORCH_ROCM_ARCH (e.g. gfx90a;gfx942)", "TORCH_CUDA_ARCH_LIST")


def _torch_extension(ctx: ScanContext, table: BuildTable, tree: ast.Module, lists: list[ast.AST], names: set[str],
                     offsets: list[int], called_from: dict[int, ast.AST]) -> None:
    """A CUDAExtension's flags for hipcc beside nvcc's, in the ROCm branch (setup_torch.py)."""
    data = ctx.source.data
    branches = setup_torch.Branches(tree, data)
    lists = lists + [v for v in _assigned_lists(tree, names)]
    edited = False
    for value in {id(v): v for v in lists}.values():
        judged = called_from.get(id(value), value)
        edited |= setup_torch.migrate_list(ctx, table, branches, value, _words(value, data, offsets), judged)
    for calls in _append_runs(tree, names):
        words = [w for call in calls for w in _words(ast.List(elts=call.args[:1]), data, offsets)]
        if len(words) == len(calls):
            edited |= setup_torch.migrate_appends(ctx, table, branches, calls, words)
    for value in _library_lists(tree):
        edited |= _torch_libraries(ctx, table, branches, value, offsets)
    edited |= _cuda_home_gates(ctx, tree, branches, offsets)
    if edited:
        setup_torch.add_import(ctx, branches)


def _cuda_home_gates(ctx: ScanContext, tree: ast.Module, branches: setup_torch.Branches, offsets: list[int]) -> bool:
    """`CUDA_HOME is not None`, None on ROCm's PyTorch: the ROCm build's test beside it
    (setup_cuda_home.py); the audit reports it (PK506, high: the GPU extension is never built there)."""
    data = ctx.source.data
    found = setup_cuda_home.gates(tree, branches)
    for gate in found:
        start, end = _span(gate.node, offsets)
        text = data[start:end].decode("utf-8", "replace")
        if ctx.options.audit:
            ctx.flag(Code.TORCH_CUDA_EXTENSION, start, end, f"`{text}` is {gate.on_rocm} on ROCm's PyTorch, whose "
                     f"CUDA_HOME is None (ROCM_HOME is its toolkit): the ROCm build takes the path of a machine without "
                     f"a GPU toolkit, silently (pytorch_scatter's built its CPU extension only); test the ROCm build "
                     f"beside it, `{gate.rewritten(text, branches.test)}`", "CUDA_HOME",
                     severity="high")
            continue
        ctx.edit(start, end, gate.rewritten(text, branches.test).encode(), "build", kind=EditKind.BUILD)
        note(ctx, Code.BUILD_MIGRATION_CHOICE, start, end, f"`{text}` is {gate.on_rocm} on ROCm's PyTorch, whose "
             f"CUDA_HOME is None: now `{gate.rewritten(text, branches.test)}`, so that its build takes the GPU path "
             f"too", "CUDA_HOME")
    return bool(found) and not ctx.options.audit


def _torch_libraries(ctx: ScanContext, table: BuildTable, branches: setup_torch.Branches, value: ast.AST,
                     offsets: list[int]) -> bool:
    """libraries=["cublas"]: hipblas on ROCm beside cublas, as the flags are."""
    side = branches.side(value)
    if side != "both":
        if side == "rocm":
            _libraries(ctx, table, value, ctx.source.data, offsets)
        return False
    data = ctx.source.data
    start, end = _span(value, offsets)
    hip = data[start:end]
    for element in reversed(value.elts):   # type: ignore[attr-defined]
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            continue
        lib = table.by_link.get(element.value)
        if lib is None:
            continue
        a, b = _span(element, offsets)
        if lib.hip_link:
            quote = data[a:a + 1]
            hip = hip[:a - start] + quote + lib.hip_link.encode() + quote + hip[b - start:]
        else:
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, a, b, f"library `{element.value}`: {lib.why}", element.value)
    if hip == data[start:end]:
        return False
    ctx.edit(start, end, b"(" + hip + b" if " + branches.test.encode() + b" else " + data[start:end] + b")",
             "build", kind=EditKind.BUILD)
    return True


def _assigned_lists(tree: ast.AST, names: set[str]) -> list[ast.AST]:
    """Lists assigned, added or extended to the variables that hold nvcc flags."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)) \
                and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            found.append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names \
                and isinstance(node.value, (ast.List, ast.Tuple)):
            found.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extend" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names \
                and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            found.append(node.args[0])
    return found


def _append_runs(tree: ast.AST, names: set[str]) -> list[list[ast.Call]]:
    """Runs of consecutive statements `flags.append("word")`, in each block of the file."""
    runs: list[list[ast.Call]] = []
    for node in ast.walk(tree):
        for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(block, list):
                continue
            run: list[ast.Call] = []
            for statement in block + [None]:
                call = statement.value if isinstance(statement, ast.Expr) else None
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                        and isinstance(call.func.value, ast.Name) and call.func.value.id in names \
                        and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
                    run.append(call)
                    continue
                if run:
                    runs.append(run)
                run = []
    return runs


def _flag_lists(tree: ast.AST) -> tuple[list[ast.AST], set[str], dict[int, ast.AST]]:
    """List literals given as nvcc flags, and names of variables holding them."""
    lists: list[ast.AST] = []
    names: set[str] = set()
    called_from: dict[int, ast.AST] = {}     # a list a helper function returns -> the call using it
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def take(value: ast.AST) -> None:
        if isinstance(value, (ast.List, ast.Tuple)):
            lists.append(value)
        elif isinstance(value, ast.Name):
            names.add(value.id)
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            take(value.left)
            take(value.right)
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in functions:
            # append_nvcc_threads([...] + cc_flag): the flags it is given and the words it adds
            function = functions.pop(value.func.id)
            for arg in value.args:
                take(arg)
            for ret in (n for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None):
                before = len(lists)
                take(ret.value)
                for added in lists[before:]:
                    called_from[id(added)] = value     # its build is the call's, not the function's

    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "nvcc":
                    take(value)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in FLAG_KEYWORDS:
                    take(kw.value)
                elif kw.arg == "extra_compile_args" and isinstance(kw.value, ast.Call) \
                        and isinstance(kw.value.func, ast.Name) and kw.value.func.id == "dict":
                    for inner in kw.value.keywords:
                        if inner.arg == "nvcc":
                            take(inner.value)
    return lists, names, called_from


def _library_lists(tree: ast.AST) -> list[ast.AST]:
    return [kw.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == "libraries" and isinstance(kw.value, (ast.List, ast.Tuple))]


def _libraries(ctx: ScanContext, table: BuildTable, value: ast.AST, data: bytes, offsets: list[int]) -> None:
    for element in value.elts:   # type: ignore[attr-defined]
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            continue
        lib = table.by_link.get(element.value)
        if lib is None:
            continue
        start, end = _span(element, offsets)
        if lib.hip_link:
            quote = data[start:start + 1].decode("latin-1")
            ctx.edit(start, end, f"{quote}{lib.hip_link}{quote}".encode(), "build", kind=EditKind.BUILD)
        else:
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, start, end, f"library `{element.value}`: {lib.why}", element.value)


def _single(ctx: ScanContext, table: BuildTable, call: ast.Call, offsets: list[int]) -> None:
    """flags.append("--use_fast_math"): a one-word list; a dropped word removes nothing but is noted."""
    words = _words(ast.List(elts=call.args[:1]), ctx.source.data, offsets)
    if not words:
        return
    result = translate(words, table, ctx.options.offload_arch)
    for change in result.changes:
        if change.words == []:   # deleting the argument would leave append(): keep it, say so
            message = change.message.replace(" dropped: ", " is not for hipcc: ", 1)
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, words[0].start, words[0].end, f"{message}; remove this append",
                 change.subject or words[0].text)
            change.words, change.code = None, ""
    apply(ctx, words, result, style="python")


def _words(value: ast.AST, data: bytes, offsets: list[int]) -> list[Word]:
    words = []
    for element in getattr(value, "elts", []):
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            start, end = _span(element, offsets)
            raw = data[start:end].decode("utf-8", "replace")
            if raw[:1] in "\"'" and raw[1:2] != raw[:1]:     # plain one-line literals only
                words.append(Word(raw, start, end))
    return words


def _line_offsets(data: bytes) -> list[int]:
    """offsets[n] = byte offset of line n (1-based, as ast counts)."""
    return [0, 0] + [m.end() for m in re.finditer(rb"\n", data)]


def _span(node: ast.AST, offsets: list[int]) -> tuple[int, int]:
    return (offsets[node.lineno] + node.col_offset,               # type: ignore[attr-defined]
            offsets[node.end_lineno] + node.end_col_offset)       # type: ignore[attr-defined]
