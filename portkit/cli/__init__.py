"""The command line: flags -> settings -> command -> formatter -> exit code (app.py is the parser)."""

from .app import main

__all__ = ["main"]
