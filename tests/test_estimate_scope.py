"""The headline prices the product as built for AMD (issue 30): one test per cause, exact items.

Each tree is the smallest reproduction of what a real one showed: ggml's AMD shim defining
`__vsub4` and its WMMA kernel under `!defined(GGML_USE_HIP)`, tiny-cuda-nn's WMMA counted as a
dependency and a pattern, flash-attention's CK port beside its CUTLASS kernels and its
FlashAttention-3 `hopper/` distribution, apex's cluster kernels priced per site.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree
from portkit.api import audit_paths
from portkit.estimate.scope import NVIDIA_ONLY

SHIM = ("#pragma once\n#include <hip/hip_runtime.h>\n"
        + "".join(f"#define {c} {h}\n" for c, h in (
            ("cudaMalloc", "hipMalloc"), ("cudaFree", "hipFree"), ("cudaMemcpy", "hipMemcpy"),
            ("cudaStream_t", "hipStream_t"), ("cudaMemset", "hipMemset"), ("cudaGetLastError", "hipGetLastError"),
            ("cudaDeviceSynchronize", "hipDeviceSynchronize"), ("cudaError_t", "hipError_t")))
        + "static __device__ __forceinline__ int __vsub4(const int a, const int b) { return a - b; }\n")
COMMON = ("#pragma once\n#if defined(MY_USE_HIP)\n#include \"vendors/hip.h\"\n#else\n#include <cuda_runtime.h>\n"
          "#endif\n")
CMAKE_HIP = ("cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX)\nif (MY_HIP)\n"
             "  enable_language(HIP)\n  add_compile_definitions(MY_USE_HIP)\nendif()\n")
WMMA = ("#include <mma.h>\nusing namespace nvcuda;\n__global__ void k(half *a, half *b, float *c) {\n"
        "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
        "  wmma::load_matrix_sync(fa, a, 16);\n}\n")
CUTLASS = ("#include <cutlass/cutlass.h>\n#include <cute/tensor.hpp>\n"
           "template <typename T> __global__ void fwd(T *o) { cute::Tensor t = cute::make_tensor(o, cute::make_shape(4)); }\n")
SETUP = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension, "
         "IS_HIP_EXTENSION\n{branch}setup(name=\"attn\", packages=[\"attn\"], ext_modules=[ext], "
         "cmdclass={{\"build_ext\": BuildExtension}})\n")
BOTH = ("if IS_HIP_EXTENSION:\n    ext = CUDAExtension(\"attn_ck\", [\"csrc/attn_ck/fwd.cpp\"])\nelse:\n"
        "    ext = CUDAExtension(\"attn\", [\"csrc/attn/fwd.cu\"])\n")


def _items(doc: dict) -> list[tuple]:
    return [(i["kind"], i["key"], i["hours"]["likely"], i["optional"], i["findings"]) for i in doc["estimate"]["items"]]


def test_a_name_an_amd_shim_defines_is_already_ported(tmp_path: Path):
    """ggml's vendors/hip.h defines __vsub4 for AMD: not 'no HIP equivalent', and the tree builds for AMD."""
    doc = audit_paths([write_tree(tmp_path, {"src/vendors/hip.h": SHIM, "src/common.cuh": COMMON, "CMakeLists.txt": CMAKE_HIP,
                                        "src/k.cu": "#include \"common.cuh\"\n__global__ void k(int *o, const int *a) "
                                                    "{ o[threadIdx.x] = __vsub4(a[0], a[1]); }\n"})])
    assert doc["findings"] == []
    platforms = doc["summary"]["platforms"]
    assert (platforms["builds_for_amd"], platforms["amd_build_share"], platforms["amd_implementations"]) == (
        True, 1.0, [{"path": "CMakeLists.txt", "kind": "build", "evidence": "CMakeLists.txt:4: enable_language(HIP)",
                     "replaces": "", "compiles": ""}])
    # the residue: no review, kernel checks, toolchain or CI (the AMD build exists), and no CUDA
    # runtime to adopt (common.cuh includes it only in the #else of its HIP shim); the tests still run
    assert _items(doc) == [("fixed", "project_tests", 0.25, "", [])]


