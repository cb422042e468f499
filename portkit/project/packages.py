"""The Python packages a project is: never priced, nor reported, as its own dependency.

apex's tests `import apex`, flash-attention's `import flash_attn`: an import of the project's own
package is the project, not a CUDA-only dependency to replace (issue 30's "a project priced as its
own dependency"). Read from the tree, no Python run: every top-level directory (or one under
`src/`) holding an `__init__.py`, and the distribution names `pyproject.toml` (`[project] name`)
and a root `setup.py` (`name="..."`) declare. Names are normalized as PEP 503 does.
"""

from __future__ import annotations

import re
import sys

from ..core.files import Entry, read
from ..tables.ecosystem import normalize

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_SETUP_NAME = re.compile(rb"""\bname\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']""")


def package_dir(rel: str) -> str | None:
    """The top-level directory a file would belong to as a package (`X/...` or `src/X/...`: X);
    None for a file at the root."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return parts[0] if len(parts) > 1 else None


def own_packages(entries: list[Entry]) -> frozenset[str]:
    """The normalized names of the packages the tree itself provides."""
    found: set[str] = set()
    for entry in entries:
        parts = entry.rel.split("/")
        if parts[-1] == "__init__.py" and len(parts) > 1 and package_dir(entry.rel) == parts[-2]:
            found.add(normalize(parts[-2]))
        elif entry.rel in ("pyproject.toml", "setup.py"):
            name = _declared_name(entry)
            if name:
                found.add(normalize(name))
    return frozenset(found)


def _declared_name(entry: Entry) -> str | None:
    data, skipped = read(entry)
    if data is None or skipped is not None:
        return None
    if entry.rel == "setup.py":
        match = _SETUP_NAME.search(data)
        return match.group(1).decode("ascii") if match else None
    try:
        name = tomllib.loads(data.decode("utf-8")).get("project", {}).get("name")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return None   # a pyproject.toml that does not read names nothing (its own findings say why)
    return name if isinstance(name, str) else None
