"""The shipped tables' TOML documents, kept as JSON in the user's cache (core/datacache.py).

tomllib is pure Python: parsing the tables a scan reads (the HIP device-function signatures,
the ecosystem, the rewrite catalogue, the small tables) took about 25 ms of every `portkit
check`; json, in C, reads the same documents back in a few. The document is what tomllib
returns (dicts, lists, strings, numbers, booleans), so every loader validates it as before.

Only the files shipped with portkit are kept (mappings/, tables_dir()): a table a test or a
user names elsewhere is parsed as it is each time. A document JSON cannot hold (a TOML date)
is simply not kept; a file that does not parse raises what tomllib raises, and nothing is kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def load(path: Path) -> dict:
    """The TOML document at `path` (OSError, UnicodeDecodeError and tomllib's error as tomllib
    and reading raise them)."""
    from .mappings import tables_dir
    shipped = tables_dir()
    if path.parent != shipped and path.parent.resolve() != shipped.resolve():
        return _parse(path)
    from .. import datacache
    return datacache.cached(f"toml-{path.stem}", [path], (Path(__file__),), lambda: _parse(path),
                            _same, _document)


def _parse(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _same(doc: dict) -> dict:
    return doc


def _document(plain: object) -> dict:
    if not isinstance(plain, dict):
        raise ValueError("not a document")   # datacache.cached: build it again
    return plain
