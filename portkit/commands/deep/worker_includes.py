"""Files a unit's directives could make a compiler open that are not regular files, found from
its text before the compiler runs, so that it is given an empty stand-in instead.

clang opens every file an `#include` names and reads it to its end: `#include "/dev/zero"` grew
the deep worker by gigabytes in seconds, a FIFO in the tree blocked its open forever, and
`/proc/self/environ` is the scanning process's secrets. libclang reads an "unsaved file" of the
same name instead of the disk, and a device's stand-in covers every spelling of it (clang matches
it by inode), but a FIFO is opened before that match: its stand-in must carry the very spelling
clang builds (the directory as given, "/", the name as written), which `candidates` reproduces.

The text is a tree's and may try to hide a directive: comments and backslash-newlines are taken
out first, `__has_include`, `#include_next`, `#import`, `#embed` and `#pragma GCC dependency`
count, and a computed `#include NAME` is resolved through the `#define NAME "..."` (or an alias
of it) the scanned files hold. What text alone cannot resolve is left to the worker's memory
limit and the per-file time limit. Only the project's own files (under the root) are read for
directives: the system's and the toolkit's headers are trusted. Imports nothing of portkit, so
that the worker stays cheap to start (verify uses it as well).
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from dataclasses import dataclass, field

# comments become a space and backslash-newlines vanish, as in translation phases 2-3; strings,
# raw strings (R"x( /* )x"), character literals and numbers with digit separators (1'000) are
# kept whole, so that a `/*` inside one, or a quote that is none, cannot hide the lines after it
_LEX = re.compile(rb"(?=[\\/\"'RuUL0-9.])(?:"     # the look-ahead: 4x faster on real code
                  rb'\\\r?\n|//(?:[^\n\\]|\\.)*|/\*.*?(?:\*/|\Z)|(?<!\w)(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(.*?\)\1"'
                  rb"|(?<![\w.])\.?\d(?:[eEpP][+-]|[\w.])*'\w(?:'\w|[eEpP][+-]|[\w.])*"   # only numbers with a quote
                  rb'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')', re.S)
_NAME = rb'(?:"([^"\n]*)"|<([^>\n]*)>|([A-Za-z_]\w*))'
_DIRECTIVE = re.compile(rb'^[ \t]*#[ \t]*(?:include_next|include|import|embed|pragma[ \t]+GCC[ \t]+dependency)'
                        rb'[ \t]*' + _NAME, re.M)
_HAS = re.compile(rb'__has_(?:include_next|include|embed)[ \t]*\([ \t]*' + _NAME)
_DEFINE = re.compile(rb'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+' + _NAME + rb'[ \t]*$', re.M)
_SEARCH_FLAGS = {"-I": "angle", "-isystem": "angle", "-idirafter": "angle", "--include-directory": "angle",
                 "-iquote": "quote", "--embed-dir": "angle"}
_FORCED_FLAGS = ("-include", "-imacros", "--include")
_OPTIONS = (*_SEARCH_FLAGS, *_FORCED_FLAGS)   # every option that names a folder or a file
NEWLINE = b"\n"
# names one file is read under: `#include "./x.h"` in x.h would make new ones until clang's depth
# limit; past these few, a FIFO named from it is left to the per-file time limit
SPELLINGS = 8
_SPECIAL_FS = ("/proc", "/sys", "/dev")   # pseudo-files: endless, blocking, or the process's own secrets
# a regular file past this is read as empty too: what portkit reads of one file from a tree at most
# (core/files.MAX_FILE_BYTES; this module imports nothing of portkit), and a compiler holds all of it
MAX_INCLUDE_BYTES = 64 << 20


@dataclass
class Blocked:
    """What the scan found: stand-ins for the compiler, and one line per directive that reached one."""

    stand_ins: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)   # every project file the walk read (verify's cache key)


def clean(data: bytes) -> tuple[bytes, list[int], list[int]]:
    """The text without comments and line splices, with (cleaned offset, original offset) pairs
    to find the original line of a cleaned position."""
    out, at, orig = [], [0], [0]
    last, size = 0, 0
    for m in _LEX.finditer(data):
        token = m.group()
        if token[:1] not in (b"/", b"\\"):
            continue      # a literal: kept as it is
        out.append(data[last:m.start()])
        size += m.start() - last
        keep = b" " if token[:1] == b"/" else b""
        out.append(keep)
        size += len(keep)
        last = m.end()
        at.append(size)
        orig.append(last)
    out.append(data[last:])
    return b"".join(out), at, orig


def search_dirs(flags: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(-iquote dirs, the other search dirs in order, forced includes) from compiler flags."""
    quote, angle, forced = [], [], []
    i = 0
    while i < len(flags):
        flag = flags[i]
        for option in _OPTIONS:
            if flag == option and i + 1 < len(flags):
                value, i = flags[i + 1], i + 1
            elif flag.startswith(option) and flag != option and not flag.startswith(option + "-"):
                value = flag[len(option):].lstrip("=")
            else:
                continue
            target = forced if option in _FORCED_FLAGS else quote if _SEARCH_FLAGS[option] == "quote" else angle
            target.append(value)
            break
        i += 1
    return quote, angle, forced