def test_nvidia_only_code_is_its_own_not_included_line(tmp_path: Path):
    """ggml's WMMA indexer under !defined(GGML_USE_HIP): the AMD build leaves it out by design."""
    doc = audit_paths([write_tree(tmp_path, {"src/vendors/hip.h": SHIM, "src/common.cuh": COMMON, "CMakeLists.txt": CMAKE_HIP,
                                        "src/w.cu": "#include \"common.cuh\"\n#if !defined(MY_USE_HIP)\n" + WMMA + "#endif\n"})])
    assert [(o["feature"], o["items"]) for o in doc["estimate"]["optional"]] == [(NVIDIA_ONLY, 1)]
    assert _items(doc) == [("fixed", "project_tests", 0.25, "", []),
                           ("dependency", "wmma", 90.0, NVIDIA_ONLY, ["src/w.cu:3", "src/w.cu:6", "src/w.cu:7"])]


def test_a_wmma_kernel_is_one_item_not_a_dependency_and_a_pattern(tmp_path: Path):
    """tiny-cuda-nn: 'adopt rocWMMA' (116 h) and 'PK305 wmma' (82 h) were the same work."""
    doc = audit_paths([write_tree(tmp_path, {"k.cu": WMMA})])
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(1, "PK401"), (4, "PK305"), (5, "PK305")]
    wmma = [i for i in doc["estimate"]["items"] if i["key"] == "wmma"]
    assert [(i["kind"], i["hours"]["likely"], i["findings"]) for i in wmma] == [("dependency", 90.0, ["k.cu:1", "k.cu:4", "k.cu:5"])]
    assert [i["key"] for i in doc["estimate"]["items"] if i["kind"] == "pattern"] == []


def test_a_parallel_amd_implementation_replaces_its_cuda_twin(tmp_path: Path):
    """flash-attention's csrc/flash_attn_ck beside csrc/flash_attn, built when IS_HIP_EXTENSION."""
    doc = audit_paths([write_tree(tmp_path, {
        "csrc/attn/fwd.cu": CUTLASS, "attn/__init__.py": "import torch\n", "setup.py": SETUP.format(branch=BOTH),
        "csrc/attn_ck/fwd.cpp": "#include <hip/hip_runtime.h>\nvoid fwd_ck(float *o) { hipMemset(o, 0, 4); }\n"})])
    assert doc["summary"]["platforms"]["amd_implementations"] == [
        {"path": "csrc/attn_ck", "kind": "directory", "evidence": "csrc/attn_ck is an AMD implementation beside csrc/attn",
         "replaces": "csrc/attn", "compiles": ""},
        {"path": "setup.py", "kind": "build", "evidence": "setup.py:3: if IS_HIP_EXTENSION:", "replaces": "", "compiles": ""}]
    assert _items(doc) == [("fixed", "project_tests", 0.25, "", [])]
    assert doc["estimate"]["decisions"] == []


def test_an_amd_directory_beside_a_cuda_folder_of_its_name_replaces_it(tmp_path: Path):
    """ROCm/xformers: attention/hip_fmha (composable_kernel) beside attention/cuda/fmha (CUTLASS)."""
    doc = audit_paths([write_tree(tmp_path, {
        "csrc/attention/cuda/fmha/fwd.cu": CUTLASS, "attn/__init__.py": "import torch\n",
        "setup.py": SETUP.format(branch=BOTH),
        "csrc/attention/hip_fmha/fwd.cpp": "#include <hip/hip_runtime.h>\nvoid fwd_ck(float *o) { hipMemset(o, 0, 4); }\n"})])
    assert [(i["path"], i["replaces"]) for i in doc["summary"]["platforms"]["amd_implementations"]] == [
        ("csrc/attention/hip_fmha", "csrc/attention/cuda/fmha"), ("setup.py", "")]
    assert doc["estimate"]["decisions"] == []


def test_cutlass_and_cute_kernels_without_an_amd_port_are_one_decision(tmp_path: Path):
    """flash-attention's csrc without its CK port: one rewrite decision, not a blocker per site
    plus 'adopt CUTLASS' plus 'adopt CuTe'."""
    doc = audit_paths([write_tree(tmp_path, {"csrc/attn/fwd.cu": CUTLASS, "attn/__init__.py": "import torch\n",
                                        "setup.py": SETUP.format(branch="ext = CUDAExtension(\"attn\", [\"csrc/attn/fwd.cu\"])\n")})])
    assert doc["summary"]["blockers"] == 3
    decisions = doc["estimate"]["decisions"]
    assert [(d["id"], d["kernels"], d["files"], d["sites"], d["blocker_sites"], d["rocm_since"], d["optional"])
            for d in decisions] == [("cutlass", 1, 1, 3, 3, "5.7", "")]
    cutlass = [i for i in doc["estimate"]["items"] if i["key"] == "cutlass"]
    assert [(i["kind"], i["hours"]["likely"], i["findings"]) for i in cutlass] == [
        ("decision", 270.0, ["csrc/attn/fwd.cu:1", "csrc/attn/fwd.cu:2", "csrc/attn/fwd.cu:3"])]
    assert not [i for i in doc["estimate"]["items"] if i["key"] in ("cute", "PK402")]


