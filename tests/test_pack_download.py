"""A ROCm header pack downloaded on first use (issue 32; pack_fetch.py): from each repository's
source archive at the release tag, built as the clones build it, kept only when it matches the pin.

The archives here are small stand-ins for ROCm's repositories (one header each, the files CMake
configures), written as GitHub's codeload serves them (a top folder, the commit in the pax
header) and served over HTTP from this process; the pin is the manifest they build.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
from pathlib import Path

import pytest

from portkit.cli.app import main
from portkit.commands.verify import pack_build, pack_fetch, packs
from portkit.core.errors import PortkitError

TEMPLATE_LINES = {"VERSION_MAJOR": "MAJOR", "VERSION_MINOR": "MINOR", "VERSION_PATCH": "PATCH"}


def _repository_files(repository: str) -> dict[str, bytes]:
    """The files pack_build reads from `repository`, with made-up contents."""
    files: dict[str, bytes] = {}
    for lib in (*pack_build.HIP, *pack_build.LIBRARIES.values()):
        if lib.repository != repository:
            continue
        top = f"{lib.folder}/" if lib.folder else ""
        name = lib.only[0] if lib.only else f"{lib.into}_api.h"
        files[f"{top}{name}"] = f"// {repository} {name}\nint {lib.into.replace('-', '_')}_api(void);\n".encode()
        files[f"{top}README.md"] = b"not a header: left out\n"
        files[lib.licence] = f"MIT licence of {repository}\n".encode()
        for template in lib.templates:
            prefix = f"@{lib.variable}_" if lib.variable else "@"
            files[f"{top}{template.partition('>')[0]}"] = "".join(f"#define {macro} {prefix}{key}@\n"
                                                                  for key, macro in TEMPLATE_LINES.items()).encode()
        if lib.templates and not lib.release_version:
            files[lib.version_file] = (b'rocm_setup_version(VERSION "2.11.4")\n' if lib.version_file == "CMakeLists.txt"
                                       else b"NCCL_MAJOR := 2\nNCCL_MINOR := 11\nNCCL_PATCH := 4\n")
    if repository == "ROCm/HIP":
        files["VERSION"] = b"#HIP_VERSION_MAJOR\n6\n#HIP_VERSION_MINOR\n2\n#HIP_VERSION_PATCH\n41133\n"
    files["tests/big_test.cpp"] = b"// not taken\n"
    return files


def _archive(repository: str, files: dict[str, bytes]) -> bytes:
    """A .tar.gz as `git archive` (and so codeload) writes it."""
    raw = io.BytesIO()
    commit = hashlib.sha1(repository.encode()).hexdigest()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{repository.split('/')[1]}-rocm-6.2.0/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


class _Server(http.server.ThreadingHTTPServer):
    archives: dict[str, bytes] = {}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):   # noqa: N802 (http.server's name)
        data = self.server.archives.get(self.path)
        self.send_response(200 if data is not None else 404)
        self.end_headers()
        self.wfile.write(data or b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def sources(monkeypatch, tmp_path: Path):
    """A server of stand-in source archives, the URL pointing at it, the cache in tmp_path and
    the pin set to what the archives build. Returns the served archives (to tamper with)."""
    repositories = pack_build.wanted_paths(pack_build.DEFAULT_LIBRARIES)
    served = {f"/{repo}/rocm-6.2.0.tar.gz": _archive(repo, _repository_files(repo)) for repo in repositories}
    server = _Server(("127.0.0.1", 0), _Handler)
    server.archives = served
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(pack_fetch.URL_ENV, f"http://127.0.0.1:{server.server_address[1]}/{{repository}}/{{tag}}.tar.gz")
    monkeypatch.delenv(pack_fetch.OFFLINE_ENV, raising=False)
    monkeypatch.delenv(packs.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = pack_build.build("6.2.0", lambda repo: pack_fetch.ArchiveSource(
        repo, "rocm-6.2.0", _repository_files(repo), hashlib.sha1(repo.encode()).hexdigest()),
        pack_build.DEFAULT_LIBRARIES)
    monkeypatch.setattr(packs, "PINNED", {"6.2.0": hashlib.sha256(built["manifest.json"]).hexdigest()})
    yield served
    server.shutdown()


def test_a_pinned_pack_is_downloaded_into_the_cache_on_first_use(sources, tmp_path: Path, capsys):
    pack = packs.download((6, 2, 0))
    root = tmp_path / "cache" / "portkit" / "rocm-headers" / "6.2.0"
    assert (pack.root, pack.release, pack.pinned) == (root, (6, 2, 0), True)
    assert pack.libraries == ("hip", *pack_build.DEFAULT_LIBRARIES)
    assert [s.split(" ")[0] for s in pack.sources] == [f"{repo}@rocm-6.2.0" for repo in
                                                      pack_build.wanted_paths(pack_build.DEFAULT_LIBRARIES)]
    # headers kept, everything else of the archives left; the configured files written
    assert (root / "include" / "hipblas" / "hipblas_api.h").is_file()
    assert not list(root.rglob("README.md")) and not list(root.rglob("big_test.cpp"))
    assert (root / "include" / "hipsparse" / "hipsparse-version.h").read_text() == (
        "#define MAJOR 2\n#define MINOR 11\n#define PATCH 4\n")
    assert (root / "include" / "rocm-core" / "rocm_version.h").read_text() == (
        "#define MAJOR 6\n#define MINOR 2\n#define PATCH 0\n")    # rocm-core: the release itself
    assert "#define HIP_VERSION_PATCH 41133\n" in (root / "include" / "hip" / "hip_version.h").read_text()
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "portkit: downloading ROCm 6.2.0 headers: ROCm/HIP (1/15)"
    assert len(err) == 15
    assert packs.locate((6, 2, 0)).root == root       # and found there from now on, without the network


def test_sources_that_do_not_build_the_pinned_pack_are_refused_and_nothing_is_kept(sources, tmp_path: Path):
    files = _repository_files("ROCm/hipCUB")
    files["hipcub/include/hipcub/hipcub_api.h"] += b"// changed on the way\n"
    sources["/ROCm/hipCUB/rocm-6.2.0.tar.gz"] = _archive("ROCm/hipCUB", files)
    with pytest.raises(PortkitError, match=r"^ROCm 6\.2\.0 header pack: the downloaded sources do not give the "
                                           r"pinned pack \(manifest sha256 [0-9a-f]{12}\.\.\., pinned [0-9a-f]{12}"
                                           r"\.\.\.\); nothing kept$"):
        packs.download((6, 2, 0))
    assert not (tmp_path / "cache").exists()


def test_a_missing_archive_is_one_line_naming_the_repository(sources):
    del sources["/ROCm/rocThrust/rocm-6.2.0.tar.gz"]
    with pytest.raises(PortkitError, match=r"^cannot download ROCm/rocThrust at rocm-6\.2\.0 from "
                                           r"http://127\.0\.0\.1:\d+/ROCm/rocThrust/rocm-6\.2\.0\.tar\.gz "
                                           r"\(Not Found\)$"):
        packs.download((6, 2, 0))


def test_offline_nothing_is_downloaded(sources, monkeypatch):
    monkeypatch.setenv(pack_fetch.OFFLINE_ENV, "1")
    with pytest.raises(PortkitError, match=r"^not downloaded: \$PORTKIT_OFFLINE is set$"):
        packs.download((6, 2, 0))
    with pytest.raises(PortkitError, match=r"^portkit pins no ROCm 6\.3 header pack to download$"):
        packs.download((6, 3, 0))


@pytest.mark.compile
def test_verify_offline_flag_keeps_to_the_installed_release(sources, tmp_path: Path, capsys):
    """--offline: verify never downloads; it says why no pack was used."""
    from conftest import REPO, require_tool
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    out = tmp_path / "out"
    assert main(["convert", str(REPO / "fixtures" / "convert" / "memory_basic" / "input.cu"), "-o",
                 str(out / "m.hip"), "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--rocm", "6.2", "--offline"]) == 0
    assert ("Note: no ROCm 6.2 header pack found, so the ROCm 5.2 headers installed here were used; give one with "
            "--rocm-headers DIR or $PORTKIT_ROCM_HEADERS (docs/verify.md)") in capsys.readouterr().out.splitlines()
    assert not (tmp_path / "cache" / "portkit" / "rocm-headers" / "6.2.0").exists()


def test_a_source_url_that_is_not_http_is_refused(sources, monkeypatch):
    monkeypatch.setenv(pack_fetch.URL_ENV, "ftp://mirror/{repository}.tar.gz")
    with pytest.raises(PortkitError, match=r"^\$PORTKIT_ROCM_SOURCES_URL: ftp://mirror/ROCm/HIP\.tar\.gz: "
                                           r"not an http\(s\) or file URL$"):
        packs.download((6, 2, 0))
