"""portkit: port CUDA C/C++ to AMD HIP, byte-exact, and tell what will not port.

The public API:

    convert_text(source, filename="input.cu", launch_syntax="cuda", rocm=None) -> Converted
    convert_paths(paths, output=..., in_place=..., ...) -> ConvertResult
    audit_paths(paths, rocm=None, select=(), ignore=(), team_size=1, config=True) -> AuditDocument
        (the JSON document of `portkit audit --format json`, typed: docs/json-schema.md)
"""

from __future__ import annotations

from .core.version import __version__

# The API is imported on first use (__getattr__ below), so that `portkit check` (a pre-commit
# hook) and `portkit --version` start without the parser and the tables. Type checkers and IDEs
# read this block instead (mypy and pyright take any name TYPE_CHECKING as true; a plain False
# spares `import portkit` the import of typing), and dir() lists __all__.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .api import (AuditDocument, Converted, ConvertResult, Edit, Finding, Metrics, PortkitError,
                      audit_paths, convert_paths, convert_text, scan_options)

__all__ = ["convert_text", "convert_paths", "audit_paths", "scan_options", "AuditDocument", "Converted",
           "ConvertResult", "Edit", "Finding", "Metrics", "PortkitError", "__version__"]

_LAZY = frozenset(__all__) - {"__version__"}


def __getattr__(name: str):
    if name in _LAZY:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'portkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
