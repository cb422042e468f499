"""A PyTorch extension's nvcc flags for ROCm, beside the NVIDIA ones (setup.py with CUDAExtension).

PyTorch for ROCm hipifies a CUDAExtension's sources itself and hands `extra_compile_args["nvcc"]`
to hipcc, so a port keeps the sources and the NVIDIA build and gives hipcc its own flags, as the
maintainers of extensions with AMD ports write it (mamba's and causal-conv1d's `if HIP_BUILD:`).
Each place that builds nvcc words is judged by the `if` tests around it:
- inside the ROCm branch the file already has (`torch.version.hip`, IS_HIP_EXTENSION, ROCM_HOME or
  HIP_HOME, or a name set from them): translated in place, it only reaches hipcc;
- inside its NVIDIA branch (the else, or `if not ...`): left byte for byte;
- reaching both: a list becomes `([hipcc's] if TEST else [the original])`, an `.append("w")` of
  consecutive appends `.append("w'" if TEST else "w")` or, dropped, `if not TEST: .append("w")`.
TEST is the file's own name for the ROCm build, else `torch.version.hip`, else IS_HIP_EXTENSION
(imported beside the file's cpp_extension import). Nothing is executed.
"""

from __future__ import annotations

import ast

from ..core.edits import EditKind
from ..engine.context import ScanContext
from .nvcc import Translation, Word, translate
from .table import BuildTable
from .words import apply, note, report
from ..engine.codes import Code

ROCM_NAMES = {"IS_HIP_EXTENSION", "ROCM_HOME", "HIP_HOME"}


def is_torch_extension(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith("torch.utils.cpp_extension")
               for n in ast.walk(tree))


class Branches:
    """Which build each node of the file runs in, and how the file names the ROCm build."""

    def __init__(self, tree: ast.Module, data: bytes):
        self.parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.names = set(ROCM_NAMES)
        for node in tree.body:           # HIP_BUILD = bool(torch.version.hip) and the like
            if isinstance(node, ast.Assign) and self.vendor_test(node.value) is True:
                self.names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        own = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
               if isinstance(t, ast.Name) and t.id in self.names and t.id not in ROCM_NAMES]
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names}
        self.import_at = None
        if own:
            self.test = own[0]
        elif "IS_HIP_EXTENSION" in imported:
            self.test = "IS_HIP_EXTENSION"
        elif "torch" in imported:
            self.test = "torch.version.hip"
        else:
            self.test = "IS_HIP_EXTENSION"
            anchor = next(n for n in tree.body if isinstance(n, ast.ImportFrom)
                          and (n.module or "").startswith("torch.utils.cpp_extension"))
            self.import_at = anchor

    def vendor_test(self, test: ast.AST) -> bool | None:
        """True: the test holds on ROCm only; False: on NVIDIA only; None: not a vendor test."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.vendor_test(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "bool" and test.args:
            return self.vendor_test(test.args[0])
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None:
            inner = self.vendor_test(test.left)
            if inner is None or not isinstance(test.ops[0], (ast.Is, ast.IsNot)):
                return None
            return inner if isinstance(test.ops[0], ast.IsNot) else not inner
        if isinstance(test, ast.Name):
            return True if test.id in getattr(self, "names", ROCM_NAMES) else None
        if isinstance(test, ast.Attribute) and test.attr == "hip" and isinstance(test.value, ast.Attribute) \
                and test.value.attr == "version":
            return True
        return None

    def side(self, node: ast.AST) -> str:
        """"rocm", "nvidia" or "both": the builds that run `node`."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                rocm = self.vendor_test(parent.test)
                if rocm is not None:
                    in_body = child in parent.body if isinstance(parent, ast.If) else child is parent.body
                    return "rocm" if rocm == in_body else "nvidia"
            child, parent = parent, self.parents.get(parent)
        return "both"


def migrate_list(ctx: ScanContext, table: BuildTable, branches: Branches, node: ast.AST,
                 words: list[Word], judged: ast.AST) -> bool:
    """One list literal of nvcc words, run where `judged` runs; True when an edit was made (the
    import may be needed)."""
    side = branches.side(judged)
    if side == "nvidia" or not words:
        return False
    # words the file already gives hipcc alone are hipcc's: only nvcc's own options change there
    result = translate(words, table, ctx.options.offload_arch, nvcc_context=side == "both", rocm_branch=True)
    if side == "rocm":
        apply(ctx, words, result, style="python")
        return False
    report(ctx, words, result)
    if not any(c.words is not None for c in result.changes):
        return False
    start, end = _bounds(ctx.source.data, node, words)
    original = ctx.source.data[start:end]
    hip = _rewritten(ctx, words, result, start, original)
    ctx.edit(start, end, b"(" + hip + b" if " + branches.test.encode() + b" else " + original + b")",
             "build", kind=EditKind.BUILD)
    return True


