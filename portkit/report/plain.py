"""Lines for rich consoles built from data, never parsed as markup: names print as they are.

rich reads `[bold]` as a style, `:100:` as an emoji code (💯) and highlights numbers and paths
in any string it is given. Paths, messages and snippets come from the scanned tree, so every
line that carries them is a `Text` assembled from parts: plain strings and (text, style) pairs.
A `Text` is never re-read for markup or emoji, whatever the console's own settings, and every
part is passed through safe_text.safe: a control character in a name is shown, never sent.
"""

from __future__ import annotations

import weakref
from typing import TextIO, Union

from rich.console import Console
from rich.text import Text

from .safe_text import safe

Part = Union[str, "tuple[str, str]"]


def line(*parts: Part, style: str = "") -> Text:
    """One line from plain strings and (text, style) pairs; nothing in a part is interpreted."""
    return Text.assemble(*(safe(p) if isinstance(p, str) else (safe(p[0]), p[1]) for p in parts), style=style)


def say(console: Console, *parts: Part, style: str = "") -> None:
    """Print one line of parts verbatim (no markup, emoji codes or highlighting), unwrapped."""
    stream = _plain_stream(console)
    if stream is None:
        console.print(line(*parts, style=style), soft_wrap=True, highlight=False, markup=False, emoji=False)
        return
    try:   # what rich writes for such a console, as rich writes it: a line at a time, flushed
        stream.write("".join(safe(p) if isinstance(p, str) else safe(p[0]) for p in parts) + "\n")
        stream.flush()
    except BrokenPipeError:
        console.on_broken_pipe()


_PLAIN: "weakref.WeakKeyDictionary[Console, bool]" = weakref.WeakKeyDictionary()


def _plain_stream(console: Console) -> TextIO | None:
    """The console's file when rich would write a line of parts as their bare text: not a terminal
    (no colour, no styles), nothing recording, capturing or buffering it. A summary of thousands
    of findings (convert's, audit's) is printed this way in a twentieth of rich's time: rich
    renders each line through segments and styles (5,000 lines: 0.29 s, 6% of a convert; 0.014 s here)."""
    plain = _PLAIN.get(console)
    if plain is None:
        plain = _PLAIN[console] = not (console.is_terminal or console.is_jupyter or console.record
                                       or console.color_system)
    if not plain or console.quiet or getattr(console, "_buffer_index", 1):   # inside `with console` / capture()
        return None
    return console.file


def cell(text: object) -> Text:
    """A table cell holding data: shown as it is (control characters escaped)."""
    return Text(safe(text))
