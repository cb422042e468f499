"""A PyTorch extension's setup.py after convert: the NVIDIA build gets the flags it had, byte for
byte, and the ROCm build (torch.version.hip set) flags that hipcc takes.

Each case's input is converted, then both files are executed with torch stubbed (CUDAExtension and
setup only record what they are given), once as a CUDA torch and once as a ROCm torch: what the
NVIDIA build passes to nvcc and links must not change, and every word the ROCm build passes is one
hipcc compiles a HIP file with (Debian's hipcc here).
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit import api
from portkit.commands.scan.job import Job, scan_file
from portkit.core.edits import apply_edits
from portkit.core.source import SourceFile
from portkit.project.settings import resolve

CASES = [REPO / "fixtures" / "build" / name for name in ("torch_extension", "torch_mamba", "not_migrated",
                                                          "torch_cuda_home")]


def _run(script: Path, rocm: bool, monkeypatch) -> list[dict]:
    """The keyword arguments of every CUDAExtension the script makes, torch stubbed."""
    made: list[dict] = []
    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip="6.2.41133" if rocm else None, cuda=None if rocm else "12.4")
    ext = types.ModuleType("torch.utils.cpp_extension")
    ext.CUDAExtension = lambda *args, **kwargs: made.append(kwargs) or kwargs
    ext.CppExtension = lambda *args, **kwargs: kwargs
    torch.cuda = types.SimpleNamespace(is_available=lambda: True)
    ext.BuildExtension = object
    ext.CUDA_HOME, ext.ROCM_HOME = (None, "/opt/rocm") if rocm else ("/usr/local/cuda", None)
    ext.IS_HIP_EXTENSION = rocm
    utils = types.ModuleType("torch.utils")
    utils.cpp_extension = ext
    torch.utils = utils
    setuptools = types.ModuleType("setuptools")
    setuptools.setup = lambda **kwargs: None
    for name, module in (("torch", torch), ("torch.utils", utils), ("torch.utils.cpp_extension", ext),
                         ("setuptools", setuptools)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delenv("FUSED_DEBUG", raising=False)
    code = compile(script.read_text(encoding="utf-8"), str(script), "exec")
    exec(code, {"__file__": str(script), "__name__": "__main__"})
    return [{"nvcc": [str(w) for w in k.get("extra_compile_args", {}).get("nvcc", [])],
             "libraries": list(k.get("libraries", []))} for k in made]


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def converted(request, tmp_path):
    case = request.param
    api.convert_paths([case / "input"], output=tmp_path / "out", rocm="5.2")
    return case / "input" / "setup.py", tmp_path / "out" / "setup.py"


def test_the_nvidia_build_passes_the_same_flags(converted, monkeypatch):
    original, written = converted
    assert _run(written, False, monkeypatch) == _run(original, False, monkeypatch)


@pytest.mark.compile
def test_the_rocm_build_passes_only_what_hipcc_compiles_with(converted, monkeypatch, tmp_path):
    _, written = converted
    extensions = _run(written, True, monkeypatch)
    assert extensions
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc)")
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n")
    for ext in extensions:
        flags = [f for f in ext["nvcc"] if f != "-std=c++17"]   # hipcc of ROCm 5.2 defaults to C++14 headers
        assert not any(f.startswith(("--use_fast_math", "-gencode", "arch=", "--threads", "-diag-suppress",
                                     "--expt-", "-Xptxas", "--ptxas", "-lineinfo")) for f in ext["nvcc"]), ext["nvcc"]
        run = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(source), "-o",
                              str(tmp_path / "k.o"), *flags], capture_output=True, text=True,
                             env={"HIP_PLATFORM": "amd", "PATH": "/usr/bin:/bin"})
        assert run.returncode == 0, run.stderr[-2000:]
        assert all(lib in ("hipblas", "nvidia-ml") for lib in ext["libraries"]), ext["libraries"]


def test_a_rocm_branch_the_file_has_is_where_hipcc_flags_stay(tmp_path):
    """mamba's own port: `if HIP_BUILD:` gives hipcc its flags, the else nvcc's; both stay as written
    (an -fgpu-... option in the ROCm branch is hipcc's, not an unknown nvcc option)."""
    text = ("import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "HIP_BUILD = bool(torch.version.hip)\n"
            "if HIP_BUILD:\n    flags = [\"-O3\", \"-fgpu-flush-denormals-to-zero\"]\n"
            "else:\n    flags = [\"-O3\", \"--use_fast_math\", \"-diag-suppress\", \"20012,186\"]\n"
            "ext = CUDAExtension(\"m\", [\"m.cu\"], extra_compile_args={\"nvcc\": flags})\n")
    scan = scan_file(SourceFile.from_bytes("setup.py", text.encode()), "python", Job(resolve(rocm="6.2")))
    assert apply_edits(text.encode(), scan.edits) == text.encode()
    assert [(f.line, f.code) for f in scan.findings] == []


def test_a_list_of_only_gpu_targets_is_empty_for_rocm():
    """apex's group_norm_v2 `arch_flags = [three -gencode=...]`: every word is the NVIDIA build's, so
    the ROCm list is `[]` (deleting the words one by one left a lone comma, a syntax error)."""
    text = ("import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "arch_flags = [\n    \"-gencode=arch=compute_90,code=sm_90\",\n"
            "    \"-gencode=arch=compute_100,code=sm_100\",\n]\n"
            "ext = CUDAExtension(\"g\", [\"g.cu\"], extra_compile_args={\"nvcc\": [\"-O3\"] + arch_flags})\n")
    scan = scan_file(SourceFile.from_bytes("setup.py", text.encode()), "python", Job(resolve(rocm="6.2")))
    out = apply_edits(text.encode(), scan.edits).decode()
    assert out == text.replace("arch_flags = [\n", "arch_flags = ([] if torch.version.hip else [\n") \
                      .replace("sm_100\",\n]\n", "sm_100\",\n])\n")
    compile(out, "setup.py", "exec")


def test_a_cuda_home_test_builds_the_gpu_extension_on_rocm_too(monkeypatch):
    """pytorch_scatter's `WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None`: on ROCm's
    PyTorch CUDA_HOME is None, so the CUDA setup.py builds no GPU extension there; converted, it does,
    and the NVIDIA build is the same (test_the_nvidia_build_passes_the_same_flags)."""
    case = REPO / "fixtures" / "build" / "torch_cuda_home"
    assert _run(case / "input" / "setup.py", True, monkeypatch) == []
    assert _run(case / "expected" / "setup.py", True, monkeypatch) == [{"nvcc": ["-O2"], "libraries": []}]



@pytest.mark.parametrize("text, written", [
    ("WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None\n",
     "WITH_CUDA = torch.cuda.is_available() and (CUDA_HOME is not None or torch.version.hip)\n"),
    ("if CUDA_HOME:\n    build_gpu = True\n", "if (CUDA_HOME or torch.version.hip):\n    build_gpu = True\n"),
    ("if not (CUDA_HOME and os.name != 'nt'):\n    build_gpu = False\n",
     "if not ((CUDA_HOME or torch.version.hip) and os.name != 'nt'):\n    build_gpu = False\n"),
    ("cuda_home = CUDA_HOME or '/usr/local/cuda'\n", None),   # a path: `or TEST` would make it the HIP version
    # mamba's setup.py: the branch runs CUDA's nvcc from the path, which a ROCm build must not take
    ("if CUDA_HOME is not None:\n    version = os.path.join(CUDA_HOME, 'bin', 'nvcc')\n", None),
    ("def check(option):\n    if CUDA_HOME is not None:\n        return\n    print(option, 'needs nvcc')\n",
     "def check(option):\n    if (CUDA_HOME is not None or torch.version.hip):\n        return\n    print(option, 'needs nvcc')\n"),
    ("nvcc = os.path.join(CUDA_HOME, 'bin', 'nvcc') if CUDA_HOME is not None and torch.version.hip is None else None\n",
     None),   # the ROCm build is already tested there
])
def test_a_cuda_home_gate_is_a_truth_test_not_a_value(text, written):
    """buildfiles/setup_cuda_home.py rewrites CUDA_HOME only where it is read as a truth value."""
    head = "import os\nimport torch\nfrom torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
    tail = "ext = CUDAExtension('m', ['m.cu'], extra_compile_args={'nvcc': ['-O3']})\n"
    source = (head + text + tail).encode()
    scan = scan_file(SourceFile.from_bytes("setup.py", source), "python", Job(resolve(rocm="6.2")))
    assert apply_edits(source, scan.edits) == (head + (written or text) + tail).encode()
