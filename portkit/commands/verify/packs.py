"""ROCm header packs: a release's HIP and library headers, to verify against a ROCm not installed.

A pack is a folder laid out like a ROCm installation's headers (include/hip, include/hipblas ...,
bin/.hipVersion) with manifest.json: the release, the source repositories with their tags and
commits, and the sha256 of every file (tools/build_rocm_header_pack.py writes them from ROCm's
public repositories; docs/verify.md). clang compiles HIP for AMD targets from such a folder with no
ROCm installed (`--rocm-path=PACK -nogpulib -fsyntax-only`).

Where verify looks for the pack of release X.Y, first found wins:
    --rocm-headers DIR           the pack itself, or a folder of packs (6.2.0/, rocm-6.2.0-headers/)
    $PORTKIT_ROCM_HEADERS        the same
    $XDG_CACHE_HOME/portkit/rocm-headers/X.Y.Z   (default ~/.cache/...): where packs are kept
Every file is checked against the manifest's hash before use: a pack that changed is refused
(one line: which file), never compiled against half-trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import PortkitError
from ...core.tables.mappings import Version, format_version, parse_version

ENV = "PORTKIT_ROCM_HEADERS"
MANIFEST = "manifest.json"
# The packs portkit knows, by release: the sha256 of manifest.json, which pins every file by its
# own hash. Built by pack_build.py from ROCm's repositories at the release tag (HIP, clr and every
# library in pack_build.LIBRARIES), from clones (tools/build_rocm_header_pack.py) or downloaded
# (pack_fetch.py): the same bytes either way. The 6.2.0 one is fixtures/rocm-headers/. A pack
# built otherwise (fewer libraries, another release) is used too, and the report says it is not
# pinned.
PINNED = {"6.2.0": "d53562131f5c1c1c751bbce9c134e9e693722e5bad2c719b0476b4a9c26e0bca"}
ARCHIVES = (".tar.xz", ".tar.gz", ".tgz", ".tar")
# Who provides a ROCm library's headers, by its include folder (or flat header name): the name a
# person knows, AMD's ROCm package, and Debian's package where Debian has one (bookworm), so that a
# library missing from the pack and the installation is named in one line with what to install.
PROVIDERS = {
    "hipblas": ("hipBLAS", "hipblas-dev", ""), "hipblaslt": ("hipBLASLt", "hipblaslt-dev", ""),
    "hipsparse": ("hipSPARSE", "hipsparse-dev", "libhipsparse-dev"), "hipfft": ("hipFFT", "hipfft-dev", ""),
    "hiprand": ("hipRAND", "hiprand-dev", "libhiprand-dev"), "rocrand": ("rocRAND", "rocrand-dev", "librocrand-dev"),
    "hipsolver": ("hipSOLVER", "hipsolver-dev", ""), "rccl": ("RCCL", "rccl-dev", ""),
    "miopen": ("MIOpen", "miopen-hip-dev", ""), "rocprim": ("rocPRIM", "rocprim-dev", "librocprim-dev"),
    "hipcub": ("hipCUB", "hipcub-dev", ""), "thrust": ("rocThrust", "rocthrust-dev", ""),
    "rocblas": ("rocBLAS", "rocblas-dev", ""), "rocsparse": ("rocSPARSE", "rocsparse-dev", "librocsparse-dev"),
    "rocfft": ("rocFFT", "rocfft-dev", ""), "rocsolver": ("rocSOLVER", "rocsolver-dev", ""),
    "roctracer": ("roctracer", "roctracer-dev", ""), "hiptensor": ("hipTensor", "hiptensor-dev", ""),
    "rocwmma": ("rocWMMA", "rocwmma-dev", ""), "hipdnn": ("hipDNN", "hipdnn-dev", ""),
}


@dataclass(frozen=True)
class Pack:
    root: Path
    release: Version
    libraries: tuple[str, ...]       # "hip", "hipblas", ...: whose headers it holds
    sources: tuple[str, ...]         # "ROCm/HIP@rocm-6.2.0 (commit)", for the report
    pinned: bool = False             # its manifest is the one PINNED names for its release

    def describe(self) -> str:
        pin = "pinned" if self.pinned else "not a pack portkit pins"
        return (f"ROCm {format_version(self.release)} header pack at {self.root} "
                f"({', '.join(self.libraries)}; from {', '.join(self.sources)}; {pin})")


def provider(header: str) -> tuple[str, str, str] | None:
    """(library, ROCm package, Debian package or "") of a ROCm library header (`hipblas/hipblas.h`,
    the older flat `hipblas.h`), or None for one portkit does not know."""
    first = header.split("/", 1)[0]
    return PROVIDERS.get(first) or PROVIDERS.get(first.rsplit(".", 1)[0] if "/" not in header else "")


def not_found(header: str, where: str) -> str | None:
    """The one line that names a missing library and what provides it (None: not a known library):
    `hipblas/hipblas.h: hipBLAS is not in WHERE; the ROCm package hipblas-dev`."""
    known = provider(header)
    if known is None:
        return None
    name, package, debian = known
    apt = f"apt install {debian} / " if debian else ""
    return f"{header}: {name} is not in {where}; {apt}the ROCm package {package}"


def missing_libraries(missing: dict[str, list[str]], pack: bool) -> list[str]:
    """One line per ROCm library that some unit could not find (`missing`: unit -> headers), with
    the package that provides it and how many units stopped on it: what to install, said once."""
    where = "the header pack or the ROCm installation" if pack else "the ROCm installation"
    units: dict[str, tuple[str, set[str]]] = {}
    for unit, headers in missing.items():
        for header in headers:
            known = provider(header)
            if known is not None:
                units.setdefault(known[0], (header, set()))[1].add(unit)
    return [f"{not_found(header, where)} ({len(rels)} unit{'' if len(rels) == 1 else 's'})"
            for _name, (header, rels) in sorted(units.items())]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "portkit" / "rocm-headers"


def same_release(a: Version, b: Version) -> bool:
    """Packs are per minor release: 6.2 asks for 6.2.x."""
    return a[:2] == b[:2]


def load(root: Path, wanted: Version | None = None) -> Pack:
    """The pack at `root`, its files checked against its manifest; a one-line error otherwise."""
    root = root.absolute()   # the compiler runs in each unit's folder: a relative --rocm-path would name nothing
    manifest_path = root / MANIFEST
    try:
        raw = manifest_path.read_bytes()
        manifest = json.loads(raw.decode("utf-8"))
        release = parse_version(str(manifest["release"]))
        files = dict(manifest["files"])
    except OSError:
        raise PortkitError(f"{root}: not a ROCm header pack (no {MANIFEST}; build one with "
                           f"tools/build_rocm_header_pack.py)") from None
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise PortkitError(f"{manifest_path}: not a header pack manifest ({exc})") from None
    if wanted is not None and not same_release(release, wanted):
        raise PortkitError(f"{root}: a ROCm {format_version(release)} header pack, not {format_version(wanted)}")
    for rel, digest in sorted(files.items()):
        path = root / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise PortkitError(f"{manifest_path}: {rel}: a path outside the pack")
        try:
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            raise PortkitError(f"{root}: {rel} is missing from the pack") from None
        if actual != digest:
            raise PortkitError(f"{root}: {rel} does not match the pack's manifest (sha256 {actual[:12]}..., "
                               f"pinned {str(digest)[:12]}...); rebuild or re-download the pack")
    sources = tuple(f"{s['repository']}@{s['tag']} ({str(s['commit'])[:10]})" for s in manifest.get("sources", ()))
    pinned = PINNED.get("{}.{}.{}".format(*release)) == hashlib.sha256(raw).hexdigest()
    return Pack(root, release, tuple(manifest.get("libraries", ("hip",))), sources, pinned)


def pinned_release(wanted: Version) -> str | None:
    """The release (X.Y.Z) of the pinned pack for `wanted` (X.Y), if portkit pins one."""
    return next((release for release in PINNED if same_release(parse_version(release), wanted)), None)


def download(wanted: Version) -> Pack:
    """The pinned pack of `wanted`, downloaded and built into the cache (pack_fetch.py); a one-line
    error when offline or when the download fails or does not match the pin."""
    from . import pack_fetch
    release = pinned_release(wanted)
    if release is None:
        raise PortkitError(f"portkit pins no ROCm {format_version(wanted)} header pack to download")
    if pack_fetch.offline():
        raise PortkitError(f"not downloaded: ${pack_fetch.OFFLINE_ENV} is set")
    root = pack_fetch.fetch(release, PINNED[release], cache_dir(), pack_fetch.stderr_progress)
    return load(root, wanted)


def extract(archive: Path, work: Path) -> None:
    """Unpack a header pack archive (ROCm's or torch's) into `work`: plain files and folders inside
    it, nothing else; tar's data filter too where this Python has it (3.10.12+)."""
    import tarfile
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                parts = Path(member.name).parts
                if Path(member.name).is_absolute() or ".." in parts or not (member.isfile() or member.isdir()):
                    raise PortkitError(f"{archive}: {member.name}: not a file of a header pack")
            tar.extractall(work, members=members, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise PortkitError(f"{archive}: cannot read the pack archive ({exc})") from None


def install(archive: Path) -> Pack:
    """A pack archive (.tar.xz, as tools/build_rocm_header_pack.py --archive writes) unpacked into
    the user cache, checked, and kept there by release: the offline way to get a pack."""
    import shutil
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
    try:
        extract(archive, work)
        tops = [p for p in work.iterdir() if (p / MANIFEST).is_file()] or ([work] if (work / MANIFEST).is_file() else [])
        if len(tops) != 1:
            raise PortkitError(f"{archive}: not a header pack archive (no single folder with {MANIFEST})")
        pack = load(tops[0])
        target = cache / "{}.{}.{}".format(*pack.release)
        if target.exists():
            shutil.rmtree(target)
        tops[0].rename(target)
        return load(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def candidates(wanted: Version, explicit: str | None) -> list[Path]:
    """Where the pack of `wanted` may be, in order."""
    name = "{}.{}.{}".format(*wanted)
    places = [Path(p) for p in (explicit, os.environ.get(ENV)) if p]
    found: list[Path] = []
    for place in places:   # the pack itself, or a folder of packs (by release, or any name: the manifest says)
        found += [place, place / name, *sorted(p for p in _subfolders(place) if p.name != name)]
    cache = cache_dir()
    found += [cache / name, *sorted(cache.glob(f"{wanted[0]}.{wanted[1]}.*"))]
    return found


def _subfolders(place: Path) -> list[Path]:
    try:
        return [p for p in place.iterdir() if p.is_dir()]
    except OSError:
        return []


def load_given(place: Path) -> Pack:
    """--rocm-headers without --rocm: the pack at `place`, or the one pack in a folder of packs
    (its help says either); several there need --rocm to choose."""
    if not (place / MANIFEST).is_file():
        held = sorted(p for p in _subfolders(place) if (p / MANIFEST).is_file())
        if len(held) == 1:
            return load(held[0])
        if held:
            raise PortkitError(f"--rocm-headers {place}: a folder of {len(held)} header packs "
                               f"({', '.join(p.name for p in held)}): choose one with --rocm X.Y")
    return load(place)


def locate(wanted: Version, explicit: str | None = None, required: bool = True) -> Pack | None:
    """The first pack of release `wanted` (major.minor) among the candidates; None when there is
    none. An explicit --rocm-headers that holds no pack of that release is an error when
    `required` (the installed compiler is another release). An explicit archive is installed
    into the cache first."""
    if explicit and explicit.endswith(ARCHIVES) and Path(explicit).is_file():
        pack = install(Path(explicit))
        if not same_release(pack.release, wanted):
            raise PortkitError(f"--rocm-headers {explicit}: a ROCm {format_version(pack.release)} header pack, "
                               f"not {format_version(wanted)} (installed in {pack.root} all the same)")
        return pack
    for place in candidates(wanted, explicit):
        manifest = place / MANIFEST
        if not manifest.is_file():
            continue
        try:
            release = parse_version(str(json.loads(manifest.read_text(encoding="utf-8")).get("release", "")))
        except (OSError, ValueError, AttributeError):
            release = None
        if release is not None and same_release(release, wanted):
            return load(place, wanted)
    if explicit and required:
        raise PortkitError(f"--rocm-headers {explicit}: no ROCm {format_version(wanted)} header pack there "
                           f"(a folder with {MANIFEST}, or one named by release such as {format_version(wanted)}.0)")
    return None