def test_a_decision_is_an_item_with_blockers_of_its_own(tmp_path: Path):
    """A libcu++ name (PK001, high) on the line of a thread-block cluster (PK306, a blocker) was a
    decision of its own, with the cluster's alternative and blocker; likewise a CMake target (PK504)
    on the line that links NPP (PK402). Only the cluster is decided here, with both its sites."""
    doc = audit_paths([write_tree(tmp_path, {"k.cu": (
        "#include <cooperative_groups.h>\n#include <cuda_runtime.h>\nnamespace cg = cooperative_groups;\n\n"
        "__global__ void __cluster_dims__(2, 1, 1) k(float *out) {\n"
        "    auto rank = cuda::std::min(cg::this_cluster().block_rank(), 4u);\n"
        "    out[threadIdx.x] = rank;\n}\n")})], config=False)
    assert [(f["code"], f["line"], f["severity"]) for f in doc["findings"]] == [
        ("PK306", 5, "blocker"), ("PK001", 6, "high"), ("PK306", 6, "blocker")]
    assert [(d["id"], d["sites"], d["blocker_sites"], d["alternative"][:22]) for d in doc["estimate"]["decisions"]] == [
        ("PK306", 2, 2, "Re-tile the kernel for")]


def test_a_decisions_blocker_sites_are_lines():
    """Two blockers of one item on one line are one site (a commit of this session counted each
    finding: apex's group_norm clusters read 7 blocker sites for 5 lines)."""
    from portkit.core.findings import Finding
    from portkit.estimate.decisions import decisions
    from portkit.estimate.effort import Item
    from portkit.core.tables.ecosystem import default
    found = [Finding("PK306", "hopper-features", "blocker", "kernel", "k.cu", line, column, line, column + 5,
                     "clusters", subject=subject)
             for line, column, subject in ((5, 1, "__cluster_dims__"), (7, 9, "this_cluster"), (7, 30, "this_cluster"))]
    item = Item("pattern", "PK306:this_cluster", "hopper-features", "kernel", ".", 2, (1.0, 2.0, 3.0),
                findings=("k.cu:5", "k.cu:7"))
    [made] = decisions([item], found, default())
    assert (made["id"], made["sites"], made["blocker_sites"]) == ("PK306:this_cluster", 2, 1)


def test_a_second_distribution_is_priced_apart(tmp_path: Path):
    """flash-attention's hopper/ (FlashAttention-3) has its own setup.py: installed apart."""
    doc = audit_paths([write_tree(tmp_path, {
        "attn/__init__.py": "import torch\n", "setup.py": "from setuptools import setup\nsetup(name=\"attn\")\n",
        "csrc/k.cu": "__global__ void k(float *p) { p[0] = 1; }\n",
        "hopper/setup.py": "from setuptools import setup\nsetup(name=\"attn3\")\n", "hopper/k.cu": WMMA})])
    assert [(o["feature"], o["items"]) for o in doc["estimate"]["optional"]] == [
        ("hopper/ (a distribution installed apart)", 2)]
    assert [i["key"] for i in doc["estimate"]["items"] if i["optional"]] == ["wmma", "validate_kernel"]


