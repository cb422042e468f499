"""Build the torch header pack verify compiles PyTorch extensions against (docs/verify.md).

    pip download torch==2.5.1 --no-deps -d /tmp/wheels
    python tools/build_torch_header_pack.py /tmp/wheels/torch-2.5.1-*.whl OUT [--archive FILE]

The wheel is read, never installed: its torch/include/, and its own torch/utils/hipify run over
ATen/cuda and c10/cuda as a ROCm torch's build runs it (portkit/commands/verify/torch_pack_build.py).
The same wheel gives the same bytes; torch_pack.PINNED holds the manifest's sha256.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from portkit.commands.verify import torch_pack_build  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="a torch wheel (pip download torch==X --no-deps)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--rocm", default="6.2", help="the ROCm release whose torch build this stands for")
    parser.add_argument("--archive", type=Path, help="also write the pack as a reproducible .tar.xz")
    args = parser.parse_args(argv)
    try:
        files = torch_pack_build.build(args.wheel, args.rocm)
    except (torch_pack_build.TorchPackError, OSError, KeyError) as exc:
        raise SystemExit(f"{args.wheel}: {exc}") from None
    torch_pack_build.write(files, args.out)
    print(f"{args.out}: torch headers, {len(files) - 1} files")
    if args.archive:
        version = files["manifest.json"].split(b'"torch": "')[1].split(b'"')[0].decode()
        torch_pack_build.archive(files, args.archive, f"torch-{version}-headers")
        print(f"{args.archive}: the same, as a reproducible .tar.xz")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
