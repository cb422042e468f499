"""User-facing errors: one line, a path and a reason, exit code 2, never a traceback."""


class PortkitError(Exception):
    """An error the user can fix (bad path, bad option, bad table); the CLI prints it on one line."""

    exit_code = 2


class MappingError(PortkitError):
    """A mapping table is malformed; the message names the file and the entry."""
