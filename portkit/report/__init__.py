"""Output formats. Each module renders a result to a stream; none of them computes anything."""


def audit_formats() -> dict:
    """The audit's output formats: each a module with render(document, stream, statistics)."""
    from . import csv, json, sarif, text
    return {"text": text, "json": json, "sarif": sarif, "csv": csv}