def test_kernel_redesigns_are_priced_per_file_not_per_site(tmp_path: Path):
    """apex's group_norm_v2: cluster code at 5 sites in 2 files was 5 x 80 h x 0.5."""
    kernel = ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
              "__global__ void k(float *p) {\n  cg::cluster_group c = cg::this_cluster();\n"
              "  float *q = c.map_shared_rank(p, 1); q[0] = 1;\n  cg::this_cluster().sync();\n}\n")
    doc = audit_paths([write_tree(tmp_path, {"a.cu": kernel, "b.cu": kernel})])
    pk306 = [(i["count"], i["hours"]["likely"]) for i in doc["estimate"]["items"] if i["key"].startswith("PK306")]
    sites = sorted((f["path"], f["line"]) for f in doc["findings"] if f["code"] == "PK306")
    assert sites == [("a.cu", 4), ("a.cu", 5), ("b.cu", 4), ("b.cu", 5)]
    # first site 80 h, the second file x0.5, each further site in a file x0.1: 80 x (1 + 0.5 + 2 x 0.1)
    assert pk306 == [(4, 136.0)]


LIBCUXX_AMD_ALIAS = ("#pragma once\n#include <utility>\n#ifndef USE_ROCM\n#include <cuda/std/type_traits>\n#else\n"
                     "#include <hip/hip_runtime.h>\nnamespace cuda { namespace std = ::std; }\n#endif\n"
                     "template <typename T, typename U>\n__device__ void put(T *p, U &&v) { *p = ::cuda::std::forward<U>(v); }\n")


def test_a_namespace_the_amd_branch_defines_is_the_amd_builds_own(tmp_path: Path):
    """mamba's uninitialized_copy.cuh: libcu++ under `#ifndef USE_ROCM`, and in the #else
    `namespace cuda { namespace std = ::std; }`. Its `::cuda::std::forward` is already ported, and
    the include in the NVIDIA branch is no dependency of the AMD build."""
    doc = audit_paths([write_tree(tmp_path, {"copy.cuh": LIBCUXX_AMD_ALIAS})])
    assert [(f["line"], f["code"], f["severity"]) for f in doc["findings"]] == [(4, "PK401", "info")]
    assert [i["key"] for i in doc["estimate"]["items"] if i["kind"] in ("dependency", "pattern")] == []


def test_the_same_namespace_in_shared_code_is_no_port(tmp_path: Path):
    """The alias where both builds compile it proves nothing about the AMD build: cuda::std still reports."""
    shared = LIBCUXX_AMD_ALIAS.replace("#else\n#include <hip/hip_runtime.h>\nnamespace cuda { namespace std = ::std; }\n#endif\n",
                                       "#endif\nnamespace cuda { namespace std = ::std; }\n")
    doc = audit_paths([write_tree(tmp_path, {"copy.cuh": shared})])
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(4, "PK401"), (6, "PK001"), (8, "PK001")]


def test_a_library_only_the_nvidia_branch_includes_is_no_dependency(tmp_path: Path):
    """ggml's softmax.cu includes <cooperative_groups.h> in the #else of GGML_USE_HIP's
    <hip/hip_cooperative_groups.h>: the AMD build has its counterpart already."""
    code = ("#ifdef USE_ROCM\n#include <hip/hip_cooperative_groups.h>\n#else\n#include <cooperative_groups.h>\n#endif\n"
            "__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n")
    doc = audit_paths([write_tree(tmp_path, {"k.cu": code})])
    assert "cooperative-groups" not in {i["key"] for i in doc["estimate"]["items"]}
    plain = audit_paths([write_tree(tmp_path / "plain", {"k.cu": "#include <cooperative_groups.h>\n" + code.split("#endif\n")[1]})])
    assert "cooperative-groups" in {i["key"] for i in plain["estimate"]["items"]}


HIP_OPS = ("#include <hip/hip_runtime.h>\n__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n"
           "void run(float *o) { hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, o); }\n")


def test_a_parallel_amd_file_replaces_its_cuda_twin(tmp_path: Path):
    """bitsandbytes' csrc/ops.hip beside csrc/ops.cu (and ops_hip.cuh beside ops.cuh): the AMD build
    compiles the .hip files, so the CUDA twins' WMMA and cuBLAS are nothing to port."""
    doc = audit_paths([write_tree(tmp_path, {
        "CMakeLists.txt": CMAKE_HIP, "csrc/ops.cu": "#include \"ops.cuh\"\n" + WMMA, "csrc/ops.cuh": "#include <cublas_v2.h>\n",
        "csrc/ops.hip": "#include \"ops_hip.cuh\"\n" + HIP_OPS, "csrc/ops_hip.cuh": "#include <hipblas/hipblas.h>\n"})])
    twins = [(i["path"], i["kind"], i["replaces"]) for i in doc["summary"]["platforms"]["amd_implementations"]]
    assert twins == [("csrc/ops.hip", "file", "csrc/ops.cu"), ("csrc/ops_hip.cuh", "file", "csrc/ops.cuh"),
                     ("CMakeLists.txt", "build", "")]
    assert _items(doc) == [("fixed", "project_tests", 0.25, "", [])]


