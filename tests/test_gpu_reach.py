"""Host-only code (project/gpu_reach.py): a file no GPU compiler reads gets no warp, hip-clang or PTX
finding and no GPU-only rewrite, is not parsed when nothing else in it can matter, and convert and
audit agree on it. fixtures/convert/host_only_simd is a GPU library with a CPU SIMD path whose
32-byte masks (`kLanes = 32`, `movemask(...) == 0xffffffff`) the warp rules took for a warp's before.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from conftest import REPO, write_tree
from portkit.api import audit_paths, convert_paths
from portkit.commands.scan import prefilter
from portkit.engine.context import Options
from portkit.project import gpu_reach, pipeline
from portkit.project.config import Config

CASE = REPO / "fixtures" / "convert" / "host_only_simd" / "input"
HOST_ONLY = frozenset({"cpu/simd.cpp", "cpu/simd.h"})


def _found(document) -> list[tuple[str, str, int]]:
    return [(f["code"], f["path"], f["line"]) for f in document["findings"]]


@pytest.mark.parametrize("text, gpu", [
    (b"int cudaless = 1;\n", False),
    (b"// ported from CUDA: cudaMalloc, threadIdx\nint x;\n", False),
    (b"/* __global__ */ int y; /* unterminated cudaFree", False),
    (b"void f(cudaStream_t s);\n", True),
    (b"k<<<1, 32>>>(p);\n", True),
    (b"#include <cuda/std/atomic>\n", True),
    (b"CUresult r = cuInit(0);\n", True),
    (b'const char* glob = "kernels/*.cu"; __device__ int d;\n', True),   # a "/*" in a string starts no comment
    (b"int t = threadIdx.x;\n", True),
    (b"hipError_t e;\n", True),
    (b"int barracuda = 0, cumsum = 1;\n", False),
])
def test_uses_gpu_reads_the_code_not_its_comments(text, gpu):
    assert gpu_reach.uses_gpu(text) is gpu


def test_host_only_is_what_no_gpu_file_reaches_through_includes():
    files = [("kernels/k.cu", False, frozenset({"warp.h"})), ("include/warp.h", False, frozenset({"inner.h"})),
             ("include/inner.h", False, frozenset()), ("cpu/cpu.cpp", False, frozenset({"simd.h"})),
             ("cpu/simd.h", False, frozenset()), ("api/host_api.cpp", True, frozenset({"util.h"})),
             ("util/util.h", False, frozenset()), ("include/public.h", False, frozenset())]
    # inner.h through warp.h; util.h through a .cpp that names the runtime; public.h: nothing includes it
    assert gpu_reach.host_only(files) == frozenset({"cpu/cpu.cpp", "cpu/simd.h"})


def test_host_code_beside_a_cuda_file_is_gpu_code():
    """faiss's gpu/impl/InterleavedCodes.cpp: no CUDA named, no GPU file includes it, yet it lays codes
    out in 32-lane blocks for the kernels beside it (its AMD port made them warpSize)."""
    files = [("gpu/impl/IVF.cu", False, frozenset()), ("gpu/impl/InterleavedCodes.cpp", False, frozenset()),
             ("cpu/simd.cpp", False, frozenset())]
    assert gpu_reach.host_only(files) == frozenset({"cpu/simd.cpp"})


def test_a_set_without_gpu_code_has_no_host_only_file():
    """What includes such a set's files is elsewhere (`portkit audit include/`): nothing is left out."""
    assert gpu_reach.host_only([("a.cpp", False, frozenset({"a.h"})), ("a.h", False, frozenset())]) == frozenset()


def test_the_facts_name_the_cpu_path_of_a_gpu_library_and_the_gate_keeps_them(tmp_path, monkeypatch):
    project = pipeline.prepare([CASE], Options(audit=True), Config())
    assert project.facts.host_only == HOST_ONLY
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    cold = pipeline.tree_facts(CASE, Options(audit=True), Config())
    warm = pipeline.tree_facts(CASE, Options(audit=True), Config())   # read back from the cache
    assert cold.host_only == warm.host_only == HOST_ONLY


def test_the_audit_reports_warp_findings_in_gpu_code_only():
    assert _found(audit_paths([CASE], config=False)) == [
        ("PK201", "api.h", 4),        # nothing in the tree includes it: its users' kernels may
        ("PK203", "kernels.cu", 10),
        ("PK201", "warp.h", 4)]       # no CUDA in it, but kernels.cu includes it


