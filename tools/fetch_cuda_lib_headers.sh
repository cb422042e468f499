#!/usr/bin/env bash
# Put the CUDA library headers (cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, NCCL, NVRTC, and for the rewrite-blocker
# fixtures CUTLASS/CuTe, NVSHMEM, nvJPEG) under DEST/include, so that nvcc
# can compile the fixture inputs that use them. The CUDA toolkit on these machines ships without
# them; NVIDIA publishes them on PyPI inside the runtime wheels. Only the headers are kept.
#   tools/fetch_cuda_lib_headers.sh DEST
set -euo pipefail
dest=${1:?usage: fetch_cuda_lib_headers.sh DEST}
if [ -f "$dest/include/cublas_v2.h" ] && [ -f "$dest/include/nccl.h" ] && [ -f "$dest/include/cusolverDn.h" ] \
    && [ -f "$dest/include/cutlass/cutlass.h" ] && [ -f "$dest/include/nvshmem.h" ] && [ -f "$dest/include/nvjpeg.h" ] \
    && [ -f "$dest/include/nvrtc.h" ]; then
  echo "CUDA library headers already in $dest/include"; exit 0
fi
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q --no-deps -d "$work" nvidia-cublas nvidia-curand nvidia-cufft nvidia-cusparse nvidia-cusolver nvidia-nccl-cu13 \
    nvidia-cutlass nvidia-nvshmem-cu13 nvidia-nvjpeg nvidia-cuda-nvrtc
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
            if "cutlass" in pathlib.Path(wheel).name and rel.parts[0] not in ("cutlass", "cute"):
                continue   # the CUTLASS wheel also carries its tools' headers: only the library's

            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(z.read(name))
PY
done
for h in cublas_v2.h cutlass/cutlass.h cute/tensor.hpp nvshmem.h nvjpeg.h nvrtc.h; do
  test -f "$dest/include/$h" || { echo "$h missing after download" >&2; exit 1; }
done
echo "CUDA library headers in $dest/include"
