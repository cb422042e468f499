"""Lines for rich consoles built from data, never parsed as markup: names print as they are.

rich reads `[bold]` as a style, `:100:` as an emoji code (💯) and highlights numbers and paths
in any string it is given. Paths, messages and snippets come from the scanned tree, so every
line that carries them is a `Text` assembled from parts: plain strings and (text, style) pairs.
A `Text` is never re-read for markup or emoji, whatever the console's own settings, and every
part is passed through safe_text.safe: a control character in a name is shown, never sent.
"""

from __future__ import annotations

from typing import Union

from rich.console import Console
from rich.text import Text

from .safe_text import safe

Part = Union[str, "tuple[str, str]"]


def line(*parts: Part, style: str = "") -> Text:
    """One line from plain strings and (text, style) pairs; nothing in a part is interpreted."""
    return Text.assemble(*(safe(p) if isinstance(p, str) else (safe(p[0]), p[1]) for p in parts), style=style)


def say(console: Console, *parts: Part, style: str = "") -> None:
    """Print one line of parts verbatim (no markup, emoji codes or highlighting), unwrapped."""
    console.print(line(*parts, style=style), soft_wrap=True, highlight=False, markup=False, emoji=False)


def cell(text: object) -> Text:
    """A table cell holding data: shown as it is (control characters escaped)."""
    return Text(safe(text))