def test_the_cpu_folder_audited_alone_is_not_known_to_be_host_only():
    assert _found(audit_paths([CASE / "cpu"], config=False)) == [("PK201", "simd.h", 8), ("PK203", "simd.h", 18)]


def test_host_only_files_are_not_parsed(monkeypatch):
    skipped = []
    original = prefilter.skips

    def counted(ctx):
        result = original(ctx)
        if result:
            skipped.append(ctx.source.rel)
        return result
    monkeypatch.setattr(prefilter, "skips", counted)
    audit_paths([CASE], config=False)
    assert sorted(skipped) == sorted(HOST_ONLY)


def test_fix_warp_rewrites_the_gpu_constant_and_leaves_the_cpu_path_byte_for_byte(tmp_path):
    convert_paths([CASE], output=tmp_path / "out", fixes="warp", config=False)
    for rel in HOST_ONLY:
        assert filecmp.cmp(CASE / rel, tmp_path / "out" / rel, shallow=False), rel
    assert b"kWarpSize = 32" not in (tmp_path / "out" / "warp.h").read_bytes()


def test_hip_clangs_strictness_is_rewritten_in_gpu_code_only(tmp_path):
    """The narrowing cast (PK013) in a header a .cu includes, none in the same code of a host .cpp."""
    body = ("#include <vector>\n\ninline int first(const std::vector<int>& v) {\n"
            "    int n[] = {v.size()};\n    return n[0];\n}\n")
    root = write_tree(tmp_path / "tree", {"k.cu": '#include "sizes.h"\n\n__global__ void k(int* o) { *o = 1; }\n',
                                          "sizes.h": body, "cpu/host.cpp": body})
    convert_paths([root], output=tmp_path / "out", config=False)
    assert b"static_cast<int>(v.size())" in (tmp_path / "out" / "sizes.h").read_bytes()
    assert (tmp_path / "out" / "cpu" / "host.cpp").read_text() == body
    findings = _found(audit_paths([root], config=False))
    assert ("PK013", "sizes.h", 4) in findings and not [f for f in findings if f[1] == "cpu/host.cpp"]


def test_the_commit_gate_agrees_new_simd_code_passes_and_a_new_warp_size_blocks(tmp_path, monkeypatch, capsys):
    """`portkit check` reads the tree's facts as audit does: a new 32-byte mask in the CPU path is
    not a warp's, a new `% 32` in the kernel is."""
    import shutil
    import subprocess

    from conftest import require_tool
    from portkit.cli.app import main
    require_tool("git", "git")
    root = tmp_path / "repo"
    shutil.copytree(CASE, root)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "dev")
    git("add", ".")
    git("commit", "-qm", "base")
    monkeypatch.chdir(root)
    simd = root / "cpu" / "simd.h"
    simd.write_text(simd.read_text().replace("}  // namespace simd", "inline int byte_of(int lane) {\n"
                                             "    return lane & 31;\n}\n\n}  // namespace simd"))   # high in GPU code
    git("add", "cpu/simd.h")
    assert main(["check"]) == 0
    capsys.readouterr()
    kernels = root / "kernels.cu"
    kernels.write_text(kernels.read_text() + "\n__global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % 32; }\n")
    git("add", "kernels.cu")
    assert main(["check"]) == 1
    assert "kernels.cu:20:" in capsys.readouterr().out


def test_a_suppressed_cpu_false_positive_says_why_its_comment_can_go(tmp_path):
    """A user who suppressed the warp rule's old false positive in the CPU path gets PK901, which
    says the rule no longer reports there, rather than a bare "matched no finding"."""
    import shutil
    root = tmp_path / "tree"
    shutil.copytree(CASE, root)
    simd = root / "cpu" / "simd.h"
    simd.write_text(simd.read_text().replace("constexpr int kLanes = 32;",
                                             "constexpr int kLanes = 32;   // portkit: ignore[PK201] an AVX2 register"))
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in audit_paths([root], config=False)["findings"]
             if f["code"] == "PK901"]
    assert found == [("PK901", "cpu/simd.h", 8, "suppression of PK201 matched no finding: GPU-code-only rules do not "
                      "report in a file no GPU compiler reads (the comment can go)")]
