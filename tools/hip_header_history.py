"""Find the first ROCm release whose HIP headers provide a name (for hip_since in the overrides).

Usage:
    python tools/hip_header_history.py [--table mappings/device.toml ...] [--hipify-src DIR] [NAME ...]

Reads the git mirrors of ROCm/HIP (include/hip, every release), ROCm/hipamd (amd_detail up to
5.6) and ROCm/clr (hipamd/include/hip from 5.6), as the fetch tool leaves them under
/work/.mirror (override with --mirrors). For each CUDA name that a table marks "unsupported"
(or each NAME given), the candidates are hipify-clang's HIP spelling (from the CUDA2HIP_*.cpp
maps of --hipify-src) and the CUDA name itself; it prints `cuda  hip  first-release  header`
for every candidate some release defines. "6.3" stands for ROCm/clr's rocm-test-09212024 tag
(newer than 6.2.2, the last release tag the mirror has). A hit is a whole-word occurrence
outside comments and #undef lines in a header, so read the header before trusting one.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

RELEASES = ["5.0.0", "5.1.0", "5.2.0", "5.3.0", "5.4.0", "5.5.0", "5.6.0", "5.7.0", "6.0.0",
            "6.1.0", "6.2.0", "6.3"]
COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*|^\s*#\s*undef[^\n]*", re.S | re.M)
HIPIFY_ENTRY = re.compile(r'\{"(\w+)",\s*\{"(\w+)",\s*"[^"]*",\s*CONV_[A-Z_]+,[^}]*UNSUPPORTED')


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def _headers(repo: Path, tag: str, folder: str) -> dict[str, bytes]:
    names = _git(repo, "ls-tree", "-r", "--name-only", tag, folder).decode().split()
    return {n: COMMENT.sub(b" ", _git(repo, "show", f"{tag}:{n}"))
            for n in names if n.endswith((".h", ".hpp"))}


def release_headers(mirrors: Path, release: str) -> dict[str, bytes]:
    """path -> comment-free text of every public HIP header of one release."""
    tag = "rocm-test-09212024" if release == "6.3" else f"rocm-{release}"
    found = {}
    hip = mirrors / "ROCm+HIP" / "repo"
    if release != "6.3":
        found.update(_headers(hip, tag, "include/hip"))
    if release < "5.6":
        found.update(_headers(mirrors / "ROCm+hipamd" / "repo", tag, "include/hip"))
    else:
        found.update(_headers(mirrors / "ROCm+clr" / "repo", tag, "hipamd/include/hip"))
    return {p: t for p, t in found.items() if "nvidia_detail" not in p and "nvcc_detail" not in p}


def hipify_names(src: Path) -> dict[str, str]:
    """CUDA name -> hipify-clang's HIP spelling, for the entries it marks UNSUPPORTED."""
    out = {}
    for path in sorted(src.glob("CUDA2HIP_*.cpp")):
        for cuda, hip in HIPIFY_ENTRY.findall(path.read_text(encoding="utf-8")):
            out.setdefault(cuda, hip)
    return out


def unsupported(tables: list[Path]) -> list[str]:
    names = []
    for table in tables:
        doc = tomllib.loads(table.read_text(encoding="utf-8"))
        names += [e["cuda"] for e in doc["entries"] if e["status"] == "unsupported"]
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--table", action="append", type=Path, default=[])
    parser.add_argument("--hipify-src", type=Path, default=Path("/tmp/pk/hipify/src"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    spelled = hipify_names(args.hipify_src) if args.hipify_src.is_dir() else {}
    cudas = list(args.names) + unsupported(args.table)
    texts = {r: release_headers(args.mirrors, r) for r in RELEASES}
    for cuda in cudas:
        for hip in dict.fromkeys([spelled.get(cuda, cuda), cuda]):
            word = re.compile(rb"\b" + re.escape(hip.encode()) + rb"\b")
            for release in RELEASES:
                where = [p for p, t in texts[release].items() if word.search(t)]
                if where:
                    print(f"{cuda}\t{hip}\t{release}\t{where[0]}")
                    break
    return 0


if __name__ == "__main__":
    sys.exit(main())
