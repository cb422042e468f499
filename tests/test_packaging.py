"""What an installed portkit offers beyond the command line: the sdist and wheel contents (licence,
type information, tables), the public API as IDEs and type checkers see it, and audit_paths with
the project's configuration, as `portkit audit` applies it."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

import portkit
from portkit.cli.app import main
from portkit.report import document

from conftest import missing, write_tree

REPO = Path(__file__).resolve().parent.parent
API = ["convert_text", "convert_paths", "audit_paths", "scan_options", "AuditDocument", "Converted",
       "ConvertResult", "Edit", "Finding", "Metrics", "PortkitError", "__version__"]


def _backend_or_skip() -> None:
    """`python -m build --no-isolation` needs the build frontend and the backend pyproject names."""
    if importlib.util.find_spec("build") is None:
        missing("the `build` package is not installed (pip install 'portkit[test]')")
    try:
        setuptools = version("setuptools")
    except PackageNotFoundError:
        missing("setuptools is not installed (pip install 'portkit[test]')")
    if int(setuptools.split(".")[0]) < 77:
        missing(f"setuptools {setuptools} is older than the 77 pyproject.toml requires (pip install 'portkit[test]')")


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    """The sdist, and the wheel built from it (so the sdist is complete enough to build)."""
    _backend_or_skip()
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return next(out.glob("portkit-*.tar.gz")), next(out.glob("portkit-*.whl"))


@pytest.mark.slow   # builds the sdist and the wheel: about 10 s on 2 cores
def test_wheel_ships_the_licence_type_information_and_tables(dists):
    wheel = zipfile.ZipFile(dists[1])
    names = set(wheel.namelist())
    info = f"portkit-{portkit.__version__}.dist-info"
    assert wheel.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    assert "portkit/py.typed" in names
    assert "portkit/commands/verify/debian-rocm.cmake" in names   # verify --configure's toolchain file
    tables = sorted(p.name for p in (REPO / "mappings").glob("*.toml"))
    assert tables and [t for t in tables if f"portkit/_mappings/{t}" not in names] == []
    metadata = wheel.read(f"{info}/METADATA").decode().split("\n\n")[0].splitlines()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert "Requires-Dist: tree-sitter<0.27,>=0.25" in metadata
    assert "Requires-Dist: tree-sitter-cuda<0.22,>=0.21.1" in metadata


@pytest.mark.slow   # builds the sdist and the wheel: about 10 s on 2 cores
def test_sdist_ships_the_licence_type_information_and_tables(dists):
    with tarfile.open(dists[0]) as sdist:
        names = set(sdist.getnames())
        top = f"portkit-{portkit.__version__}"
        assert sdist.extractfile(f"{top}/LICENSE").read() == (REPO / "LICENSE").read_bytes()
    assert f"{top}/portkit/py.typed" in names
    tables = sorted(p.name for p in (REPO / "mappings").glob("*.toml"))
    assert [t for t in tables if f"{top}/mappings/{t}" not in names] == []


def test_licence_is_mit_with_the_project_copyright():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the portkit authors\n")


def test_dir_lists_the_lazy_api_without_importing_it():
    """dir() and IDEs see the API, and `import portkit` still loads none of it (startup time)."""
    probe = ("import sys, portkit; print(json.dumps([dir(portkit), portkit.__all__, "
             "sorted(m for m in sys.modules if m.startswith('portkit'))]))")
    out = subprocess.run([sys.executable, "-c", "import json; " + probe], capture_output=True, text=True,
                         check=True).stdout
    listed, exported, loaded = json.loads(out)
    assert exported == API
    assert [name for name in API if name not in listed] == []
    assert loaded == ["portkit", "portkit.core", "portkit.core.version"]
    assert {name: getattr(portkit, name) is not None for name in API} == {name: True for name in API}
    with pytest.raises(AttributeError, match="module 'portkit' has no attribute 'nothing'"):
        portkit.nothing  # noqa: B018


def test_type_checkers_see_every_lazy_name():
    """The `if TYPE_CHECKING:` block imports exactly the lazy names, so it cannot go stale."""
    tree = ast.parse((REPO / "portkit" / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    imported = sorted(alias.name for node in block.body for alias in node.names)
    assert imported == sorted(set(API) - {"__version__"})


def _keys(record) -> set[str]:
    return set(record.__required_keys__) | set(record.__optional_keys__)


def test_the_document_types_name_the_schema_fields():
    """AuditDocument's keys are the JSON schema's, record by record; only engine and autofix are optional."""
    schema = json.loads((REPO / "docs" / "audit.schema.json").read_text(encoding="utf-8"))
    top = schema["properties"]
    assert _keys(document.AuditDocument) == set(top)
    assert set(document.AuditDocument.__optional_keys__) == {"engine"}
    for record, key in ((document.ToolRecord, "tool"), (document.OptionsRecord, "options"),
                        (document.SummaryRecord, "summary")):
        assert _keys(record) == set(top[key]["properties"]), key
    for record, key in ((document.RuleRecord, "rules"), (document.FileRecord, "files"),
                        (document.FindingRecord, "findings")):
        assert _keys(record) == set(top[key]["items"]["properties"]), key
    assert set(document.FindingRecord.__optional_keys__) == {"autofix"}
    assert _keys(document.EffortRecord) == set(top["findings"]["items"]["properties"]["effort_hours"]["properties"])


KERNEL = "__global__ void k(int *a) {\n  int lane = threadIdx.x % 32;\n  a[lane] = 0;\n}\n"


def _project(root: Path, config: str) -> Path:
    return write_tree(root, {"pyproject.toml": config, "src/k.cu": KERNEL, "third_party/t.cu": KERNEL})


def _found(doc) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["code"]) for f in doc["findings"]]


def test_audit_paths_applies_the_project_exclude_as_portkit_audit_does(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path / "proj", '[tool.portkit]\nexclude = ["third_party/**"]\nrocm = "5.2"\n')
    monkeypatch.chdir(root)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    doc = portkit.audit_paths([root])
    assert _found(doc) == [("src/k.cu", 2, "PK201")]
    assert [f["path"] for f in doc["files"]] == ["pyproject.toml", "src/k.cu"]
    assert doc["options"]["rocm"] == "5.2"
    assert main(["audit", str(root), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == doc


def test_audit_paths_config_argument(tmp_path, monkeypatch):
    """config=DIR finds the configuration from there; False ignores it; arguments win over it."""
    root = _project(tmp_path / "proj", '[tool.portkit]\nexclude = ["third_party/**"]\nignore = ["PK201"]\n')
    monkeypatch.chdir(tmp_path)   # no configuration here
    both = [("src/k.cu", 2, "PK201"), ("third_party/t.cu", 2, "PK201")]
    assert _found(portkit.audit_paths([root])) == both
    assert _found(portkit.audit_paths([root], config=root)) == []
    assert _found(portkit.audit_paths([root], config=str(root), ignore=("PK9",))) == [("src/k.cu", 2, "PK201")]
    monkeypatch.chdir(root)
    assert _found(portkit.audit_paths([root], config=False)) == both


def test_audit_paths_refuses_a_bad_configuration_in_one_line(tmp_path, monkeypatch):
    root = _project(tmp_path / "proj", '[tool.portkit]\nexclud = ["third_party/**"]\n')
    monkeypatch.chdir(root)
    with pytest.raises(portkit.PortkitError) as caught:
        portkit.audit_paths([root])
    message = str(caught.value)
    assert message.startswith(f"{root / 'pyproject.toml'}: unknown portkit setting exclud "
                              "(did you mean exclude? known: amd-macros, ")
    assert "\n" not in message and " exclude, " in message
