"""portkit: port CUDA C/C++ to AMD HIP, byte-exact, and tell what will not port.

The public API:

    convert_text(source, filename="input.cu", launch_syntax="cuda", rocm=None) -> Converted
    convert_paths(paths, output=..., in_place=..., ...) -> ConvertResult
    audit_paths(paths, rocm=None, select=(), ignore=(), team_size=1) -> dict (docs/json-schema.md)
"""

from __future__ import annotations

from .core.version import __version__

__all__ = ["convert_text", "convert_paths", "audit_paths", "Converted", "ConvertResult", "Edit", "Finding",
           "Metrics", "PortkitError", "__version__"]

_API = ("convert_text", "convert_paths", "audit_paths", "scan_options", "Converted", "ConvertResult",
        "Edit", "Finding", "Metrics", "PortkitError")


def __getattr__(name: str):
    """The API is imported on first use, so that `portkit check` (a pre-commit hook) starts fast."""
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'portkit' has no attribute {name!r}")
