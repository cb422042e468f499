"""How portkit starts Python: never with the current directory on sys.path.

`python -m pkg` puts the working directory first on sys.path, and portkit runs inside untrusted
trees (a pull request's checkout in CI, a tarball a manager prices): a `json.py`, `re.py`,
`clang/` or `portkit/` there would be imported in place of the real one. Python 3.11's `-P` leaves
that entry out. Python 3.10 has no `-P`: there a `-c` bootstrap drops the entry (`-c` makes it
`''`) before anything is imported from sys.path, then runs the module as `-m` would.
"""

from __future__ import annotations

import sys

# 3.10 only. Nothing but the built-in `sys` is imported before the cwd entry is gone; runpy and the
# module itself are then found on the interpreter's own path. argv[0] becomes the module's, as -m.
_BOOTSTRAP = ("import sys\n"
              "if sys.path and sys.path[0] in ('', '.'):\n"
              "    del sys.path[0]\n"
              "import runpy\n"
              "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n")


def module_command(module: str, python: str | None = None, safe_path_flag: bool | None = None) -> list[str]:
    """The argv that runs `python -m module` without the working directory on sys.path.

    `safe_path_flag` says whether the interpreter knows `-P` (default: whether this one does,
    which holds for the interpreter that runs portkit)."""
    if not module.replace(".", "").replace("_", "").isalnum():
        raise ValueError(f"not a module name: {module!r}")
    python = python or sys.executable
    if safe_path_flag is None:
        safe_path_flag = sys.version_info >= (3, 11)
    if safe_path_flag:
        return [python, "-P", "-m", module]
    return [python, "-c", _BOOTSTRAP.format(module=module)]
