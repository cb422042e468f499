"""nvcc command-line words to hipcc words: the one translator every build format uses.

A build format (CMake, Make, setup.py) finds the words that reach nvcc, with their byte
positions, and hands them here; it gets back changes (replace words i..j by these words) and
notes. It never guesses: GPU targets are the ones the user chose (--offload-arch), an option
clang does not need is dropped with the reason, and an option with no counterpart or one the
table does not know is left in place and reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .table import BuildTable, Flag
from ..engine.codes import Code

# Words that nvcc and clang spell alike; never reported as unknown (prefix match).
SHARED_PREFIXES = ("-I", "-D", "-U", "-L", "-std=", "--std=", "-isystem", "-include", "-W", "-O", "-M")
# Words that are not options at all: make/cmake variable references, file names, values.
_ARCH_NUMBER = re.compile(r"(?:sm|compute|lto)_([0-9]+[a-z]?|\$\(\w+\)|\$\{\w+\})")


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int


@dataclass
class Change:
    """Replace words[first:last] by `words` (None: leave them, only report)."""

    first: int
    last: int
    words: list[str] | None
    code: str = ""         # "PK508" (not migrated) or "PK509" (a choice made for the user), or ""
    message: str = ""
    subject: str = ""


@dataclass
class Translation:
    changes: list[Change] = field(default_factory=list)
    archs: list[str] = field(default_factory=list)     # the CUDA targets that were replaced

    def deleted(self) -> set[int]:
        """Indices of the words the changes remove."""
        return {k for c in self.changes if c.words == [] for k in range(c.first, c.last)}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _split_flag(word: str, table: BuildTable) -> tuple[Flag | None, str, str | None]:
    """(the flag, the spelling used, its value when written with '=')."""
    text = _unquote(word)
    if text in table.flags:
        return table.flags[text], text, None
    if "=" in text:
        name, _, value = text.partition("=")
        flag = table.flags.get(name)
        if flag is not None and flag.value:
            return flag, name, value
    return None, text, None


def is_unknown_option(text: str) -> bool:
    """An option-looking word nvcc takes that clang may not (reported when the table lacks it)."""
    text = _unquote(text)
    if not text.startswith("-") or text in ("-", "--") or text.startswith(("-l", "-Wl,")):
        return False
    return not text.startswith(SHARED_PREFIXES)


def translate(words: list[Word], table: BuildTable, targets: tuple[str, ...],
              nvcc_context: bool = True, rocm_branch: bool = False) -> Translation:
    """Changes that turn nvcc words into hipcc words.

    `nvcc_context`: the words certainly reach nvcc (its command line, a CUDA flags variable);
    only there are unknown options reported. Elsewhere only what is unambiguously nvcc's
    (GPU architectures, -Xcompiler ...) and -l libraries change.
    `rocm_branch`: the words are the ROCm side of a build that keeps its NVIDIA side (a PyTorch
    extension's setup.py): an option hipcc lacks is dropped there, since NVIDIA keeps it, and GPU
    targets are left to PyTorch's PYTORCH_ROCM_ARCH.
    """
    out = Translation()
    arch_change: Change | None = None
    i = 0
    while i < len(words):
        word = words[i].text
        lib = _library(word, table)
        if lib is not None:
            out.changes.append(lib(i))
            i += 1
            continue
        flag, name, value = _split_flag(word, table)
        if flag is None:
            if nvcc_context and is_unknown_option(word):
                out.changes.append(Change(i, i + 1, None, Code.BUILD_STEP_NOT_MIGRATED,
                                          f"`{_unquote(word)}`: not an option portkit knows for nvcc; kept as is, "
                                          "check that hipcc accepts it", _unquote(word)))
            i += 1
            continue
        if not nvcc_context and flag.action in ("keep", "drop", "translate") and name in _AMBIGUOUS:
            i += 1
            continue
        last = i + 1
        if flag.value and value is None:
            if i + 1 < len(words):
                value = _unquote(words[i + 1].text)
                last = i + 2
            else:
                value = ""
        shown = " ".join(_unquote(w.text) for w in words[i:last])
        if flag.action == "arch":
            out.archs += [m.group(1) for m in _ARCH_NUMBER.finditer(value or name)]
            if arch_change is None:
                arch_change = Change(i, last, [f"--offload-arch={t}" for t in targets],
                                     Code.BUILD_MIGRATION_CHOICE, "", shown)
                out.changes.append(arch_change)
            else:
                out.changes.append(Change(i, last, []))
        else:
            out.changes += _flag_changes(flag, i, last, value, shown, table, targets, nvcc_context)
            if rocm_branch and out.changes and out.changes[-1].first == i and out.changes[-1].words is None \
                    and flag.action == "report":
                out.changes[-1] = Change(i, last, [], Code.BUILD_MIGRATION_CHOICE,
                                         f"`{shown}` left to the NVIDIA build, dropped from hipcc's: {flag.why}", shown)
        i = last
    if arch_change is not None:
        _arch_message(arch_change, out.archs, targets, rocm_branch)
    return out


def _arch_message(change: Change, archs: list[str], targets: tuple[str, ...], rocm_branch: bool) -> None:
    """The note of the one change that stands for every GPU target of the list."""
    found = ", ".join(dict.fromkeys(f"sm_{a}" for a in archs)) or change.subject
    if rocm_branch:     # PyTorch for ROCm: its own --offload-arch per PYTORCH_ROCM_ARCH target
        change.words = []
        change.message = (f"GPU targets {found} left to the NVIDIA build: PyTorch for ROCm adds --offload-arch "
                          f"for each target in PYTORCH_ROCM_ARCH (PYTORCH_ROCM_ARCH=\"{';'.join(targets)}\")")
        return
    change.message = (f"GPU targets {found} replaced by {', '.join(targets)} (--offload-arch); "
                      "AMD chips do not correspond to sm_XX, choose them with --offload-arch")


def _flag_changes(flag: Flag, i: int, last: int, value: str | None, shown: str, table: BuildTable,
                  targets: tuple[str, ...], nvcc_context: bool) -> list[Change]:
    """The changes for one nvcc option (words i..last) other than a GPU architecture."""
    if flag.action == "keep":
        return []
    if flag.action == "translate" and not value and any("{value}" in h for h in flag.hip):
        # `--default-stream` at the end of its list: its value is elsewhere (another variable,
        # the next line's list). Never `-fgpu-default-stream=` with the value left behind.
        return [Change(i, last, None, Code.BUILD_STEP_NOT_MIGRATED, f"`{shown}`: its value is not beside it; "
                       "kept as is, write the hipcc option with its value", shown)]
    if flag.action == "drop":
        return [Change(i, last, [], Code.BUILD_MIGRATION_CHOICE, f"`{shown}` dropped: {flag.why}", shown)]
    if flag.action == "report":
        return [Change(i, last, None, Code.BUILD_STEP_NOT_MIGRATED, f"`{shown}` has no hipcc counterpart: {flag.why}",
                       shown)]
    if flag.action == "split":
        parts = [p for p in re.split(r"[,\s]+", value or "") if p]
        return _passed_through(i, last, parts, table, targets, nvcc_context)
    if flag.when_value is not None and (value or "").lower() != flag.when_value:
        return [Change(i, last, [], Code.BUILD_MIGRATION_CHOICE, f"`{shown}` dropped: it is the default", shown)]
    return [Change(i, last, [h.replace("{value}", value or "") for h in flag.hip])]


def _passed_through(first: int, last: int, parts: list[str], table: BuildTable, targets: tuple[str, ...],
                    nvcc_context: bool) -> list[Change]:
    """-Xcompiler's host flags become hipcc's own words: translated like any other hipcc word now,
    so that converting the result again changes nothing (`-Xcompiler -lcudart` -> `-lamdhip64`)."""
    inner = [Word(p, 0, 0) for p in parts]
    nested = translate(inner, table, targets, nvcc_context=False)   # host flags: never "unknown to nvcc"
    new = list(parts)
    for change in sorted(nested.changes, key=lambda c: -c.first):
        if change.words is not None:
            new[change.first:change.last] = change.words
    notes = [Change(first, last, None, c.code, c.message, c.subject) for c in nested.changes if c.code]
    return [Change(first, last, new)] + notes


# Options whose spelling means something else to gcc/clang: only changed where nvcc reads them.
_AMBIGUOUS = {"-G", "-c", "-o", "-keep", "-t", "-code", "-dc", "-E", "-M"}


def _library(word: str, table: BuildTable):
    """A factory for the change of an `-lNAME` word naming a CUDA library, or None."""
    text = _unquote(word)
    if not text.startswith("-l") or text[2:] not in table.by_link:
        return None
    lib = table.by_link[text[2:]]

    def change(i: int) -> Change:
        if lib.hip_link:
            return Change(i, i + 1, [f"-l{lib.hip_link}"])
        return Change(i, i + 1, None, Code.BUILD_STEP_NOT_MIGRATED, f"`{text}`: {lib.why}", text)
    return change
