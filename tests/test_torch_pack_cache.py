"""The torch pack's user cache under runs at once: an archive given to verify is unpacked into
$XDG_CACHE_HOME/portkit/torch-headers/VERSION (torch_pack.install). Every run used to remove that
folder and unpack it again, so a run compiling against it lost its headers when another started
(pytorch_scatter's units: "'ATen/BlasBackend.h' file not found"; mamba's verify: an internal
FileNotFoundError from two removals of one folder). The same pack is now kept where it is, and a
different one replaces it by renames, never by removing files under a reader.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from portkit.commands.verify import torch_pack


def _archive(path: Path, header: bytes, version: str = "9.9.9") -> Path:
    """A torch pack archive of one header, as tools/build_torch_header_pack.py lays one out."""
    files = {"include/ATen/BlasBackend.h": header}
    manifest = {"kind": "torch", "torch": version, "rocm": "6.2", "source": {"wheel": "torch-fake.whl"},
                "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}}
    files["manifest.json"] = json.dumps(manifest, sort_keys=True).encode()
    with tarfile.open(path, "w:xz") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"torch-{version}-headers/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "portkit" / "torch-headers"


def test_the_same_archive_again_keeps_the_cached_pack_under_a_running_compile(tmp_path: Path, cache: Path):
    archive = _archive(tmp_path / "torch-9.9.9-headers.tar.xz", b"#pragma once\n")
    first = torch_pack.install(archive)
    header = first.root / "include" / "ATen" / "BlasBackend.h"
    held = header.open("rb")   # a compile of another run, reading the pack
    folder, inode = first.root.stat().st_ino, header.stat().st_ino
    second = torch_pack.install(archive)
    assert second.root == first.root == cache / "9.9.9"
    assert (second.root.stat().st_ino, header.stat().st_ino) == (folder, inode)
    assert held.read() == b"#pragma once\n"
    held.close()
    assert sorted(p.name for p in cache.iterdir()) == ["9.9.9"]   # no work folder left behind


def test_a_different_pack_of_the_version_replaces_the_cached_one(tmp_path: Path, cache: Path):
    torch_pack.install(_archive(tmp_path / "a.tar.xz", b"#pragma once\n"))
    second = torch_pack.install(_archive(tmp_path / "b.tar.xz", b"#pragma once\n// rebuilt\n"))
    assert (second.root / "include" / "ATen" / "BlasBackend.h").read_bytes() == b"#pragma once\n// rebuilt\n"
    assert sorted(p.name for p in cache.iterdir()) == ["9.9.9"]


def test_a_damaged_cached_pack_is_replaced_not_used(tmp_path: Path, cache: Path):
    archive = _archive(tmp_path / "a.tar.xz", b"#pragma once\n")
    first = torch_pack.install(archive)
    (first.root / "include" / "ATen" / "BlasBackend.h").unlink()   # half removed by an older portkit
    again = torch_pack.install(archive)
    assert (again.root / "include" / "ATen" / "BlasBackend.h").read_bytes() == b"#pragma once\n"
    assert sorted(p.name for p in cache.iterdir()) == ["9.9.9"]
