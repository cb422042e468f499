"""Text from the scanned tree made safe for a terminal: control characters shown, never sent.

File names, messages, snippets and compiler output come from the tree, and a terminal acts on
some characters instead of showing them: ESC starts sequences that set the window title, move
the cursor, erase a line or write to the clipboard; C1 controls (U+0080-U+009F, CSI is U+009B)
do the same on terminals that read them; BEL, backspace, carriage return and DEL overwrite or
hide what is shown; the bidirectional overrides (U+202A-U+202E, U+2066-U+2069) reorder it
("Trojan Source"). Every text output passes such text through `safe` (or a diff through
`safe_diff`), which shows each of them as `\\xNN` (`\\uNNNN` above U+00FF): visible, and never
acted on. A byte that is not UTF-8 (a file name's, kept as a surrogate by Python) is shown as
`\\xNN` too, so that a strict UTF-8 stdout cannot fail on it.

A backslash in the text itself is left as it is: C code is full of `"\\n"` and `"\\x1b"`, and
doubling every backslash would make snippets unreadable. So `\\x1b` in the output is either an
escaped ESC or those four characters in the source; it is never an ESC.

Machine formats are not terminals: JSON and SARIF escape these characters their own way
(report/json.py), HTML escapes markup, CSV keeps the data.
"""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069"
# C0 (tab and line breaks included: in a field they are data, not portkit's layout), DEL, C1,
# the bidirectional overrides and isolates, and every surrogate (undecodable bytes)
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
# In a diff, tab and form feed are the file's own layout (GNU sources put ^L between sections)
# and a byte that is not UTF-8 is the file's own text (latin-1 comments): kept, so the diff of
# such files still applies as a patch. The bytes 0x80-0x9f are C1 controls to an 8-bit terminal.
_UNSAFE_IN_DIFF = re.compile(f"[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f{_BIDI}\udc80-\udc9f]")
_LINE = re.compile(r"([^\r\n]*)(\r\n?|\n|\Z)")


def _shown(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:   # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: object) -> str:
    """`text` (str() of it) with every character a terminal would act on shown as `\\xNN`."""
    text = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_shown, text) if _UNSAFE.search(text) else text


def safe_diff(diff: bytes) -> bytes:
    """A unified diff for the terminal: each line's body made safe, its line ending, tabs, form
    feeds and non-UTF-8 text kept (a diff without control characters comes back unchanged)."""
    text = diff.decode("utf-8", "surrogateescape")
    if not _UNSAFE_IN_DIFF.search(text):
        return diff
    out = "".join(_UNSAFE_IN_DIFF.sub(_shown, m.group(1)) + m.group(2) for m in _LINE.finditer(text))
    return out.encode("utf-8", "surrogateescape")