def test_a_file_that_includes_its_amd_namesake_is_shared_code(tmp_path: Path):
    """anthonix/llm.c's cuda_common.h includes amd_common.cuh under BUILD_AMD: both builds compile
    it, so amd_common.cuh replaces nothing (nor does a HIP file that includes its CUDA twin)."""
    doc = audit_paths([write_tree(tmp_path, {
        "llmc/cuda_common.h": "#ifdef USE_ROCM\n#include \"amd_common.cuh\"\n#else\n#include <cuda_runtime.h>\n#endif\n",
        "llmc/amd_common.cuh": "#include <hip/hip_runtime.h>\n",
        "k.cu": WMMA, "k.hip": "#include \"k.cu\"\n"})])
    assert doc["summary"]["platforms"]["amd_implementations"] == []
    assert "wmma" in {i["key"] for i in doc["estimate"]["items"]}


def test_a_test_that_imports_tensorrt_does_not_make_a_tensorrt_pipeline(tmp_path: Path):
    """NVIDIA/TransformerEngine: one ONNX-export test imports tensorrt; the library was labelled
    "TensorRT-based inference pipeline, not currently feasible". Only the headline's code decides."""
    kernel = "__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n"
    doc = audit_paths([write_tree(tmp_path / "lib", {"csrc/k.cu": kernel,
                                                     "tests/test_onnx_export.py": "import tensorrt\n"})])
    assert doc["estimate"]["archetype"]["id"] == "cuda-cpp"
    assert "tensorrt" not in doc["estimate"]["signals"]
    served = audit_paths([write_tree(tmp_path / "serve", {"csrc/k.cu": kernel, "serve/__init__.py": "",
                                                          "serve/engine.py": "import tensorrt\n"})])
    assert served["estimate"]["archetype"]["id"] == "tensorrt-inference"


def test_a_hip_files_thrust_is_rocthrust(tmp_path: Path):
    """ROCm/rocm-examples: Libraries/rocThrust/device_ptr/main.hip includes <thrust/device_ptr.h>,
    which rocThrust provides under Thrust's name: nothing to adopt. The same include in a .cu is."""
    code = "#include <thrust/device_vector.h>\nint count() { thrust::device_vector<int> v(4); return (int)v.size(); }\n"
    hip = audit_paths([write_tree(tmp_path / "hip", {"main.hip": code})])
    cuda = audit_paths([write_tree(tmp_path / "cuda", {"main.cu": code})])
    assert "thrust" not in {i["key"] for i in hip["estimate"]["items"]}
    assert "thrust" in {i["key"] for i in cuda["estimate"]["items"]}


def test_a_setup_py_branching_on_a_rocm_name_builds_for_amd(tmp_path: Path):
    """ROCm's Transformer Engine: `if rocm_build():` in setup.py (apex's fork: IS_ROCM_PYTORCH);
    a word that only contains the letters (`procmon`) says nothing."""
    setup = "from setuptools import setup\nif rocm_build():\n    flags = ['-DUSE_ROCM']\nsetup(name='te')\n"
    doc = audit_paths([write_tree(tmp_path / "te", {"setup.py": setup, "csrc/k.cu": "__global__ void k() {}\n"})])
    assert [(i["path"], i["evidence"]) for i in doc["summary"]["platforms"]["amd_implementations"]] == [
        ("setup.py", "setup.py:2: if rocm_build():")]
    other = audit_paths([write_tree(tmp_path / "other", {"setup.py": setup.replace("rocm_build", "procmon"),
                                                         "csrc/k.cu": "__global__ void k() {}\n"})])
    assert other["summary"]["platforms"]["amd_implementations"] == []


def test_a_hip_files_cudnn_is_still_a_dependency(tmp_path: Path):
    """Only a drop-in library keeps its name under ROCm: cuDNN in a .hip file still needs MIOpen."""
    doc = audit_paths([write_tree(tmp_path, {"conv.hip": "#include <cudnn.h>\nint handle() { return 0; }\n"})])
    assert "cudnn" in {i["key"] for i in doc["estimate"]["items"]}
