"""TOML that someone else wrote (a project's configuration, its mapping files), read to one reason on failure."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


# tomllib's memory grows with the square of a dotted key's parts: `a.a.a...` of 100,000 parts (a
# 200 KB pyproject.toml) took 24 GB and the machine's OOM killer; 10,000 take 400 MB. A key is on
# one line, so no line may hold more dots than this (a real one holds a few).
MAX_DOTS_PER_LINE = 256


def untrusted(text: str) -> dict:
    """The document in `text`; whatever is wrong with it is a ValueError with one reason. tomllib
    raises its own error for bad syntax, but a bare ValueError for an integer of more than 4300
    digits (int()'s limit) and RecursionError for arrays or tables nested about 1000 deep."""
    if text.count(".") > MAX_DOTS_PER_LINE:   # cheap: only a file with many dots is looked at by line
        for number, line in enumerate(text.splitlines(), 1):
            if line.count(".") > MAX_DOTS_PER_LINE:
                raise ValueError(f"line {number} holds more than {MAX_DOTS_PER_LINE} dots (a dotted key "
                                 f"of that many parts is not read)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except ValueError:
        raise ValueError("an integer with more than 4300 digits") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
