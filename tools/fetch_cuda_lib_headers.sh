#!/usr/bin/env bash
# Put the CUDA library headers (cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, NCCL) under DEST/include, so that nvcc
# can compile the fixture inputs that use them. The CUDA toolkit on these machines ships without
# them; NVIDIA publishes them on PyPI inside the runtime wheels. Only the headers are kept.
#   tools/fetch_cuda_lib_headers.sh DEST
set -euo pipefail
dest=${1:?usage: fetch_cuda_lib_headers.sh DEST}
if [ -f "$dest/include/cublas_v2.h" ] && [ -f "$dest/include/nccl.h" ] && [ -f "$dest/include/cusolverDn.h" ]; then
  echo "CUDA library headers already in $dest/include"; exit 0
fi
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q --no-deps -d "$work" nvidia-cublas nvidia-curand nvidia-cufft nvidia-cusparse nvidia-cusolver nvidia-nccl-cu13
mkdir -p "$dest/include"
for wheel in "$work"/*.whl; do
  "$python" - "$wheel" "$dest/include" <<'PY'
import sys, zipfile, pathlib
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        parts = name.split("/")
        if "include" in parts and not name.endswith("/"):
            rel = pathlib.Path(*parts[parts.index("include") + 1:])
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(z.read(name))
PY
done
test -f "$dest/include/cublas_v2.h" || { echo "cublas_v2.h missing after download" >&2; exit 1; }
echo "CUDA library headers in $dest/include"