def _bounds(data: bytes, node: ast.AST, words: list[Word]) -> tuple[int, int]:
    """The list's brackets: from the `[` before its first word to the `]` after its last."""
    start = data.rindex(b"[", 0, words[0].start)
    end = data.index(b"]", words[-1].end) + 1
    return start, end


class _Edits:
    """Stands in for the context while words.apply lays out the hipcc list: it keeps the edits."""

    def __init__(self, ctx: ScanContext):
        self.source, self.options, self.edits = ctx.source, ctx.options, []

    def edit(self, start, end, text, *args, **kwargs):
        self.edits.append((start, end, text))

    def flag(self, *args, **kwargs):
        pass


def _rewritten(ctx: ScanContext, words: list[Word], result: Translation, start: int, original: bytes) -> bytes:
    recorder = _Edits(ctx)
    apply(recorder, words, result, style="python")     # type: ignore[arg-type]
    text = original
    for s, e, new in sorted(recorder.edits, key=lambda x: -x[0]):
        text = text[:s - start] + new + text[e - start:]
    if not text[1:-1].strip(b" \t\r\n,"):
        return b"[]"        # every word was nvcc's (a list of -gencode): a comma left alone is no list
    return text


def migrate_appends(ctx: ScanContext, table: BuildTable, branches: Branches, calls: list[ast.Call],
                    words: list[Word]) -> bool:
    """Consecutive `flags.append("w")` statements, read as one list of words (`-gencode`, then
    its `arch=...` in the next append)."""
    side = branches.side(calls[0])
    if side == "nvidia":
        return False
    result = translate(words, table, ctx.options.offload_arch, nvcc_context=side == "both", rocm_branch=True)
    if side == "rocm":
        apply(ctx, words, result, style="python")
        return False
    report(ctx, words, result)
    new: list[list[str] | None] = [None] * len(words)
    for change in result.changes:
        if change.words is not None:
            new[change.first] = change.words
            for k in range(change.first + 1, change.last):
                new[k] = []
    test = branches.test.encode()
    if all(r == [] for r in new) and all(c.lineno == c.end_lineno for c in calls):
        _wrap(ctx, calls, test)     # the whole run is NVIDIA's: under `if not TEST:`, as a person writes it
        return True
    edited = False
    for call, word, replacement in zip(calls, words, new):
        if replacement is None:
            continue
        edited = True
        if replacement == []:
            statement = _statement_start(ctx.source.data, call)
            ctx.edit(statement, statement, b"if not " + test + b": ", "build", kind=EditKind.BUILD)
        elif len(replacement) == 1:
            quote = word.text[:1]
            ctx.edit(word.start, word.end, f"{quote}{replacement[0]}{quote} if ".encode() + test + b" else "
                     + word.text.encode(), "build", kind=EditKind.BUILD)
        else:       # one append cannot pass several words: a person writes them in the ROCm branch
            edited = False
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, word.start, word.end, f"hipcc takes {' '.join(replacement)} "
                 f"here: append them when {branches.test}", word.text)
    return edited


def _wrap(ctx: ScanContext, calls: list[ast.Call], test: bytes) -> None:
    data = ctx.source.data
    starts = [_statement_start(data, call) for call in calls]
    indent = data[data.rfind(b"\n", 0, starts[0]) + 1:starts[0]]
    ctx.edit(starts[0], starts[0], b"if not " + test + b":\n" + indent + b"    ", "build", kind=EditKind.BUILD)
    for start in starts[1:]:
        ctx.edit(start, start, b"    ", "build", kind=EditKind.BUILD)


def _statement_start(data: bytes, call: ast.Call) -> int:
    line_start = data.rfind(b"\n", 0, _offset(data, call)) + 1
    return line_start + len(data[line_start:]) - len(data[line_start:].lstrip(b" \t"))


def _offset(data: bytes, node: ast.AST) -> int:
    lines = data.split(b"\n")
    return sum(len(line) + 1 for line in lines[:node.lineno - 1]) + node.col_offset


def add_import(ctx: ScanContext, branches: Branches) -> None:
    """`from torch.utils.cpp_extension import IS_HIP_EXTENSION` after the file's own import of it."""
    anchor = branches.import_at
    if anchor is None:
        return
    data = ctx.source.data
    lines = data.split(b"\n")
    end = min(len(data), sum(len(line) + 1 for line in lines[:anchor.end_lineno]))
    ctx.edit(end, end, b"from torch.utils.cpp_extension import IS_HIP_EXTENSION\n", "build", kind=EditKind.BUILD)
