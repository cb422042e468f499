"""The Python packages a project is: never priced, nor reported, as its own dependency.

apex's tests `import apex`, flash-attention's `import flash_attn`: an import of the project's own
package is the project, not a CUDA-only dependency to replace (issue 30's "a project priced as its
own dependency"). Read from the tree, no Python run: every top-level directory (or one under
`src/`) holding an `__init__.py`, and the distribution names `pyproject.toml` (`[project] name`)
and a root `setup.py` (`name="..."`) declare. Names are normalized as PEP 503 does.

What the project requires (`requirements`): the distributions its `setup.py` files
(`install_requires`, `extras_require`, read with `ast`, never run) and `pyproject.toml` files
(`[project] dependencies` and `optional-dependencies`, poetry's dependencies) declare, outside
test and example directories. A framework its own package imports without requiring it
(faiss's `contrib/torch_utils.py` imports torch; faiss requires numpy and packaging) is optional
interop, not what the project is (estimate/workitems.signals). A framework only an extra names
is optional too: `pip install X` does not bring it.
"""

from __future__ import annotations

import ast
import re

from ..core.files import Entry, read
from ..core.tables.ecosystem import normalize
from ..core.tables.toml_text import untrusted

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
        name = untrusted(data.decode("utf-8")).get("project", {}).get("name")
    except (ValueError, AttributeError):   # not TOML, 4300+ digits, nested 1000 deep, a 10,000-part key
        return None   # a pyproject.toml that does not read names nothing (its own findings say why)
    return name if isinstance(name, str) else None


MAX_BYTES = 1 << 20   # a setup.py or pyproject.toml larger than this declares nothing
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
FRAMEWORKS = {"torch": ("torch", "pytorch"), "jax": ("jax", "jaxlib"), "jaxlib": ("jax", "jaxlib"),
              "tensorflow": ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly")}
_TEST_DIRS = frozenset({"test", "tests", "testing", "example", "examples", "benchmark", "benchmarks", "bench",
                        "sample", "samples", "demo", "demos", "docs", "third_party", "thirdparty", "3rdparty",
                        "vendor", "external", "extern"})


def requires(requirements: frozenset[str] | None, module: str) -> bool:
    """The project requires the distribution that provides `module` (True when it declares nothing:
    then nothing can be told apart)."""
    if requirements is None:
        return True
    return any(normalize(name) in requirements for name in FRAMEWORKS.get(module, (module,)))


def requirements(entries: list[Entry]) -> tuple[frozenset[str] | None, tuple[tuple[str, frozenset[str]], ...]]:
    """(the normalized names the project requires, None when it declares none; per extra, its
    names), from its setup.py and pyproject.toml files outside tests, examples and vendored code."""
    required: set[str] | None = None
    unknown = False
    extras: dict[str, set[str]] = {}
    for entry in entries:
        name = entry.rel.rsplit("/", 1)[-1]
        if name not in ("setup.py", "pyproject.toml") or any(p.lower() in _TEST_DIRS for p in entry.rel.split("/")[:-1]):
            continue
        data, skipped = read(entry)
        if data is None or skipped is not None or len(data) > MAX_BYTES:
            continue
        found = _setup_requires(data) if name == "setup.py" else _pyproject_requires(data)
        if found is None:
            continue
        names, more = found
        if names is ...:   # computed (read from a file, a function): what it requires is not known
            unknown = True
        elif names is not None:
            required = (required or set()) | names
        for extra, extra_names in more.items():
            extras.setdefault(extra, set()).update(extra_names)
    return (None if required is None or unknown else frozenset(required),
            tuple((extra, frozenset(names)) for extra, names in sorted(extras.items())))


def _names(values) -> set[str]:
    out = set()
    for value in values if isinstance(values, (list, tuple)) else ():
        match = _REQUIREMENT.match(value) if isinstance(value, str) else None
        if match:
            out.add(normalize(match.group(1)))
    return out


def _pyproject_requires(data: bytes):
    try:
        doc = untrusted(data.decode("utf-8"))
    except ValueError:   # not UTF-8, not TOML, 4300+ digits, nested 1000 deep, a 10,000-part key
        return None
    project = doc.get("project") if isinstance(doc.get("project"), dict) else {}
    poetry = doc.get("tool", {}).get("poetry", {}) if isinstance(doc.get("tool"), dict) else {}
    names = _names(project["dependencies"]) if "dependencies" in project else None
    if isinstance(poetry, dict) and isinstance(poetry.get("dependencies"), dict):
        names = (names or set()) | {normalize(n) for n in poetry["dependencies"] if n.lower() != "python"}
    optional = project.get("optional-dependencies")
    extras = {k: _names(v) for k, v in optional.items()} if isinstance(optional, dict) else {}
    return names, extras


def _setup_requires(data: bytes):
    """install_requires and extras_require of the setup() call, literals (or a module-level name
    bound to one) only; install_requires computed otherwise is `...` (not known)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound = {n.targets[0].id: n.value for n in tree.body
             if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}

    def literal(node):
        node = bound.get(node.id, node) if isinstance(node, ast.Name) else node
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None

    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "setup":
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            names = literal(kw["install_requires"]) if "install_requires" in kw else None
            names = ... if "install_requires" in kw and not isinstance(names, (list, tuple)) else (
                None if names is None else _names(names))
            extras = literal(kw["extras_require"]) if "extras_require" in kw else None
            return names, ({k: _names(v) for k, v in extras.items() if isinstance(k, str)}
                           if isinstance(extras, dict) else {})
    return None
