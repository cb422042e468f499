"""Get a ROCm header pack on first use: download the release's sources, build the pack, check the pin.

No one hosts portkit's packs; ROCm's repositories are the source. For a release portkit pins
(packs.PINNED), each repository's source archive at the `rocm-X.Y.Z` tag is downloaded
(GitHub's codeload by default; $PORTKIT_ROCM_SOURCES_URL names a mirror), read as a stream
keeping only the folders pack_build.py takes, and the pack is built from it exactly as
tools/build_rocm_header_pack.py builds it from clones. The result is kept only when its
manifest's sha256 is the pinned one, so what a download gives is byte for byte the pack the
tests compile against, whatever the network served. It goes into the user cache
(packs.cache_dir()) in one rename; nothing is written on failure.

Never on an offline machine: --offline or PORTKIT_OFFLINE=1 stops it, and so does any network
error (then verify says how to provide a pack by hand).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from ...core.errors import PortkitError
from . import pack_build

URL_ENV = "PORTKIT_ROCM_SOURCES_URL"
OFFLINE_ENV = "PORTKIT_OFFLINE"
DEFAULT_URL = "https://codeload.github.com/{repository}/tar.gz/refs/tags/{tag}"
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024     # a source archive larger than this is not a ROCm repository's
MAX_FILE_BYTES = 16 * 1024 * 1024
TIMEOUT_S = 60


class ArchiveSource:
    """A repository's files kept from its source archive (the first path component, the archive's
    top folder, dropped); the commit from the pax header git archive writes."""

    def __init__(self, repository: str, tag: str, files: dict[str, bytes], commit: str):
        self.repository, self.tag, self.commit, self._files = repository, tag, commit, files

    def files(self, folder: str) -> list[str]:
        prefix = f"{folder}/" if folder else ""
        return sorted(path for path in self._files if path.startswith(prefix))

    def read(self, path: str) -> bytes:
        try:
            return self._files[path]
        except KeyError:
            raise pack_build.PackError(f"{self.repository}@{self.tag}: no {path} in its source archive") from None


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "") not in ("", "0")


def fetch(release: str, pinned_manifest_sha: str, cache: Path, progress=None) -> Path:
    """Download, build and check the pack of `release` (X.Y.Z); its folder in `cache`."""
    libraries = pack_build.DEFAULT_LIBRARIES
    wanted = pack_build.wanted_paths(libraries)
    tag = f"rocm-{release}"
    sources: dict[str, ArchiveSource] = {}
    for number, (repository, paths) in enumerate(wanted.items(), 1):
        if progress:
            progress(f"downloading ROCm {release} headers: {repository} ({number}/{len(wanted)})")
        sources[repository] = _download(repository, tag, paths)
    try:
        files = pack_build.build(release, sources.__getitem__, libraries)
    except pack_build.PackError as exc:
        raise PortkitError(f"ROCm {release} header pack: {exc}") from None
    actual = hashlib.sha256(files["manifest.json"]).hexdigest()
    if actual != pinned_manifest_sha:
        raise PortkitError(f"ROCm {release} header pack: the downloaded sources do not give the pinned pack "
                           f"(manifest sha256 {actual[:12]}..., pinned {pinned_manifest_sha[:12]}...); nothing kept")
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".download-", dir=cache))
    try:
        pack_build.write(files, work)
        target = cache / release
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _download(repository: str, tag: str, keep: tuple[str, ...]) -> ArchiveSource:
    url = os.environ.get(URL_ENV) or DEFAULT_URL
    url = url.format(repository=repository, owner=repository.split("/")[0], name=repository.split("/")[1], tag=tag)
    if not url.startswith(("https://", "http://", "file://")):
        raise PortkitError(f"${URL_ENV}: {url}: not an http(s) or file URL")
    files: dict[str, bytes] = {}
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:   # noqa: S310 (scheme checked above)
            limited = _Limited(response, MAX_ARCHIVE_BYTES)
            with tarfile.open(fileobj=limited, mode="r|*") as tar:
                for member in tar:
                    rel = member.name.split("/", 1)[1] if "/" in member.name else ""
                    if not member.isfile() or not rel or not _kept(rel, keep) or member.size > MAX_FILE_BYTES \
                            or rel.startswith("/") or ".." in rel.split("/"):   # the pin refuses these too
                        continue
                    handle = tar.extractfile(member)
                    files[rel] = handle.read() if handle else b""
                commit = str(tar.pax_headers.get("comment", "")).strip() or "unknown"
    except (urllib.error.URLError, OSError, tarfile.TarError, EOFError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise PortkitError(f"cannot download {repository} at {tag} from {url} ({reason})") from None
    return ArchiveSource(repository, tag, files, commit)


def _kept(rel: str, keep: tuple[str, ...]) -> bool:
    """`rel` is one of the files kept, or under one of the folders ("" = the top folder's own files)."""
    return any(("/" not in rel) if not k else (rel == k or rel.startswith(f"{k}/")) for k in keep)


class _Limited:
    """A response read through a byte budget: a huge or endless body stops the download."""

    def __init__(self, raw, budget: int):
        self.raw, self.left = raw, budget

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size if size >= 0 else self.left + 1)
        self.left -= len(data)
        if self.left < 0:
            raise ValueError(f"the archive is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MiB")
        return data


def stderr_progress(message: str) -> None:
    """A download takes a while: say what it is waiting for, also in a CI log."""
    print(f"portkit: {message}", file=sys.stderr, flush=True)
