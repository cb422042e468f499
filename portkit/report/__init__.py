"""Output formats, registered once: each an emitter that renders a typed result to a stream.

The registries name formats without importing them (the CLI builds its parsers from these names,
so `--format`'s choices are the registry's, and `portkit --help` loads no renderer). An audit
emitter is a module of report/ with `render(audit, stream, **options)` over report/audit_model's
Audit; a gate emitter is a function of report/gate.py, `render(result, out, err, quiet)`.
Adding a format is its module and one line here (CONTRIBUTING.md, "Add an output format").
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable

AUDIT_EMITTERS = {"text": "text", "json": "json", "sarif": "sarif", "csv": "csv"}   # --format -> module
GATE_EMITTERS = {"text": "render_text", "json": "render_json", "sarif": "render_sarif",
                 "github": "render_github"}                                          # check --format -> function


def audit_emitter(name: str) -> ModuleType:
    """The module that renders the audit as `name`: render(audit, stream, statistics=False)."""
    return importlib.import_module(f"{__name__}.{AUDIT_EMITTERS[name]}")


def gate_emitter(name: str) -> Callable[..., None]:
    """The function of report/gate.py that renders a check as `name`."""
    from . import gate
    return getattr(gate, GATE_EMITTERS[name])