def scan(unit: str, flags: list[str], root: str) -> Blocked:
    """The stand-ins one unit needs and the notes on them: its directives, and those of every
    project file they reach, resolved as clang resolves them."""
    return _Scan(root, flags).run(unit)


class _Scan:
    """One unit's walk over its project files' directives."""

    def __init__(self, root: str, flags: list[str]):
        self.roots = [os.path.join(os.path.abspath(root), ""), os.path.join(os.path.realpath(root), "")]
        self.quote, self.angle, self.forced = search_dirs(flags)
        self.special = {}
        for name in _SPECIAL_FS:
            try:
                self.special.setdefault(os.stat(name).st_dev, name)
            except OSError:
                continue
        self.found = Blocked()
        self.directives: dict[str, list] = {}       # real path -> parse(): each file is read once
        self.spellings: dict[str, set[str]] = {}    # real path -> the names clang reads it under
        self.todo: list[str] = []
        self.defines: dict[str, list[tuple[bool | None, str]]] = {}   # NAME -> its "..."/<...>/alias bodies
        self.computed: list[tuple[str, tuple, str, str]] = []         # (includer, (file, line), directive, NAME)
        self.notes: list[tuple[tuple[str, int], str]] = []            # ((file, line), what it names)

    def run(self, unit: str) -> Blocked:
        self.spellings[os.path.realpath(unit)] = {unit}
        self.todo.append(unit)
        for forced in self.forced:    # -include FILE: looked up from the working directory first
            self.check(os.path.join(os.getcwd(), "-"), ("", 0), f"-include {forced}", True, forced)
        done = 0
        while self.todo or done < len(self.computed):
            while self.todo:
                self.read(self.todo.pop())
            for includer, where, directive, name in self.computed[done:]:
                for quoted, spelled in self.expand(name):
                    self.check(includer, where, directive, quoted, spelled)
            done = len(self.computed)
        self.found.notes = [f"{f}:{n}: {text}" if f else f"the command line: {text}"
                            for (f, n), text in sorted(dict.fromkeys(self.notes))]
        self.found.files = sorted(self.directives)
        return self.found

    def read(self, path: str) -> None:
        """Check the file's directives from where clang reads it under this name (a quoted name is
        looked up beside it); its text is read and parsed once, whatever the names."""
        real = os.path.realpath(path)
        if real not in self.directives:
            self.directives[real] = self.parse(path)
        for where, directive, quoted, spelled in self.directives[real]:
            if quoted is None:
                self.computed.append((path, where, directive, spelled))
            else:
                self.check(path, where, directive, quoted, spelled)

    def parse(self, path: str) -> list[tuple[tuple[str, int], str, bool | None, str]]:
        """((file, line), directive, quoted or None for a macro name, name) of each directive;
        the file's `#define NAME "..."` go to self.defines."""
        data = read_regular(path)
        if b"#" not in data and b"__has_" not in data:
            return []
        text, at, orig = clean(data)
        for m in _DEFINE.finditer(text):
            quoted = True if m.group(2) is not None else False if m.group(3) is not None else None
            body = m.group(2) or m.group(3) or m.group(4) or b""
            self.defines.setdefault(m.group(1).decode(), []).append((quoted, _decode(body)))
        found = []
        for m in list(_DIRECTIVE.finditer(text)) + list(_HAS.finditer(text)):
            i = bisect.bisect_right(at, m.start()) - 1
            directive = " ".join(_decode(m.group()).split()) + (")" if m.group().startswith(b"__has") else "")
            quoted = None if m.group(3) is not None else m.group(1) is not None
            name = next(g for g in m.groups() if g is not None)
            found.append((orig[i] + m.start() - at[i], directive, quoted, _decode(name)))
        found.sort(key=lambda f: f[0])
        shown, line, last, out = self.shown(path), 1, 0, []
        for offset, directive, quoted, spelled in found:    # lines counted once, front to back
            line += data.count(NEWLINE, last, offset)
            last = offset
            out.append(((shown, line), directive, quoted, spelled))
        return out

    def expand(self, name: str, depth: int = 0) -> list[tuple[bool, str]]:
        """The header names a macro may stand for, through aliases (`#define A B`), a few deep."""
        out: list[tuple[bool, str]] = []
        for quoted, body in self.defines.get(name, ()):
            if quoted is not None:
                out.append((quoted, body))
            elif depth < 8:
                out += self.expand(body, depth + 1)
        return out

    def candidates(self, includer: str, quoted: bool, spelled: str) -> list[str]:
        """Every path the name may be found at, in clang's search order (the includer's folder
        and -iquote first for "...")."""
        if os.path.isabs(spelled):
            return [spelled]
        dirs = ([os.path.dirname(includer)] + self.quote if quoted else []) + self.angle
        return [os.path.join(d, spelled) for d in dirs]

    def check(self, includer: str, where: tuple[str, int], directive: str, quoted: bool, spelled: str) -> None:
        """Stand-ins for the name's non-regular candidates; the note for the one clang opens;
        the file clang reads, when it is the project's, read for its own directives under
        each name it is reached by (a FIFO's stand-in must be spelled as clang spells it)."""
        first = True
        for path in self.candidates(includer, quoted, spelled):
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                continue
            if stat.S_ISDIR(st.st_mode):
                continue      # clang passes over a folder of that name and searches on
            if self.blocked(st):
                self.stand_in(path, st)
                if first:
                    self.notes.append((where, f"{directive} names {self.shown(path)}, {self.why(path, st)}"))
            elif first:
                real = os.path.realpath(path)
                names = self.spellings.setdefault(real, set())
                if path not in names and len(names) < SPELLINGS and any(real.startswith(r) for r in self.roots):
                    names.add(path)
                    self.todo.append(path)
            first = False

    def blocked(self, st: os.stat_result) -> bool:
        return not stat.S_ISREG(st.st_mode) or st.st_dev in self.special or st.st_size > MAX_INCLUDE_BYTES

    def why(self, path: str, st: os.stat_result) -> str:
        if stat.S_ISREG(st.st_mode) and st.st_dev not in self.special:
            return f"a file of {st.st_size >> 20} MiB, larger than the {MAX_INCLUDE_BYTES >> 20} MiB a unit may include"
        return f"{self.kind(path, st)}, not a regular file"

    def stand_in(self, path: str, st: os.stat_result) -> None:
        """The path as clang spells it, and its usual variants, where they are the same file."""
        for name in dict.fromkeys([path, os.path.normpath(path), os.path.abspath(path), os.path.realpath(path)]):
            try:
                same = os.stat(name)
            except (OSError, ValueError):
                continue
            if (same.st_dev, same.st_ino) == (st.st_dev, st.st_ino) and name not in self.found.stand_ins:
                self.found.stand_ins.append(name)

    def kind(self, path: str, st: os.stat_result) -> str:
        what = ("a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode)
                else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else f"a file of {self.special.get(st.st_dev, 'a pseudo file system')}")
        real = os.path.realpath(path)
        if real == os.path.abspath(path) or os.path.isabs(self.shown(path)):
            return what       # a link of the system's (/dev/stdin -> /proc/PID/fd/0): named as written
        return f"a link to {real}, {what}"

    def shown(self, path: str) -> str:
        full = os.path.abspath(path)
        for root in self.roots:
            if full.startswith(root):
                return full[len(root):]
        return full


def read_regular(path: str) -> bytes:
    """A regular file's bytes, opened without blocking and checked on the descriptor; b"" else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_INCLUDE_BYTES:
            return b""   # what clang was given as empty is empty here too (blocked)
        # its size and a byte more, as core/files.read_regular reads (not a 64 MiB buffer per header)
        data = handle.read(st.st_size + 1)
        if len(data) > st.st_size:   # it grew meanwhile: what follows, and a file growing still stops here
            data += handle.read(MAX_INCLUDE_BYTES + 1 - len(data))
        return data if len(data) <= MAX_INCLUDE_BYTES else b""


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape").strip()
