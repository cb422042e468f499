"""TOML that someone else wrote (a project's configuration, its mapping files), read to one reason on failure."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def untrusted(text: str) -> dict:
    """The document in `text`; whatever is wrong with it is a ValueError with one reason. tomllib
    raises its own error for bad syntax, but a bare ValueError for an integer of more than 4300
    digits (int()'s limit) and RecursionError for arrays or tables nested about 1000 deep."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except ValueError:
        raise ValueError("an integer with more than 4300 digits") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
