"""Build a ROCm header pack from local clones of ROCm's repositories (docs/verify.md, "Header packs").

    python tools/build_rocm_header_pack.py 6.2.0 OUT --repos DIR [--libraries hipblas,hipsparse] [--archive FILE]

DIR holds git clones (or bare mirrors) named like `ROCm+HIP/repo`, `ROCm+clr/repo`,
`ROCm+hipBLAS/repo` (what the workplace's fetch writes). Each is read at its `rocm-X.Y.Z` tag
with `git show`, never checked out, never built. What goes in a pack and what is generated is
portkit/commands/verify/pack_build.py, shared with the download (pack_fetch.py), so both give the
same bytes. manifest.json records the release, every source repository with its tag and commit,
and the sha256 of every file; the licences go to licenses/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from portkit.commands.verify import pack_build  # noqa: E402


class GitSource:
    """A repository read at a tag with `git show`/`git ls-tree` (no checkout, no hooks run)."""

    def __init__(self, repos: Path, repository: str, tag: str):
        self.repository, self.tag = repository, tag
        self.path = repos / repository.replace("/", "+") / "repo"
        try:
            self.commit = self._git("rev-parse", f"{tag}^{{commit}}").decode().strip()
        except subprocess.CalledProcessError:
            raise SystemExit(f"{self.path}: no tag {tag} (fetch {repository} first)") from None

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True).stdout

    def files(self, folder: str) -> list[str]:
        listing = self._git("ls-tree", "-r", "--name-only", self.tag, *([folder] if folder else []))
        return [line for line in listing.decode().splitlines() if line]

    def read(self, path: str) -> bytes:
        return self._git("show", f"{self.tag}:{path}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="a ROCm release with its patch number, e.g. 6.2.0")
    parser.add_argument("out", type=Path)
    parser.add_argument("--repos", type=Path, required=True, help="the folder of git clones (ROCm+HIP/repo ...)")
    parser.add_argument("--libraries", default=",".join(pack_build.DEFAULT_LIBRARIES),
                        help="comma-separated (default: all): " + ", ".join(pack_build.LIBRARIES))
    parser.add_argument("--archive", type=Path, help="also write the pack as a reproducible .tar.xz")
    args = parser.parse_args(argv)
    libraries = [lib for lib in args.libraries.split(",") if lib]
    unknown = [lib for lib in libraries if lib not in pack_build.LIBRARIES]
    if unknown:
        parser.error(f"unknown library {unknown[0]} (known: {', '.join(pack_build.LIBRARIES)})")
    try:
        files = pack_build.build(args.release, lambda repo: GitSource(args.repos, repo, f"rocm-{args.release}"),
                                 libraries)
    except pack_build.PackError as exc:
        raise SystemExit(str(exc)) from None
    pack_build.write(files, args.out)
    print(f"{args.out}: ROCm {args.release} headers, {len(files) - 1} files")
    if args.archive:
        archive(args.out, args.archive, f"rocm-{args.release}-headers")
        print(f"{args.archive}: the same, as a reproducible .tar.xz")
    return 0


def archive(folder: Path, target: Path, top: str) -> None:
    """The pack as a .tar.xz with sorted names, no owners and time 0: the same bytes every build
    (the copy the tests use, fixtures/rocm-headers/)."""
    import lzma
    import tarfile
    with lzma.open(target, "wb", preset=9) as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = tarfile.TarInfo(f"{top}/{path.relative_to(folder).as_posix()}")
            info.size, info.mtime, info.mode = path.stat().st_size, 0, 0o644
            with path.open("rb") as handle:
                tar.addfile(info, handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
