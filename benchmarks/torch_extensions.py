"""PyTorch CUDA extensions against their human AMD ports: recall, false positives, verify (issue 53).

    python benchmarks/torch_extensions.py [--mirrors /work/.mirror] [--cache /tmp/torchx]
        [--torch-headers PACK] [--md FILE] [NAME ...]

Issue 53's "Done when". For each extension (histories.toml's entries: the upstream at the port's
base, the human port at its first AMD release), as a user would:
1. the two trees are written from the git mirrors (`fetch github:OWNER/NAME` makes them; nothing
   reaches the network) into --cache, once;
2. `portkit audit UPSTREAM --rocm 6.2 --format json`, measured the way /work/shared/tools/port_compare.py
   does (its logic is reimplemented here, restricted to the kernel sources: .cu .cuh .h .hpp .cpp
   .cc .c under a csrc/ folder): the upstream lines the human removed or changed are the human's
   sites (a run of adjacent lines counts once), a finding of any severity within WINDOW lines hits
   one; recall = sites hit. A finding above low that hits no site (in a file the human never touched,
   or away from every site) is a false-positive candidate, listed; the ones checked by hand carry
   their verdict from CHECKED. Where the port edits hipified copies (bitsandbytes' kernels.hip next
   to kernels.cu), the sites are the lines where the human's copy differs from convert's output,
   mapped back to the upstream line, so that the renames convert writes are not counted as sites;
3. `portkit convert`, then `portkit verify OUT --source UPSTREAM --rocm 6.2 --rocm-headers PACKS
   --offline` (a torch header pack when one is pinned in fixtures/rocm-headers or given): units,
   reached (not "not reached"), compiled, explained, unexplained;
4. summary.platforms.builds_for_amd of the audit, of the upstream and of the human port, and
   whether a reached unit of that tree fails to compile for AMD (the port is verified as it
   stands: torch hipifies its CUDA sources at build time).
Writes one Markdown table and the missed sites grouped by cause: the gaps for the next person.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HISTORIES = REPO / "benchmarks" / "calibration" / "histories.toml"
PACKS = REPO / "fixtures" / "rocm-headers"
PROJECTS = ("apex", "bitsandbytes", "causal-conv1d", "mamba", "pytorch_scatter")
KERNEL = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c")
COPIES = {".cu": ".hip", ".cuh": ".hiph"}   # the name a hipified copy of a CUDA file gets in a port
LOW = ("info", "low")
WINDOW = 3   # port_compare.py's default

# Candidates checked by hand: (project, path, code) -> (true positive?, why), for every line of
# that code in that file (each was read: the same construct each time). A finding where the human
# changed nothing may still be right: the port may not build that extension at all.
UNBUILT = "the port's ROCm branch of setup.py does not build this extension; the construct does not port"
CUB_ALIAS = ("the human wrote the alias the finding asks for, `namespace cub = hipcub;` under `#else` of "
             "`#ifndef USE_ROCM` beside the CUB includes (the site is there, not at this use)")
TENSOR_OP = "the human kept it: torch's hipify maps CUBLAS_GEMM_DEFAULT_TENSOR_OP (hipBLAS: HIPBLAS_GEMM_DEFAULT)"
CHECKED: dict[tuple, tuple[bool, str]] = {
    **{("apex", f"apex/contrib/csrc/groupbn/{f}", c): (True, UNBUILT)
       for f in ("batch_norm.cu", "batch_norm.h", "batch_norm_add_relu.cu", "batch_norm_add_relu.h",
                 "nhwc_batch_norm_kernel.h") for c in ("PK001", "PK004", "PK201", "PK203", "PK204", "PK206",
                                                        "PK301", "PK401", "PK506")},
    # the port's setup.py adds fast_multihead_attn and xentropy_cuda only where nvcc is found, syncbn
    # (welford.cu) only `if not is_rocm_pytorch`
    **{("apex", f"apex/contrib/csrc/multihead_attn/{f}", "PK506"): (True, UNBUILT)
       for f in ("encdec_multihead_attn_cuda.cu", "encdec_multihead_attn_norm_add_cuda.cu", "self_multihead_attn_cuda.cu",
                 "self_multihead_attn_norm_add_cuda.cu", "softmax.h")},
    **{("apex", "apex/contrib/csrc/xentropy/xentropy_kernel.cu", c): (True, UNBUILT) for c in ("PK201", "PK506")},
    ("apex", "csrc/welford.cu", "PK506"): (True, UNBUILT),
    ("apex", "csrc/type_shim.h", "PK201"):
        (False, "reduce_block_into_lanes folds x[tid+32] first and then reduces in the first 32 threads on purpose: "
                "right at 64 lanes; the human kept it"),
    **{("causal-conv1d", f"csrc/causal_conv1d_{f}.cu", "PK506"): (True, CUB_ALIAS) for f in ("fwd", "bwd")},
    **{("mamba", f"csrc/selective_scan/selective_scan_{f}_kernel.cuh", "PK506"): (True, CUB_ALIAS) for f in ("fwd", "bwd")},
    ("mamba", "csrc/selective_scan/selective_scan_common.h", "PK506"):
        (False, "nv_bfloat162 under `#if __CUDA_ARCH__ >= 800`, which hip-clang never compiles (the PK103 at line 77 "
                "says the AMD build takes the other branch); the human kept it"),
    ("mamba", "csrc/selective_scan/selective_scan_fwd_kernel.cuh", "PK201"):
        (False, "threadIdx.x % 32 == 0 reads the scan's running prefix in lane 0 of every warp: at 64 lanes a superset "
                "of the lanes that need it (each wavefront's lane 0), so it stays right; the human kept it"),
    **{("apex", f"apex/contrib/csrc/multihead_attn/{f}", "PK001"): (False, TENSOR_OP)
       for f in ("encdec_multihead_attn_cuda.cu", "encdec_multihead_attn_norm_add_cuda.cu", "self_multihead_attn_cuda.cu",
                 "self_multihead_attn_norm_add_cuda.cu", "strided_batched_gemm.h")},
    ("apex", "csrc/mlp_cuda.cu", "PK001"): (False, TENSOR_OP),
    ("bitsandbytes", "csrc/ops.cu", "PK001"): (False, TENSOR_OP),
    **{("apex", "apex/contrib/csrc/multihead_attn/softmax.h", c): (True, UNBUILT) for c in ("PK004", "PK201", "PK203")},
    ("apex", "apex/contrib/csrc/multihead_attn/strided_batched_gemm.h", "PK402"): (True, UNBUILT),
    **{("apex", "csrc/welford.cu", c): (True, UNBUILT) for c in ("PK201", "PK203")},
    ("bitsandbytes", "csrc/kernels.cu", "PK305"): (True, "HIP has no nvcuda::wmma; the port's copy leaves those kernels unported"),
    ("mamba", "csrc/selective_scan/uninitialized_copy.cuh", "PK001"):
        (True, "the human fixed every ::cuda::std use at once, with namespace cuda { namespace std = ::std; } at the include"),
    ("mamba", "csrc/selective_scan/selective_scan_common.h", "PK103"):
        (True, "hip-clang never defines __CUDA_ARCH__: the AMD build takes the other branch (the human kept it)"),
    **{("pytorch_scatter", f"csrc/{f}.cpp", "PK401"):
       (False, "a header of the project's own csrc/cuda/ folder, not libcu++'s <cuda/...>")
       for f in ("scatter", "segment_coo", "segment_csr")},
    ("pytorch_scatter", "csrc/cuda/utils.cuh", "PK004"):
        (False, "the project's own __shfl_*_sync overloads for at::Half (definitions, not calls)"),
    ("apex", "apex/contrib/csrc/multihead_attn/layer_norm.h", "PK314"): (True, UNBUILT),
    ("bitsandbytes", "csrc/kernels.cu", "PK103"):
        (True, "the port keeps `#if __CUDA_ARCH__ >= 750` around its WMMA kernels' bodies, so the AMD build compiles "
               "them empty (left unported, as the PK305 there says)"),
    **{("pytorch_scatter", f"csrc/cuda/{f}.cu", "PK203"):
       (True, "FULL_MASK is the 32-bit mask of the __shfl_*_sync calls PK506 flags there; the port's ROCm macros "
              "(SHFL_UP_SYNC, SHFL_DOWN_SYNC in utils.cuh) drop it, and the define stays for CUDA")
       for f in ("segment_coo_cuda", "segment_csr_cuda")},
    ("pytorch_scatter", "csrc/cuda/utils.cuh", "PK506"):
        (False, "inside the project's own at::Half overloads of __shfl_*_sync, which the port keeps: its ROCm "
                "macros call __shfl_up/__shfl_down, so the overloads go unused there"),
    ("pytorch_scatter", "csrc/cuda/atomics.cuh", "PK001"):
        (True, "atomicAdd on __half has no HIP overload at 6.2; the human sent ROCm to the compare-and-swap branch "
               "by the `#if` 6 lines above (the site, which PK103 reports as the file's own fallback)"),
}

# bitsandbytes' PK201s, one verdict per line (project, path, code, line): its kernels differ
WARP_STRIPED = ("the kernel reads cub's warp-striped layout (cub::WarpReduce / BlockedToWarpStriped: the hardware "
                "warp, 64 lanes under hipCUB) by 32-lane warp indices; the port keeps it")
LOGICAL = ("32-thread groups that only tile shared memory and global loads, with __syncthreads and no warp "
           "primitive: right at 64 lanes; the human kept it")
WMMA_BODY = "in a WMMA kernel the port leaves unported (its body is under `#if __CUDA_ARCH__ >= 750`, empty on AMD)"
CHECKED.update({
    **{("bitsandbytes", "csrc/kernels.cu", "PK201", n): (True, WARP_STRIPED) for n in (531, 594, 2323, 2369)},
    **{("bitsandbytes", "csrc/kernels.cu", "PK201", n): (False, LOGICAL) for n in (2570, 2571, 2572, 2865, 2866, 2867)},
    **{("bitsandbytes", "csrc/kernels.cu", "PK201", n): (True, WMMA_BODY) for n in (3098, 3281, 3306, 3449)},
})

# Missed sites read by hand: (project, path, first line) -> what the human changed and why no
# finding meets it. A label only: every site still counts in the recall; the labels of NOT_PORTING's kinds
# (the change was no port of CUDA code to AMD at ROCm 6.2) leave the site out of the porting-sites column.
SCATTER_BF16 = "not porting: BFloat16 added for both vendors (the commit is 'add BF16 for ROCm and CUDA')"
ROCM6 = "compiles at ROCm 6.2 as written (checked with the 6.2 pack; an error at 5.2): for the port's older ROCm"
HELPERS = ("the constexpr helpers and shuffle wrapper that the PK312/PK506 findings in the .cu files ask for, "
           "defined here, and the bf16 include torch's hipify maps itself")
NOT_PORTING = ("not porting:", "not needed:", "compiles at ROCm 6.2")
READ: dict[tuple[str, str, int], str] = {
    ("apex", "csrc/layer_norm_cuda_kernel.cu", 175):
        "compiles at ROCm 6.2 and 5.2 as written (checked: the float2 member deduces U = float): the explicit "
        "<float> was for an older ROCm's vector types",
    ("apex", "csrc/layer_norm_cuda_kernel.cu", 296): ROCM6,
    ("apex", "csrc/layer_norm_cuda_kernel.cu", 534): ROCM6,
    **{("apex", "csrc/multi_tensor_apply.cuh", n): "not porting: sparse tensors in multi_tensor_apply (both vendors)"
       for n in (59, 81)},
    **{("bitsandbytes", f"csrc/{f}", 1): "not porting: hipify's generated-file banner and runtime include in the "
       "port's copy (convert writes its own include)" for f in ("kernels.cuh", "ops.cu")},
    **{("bitsandbytes", f, n): "a choice of the port: its NO_HIPBLASLT build, for AMD GPUs without hipBLASLt"
       for f, n in (("csrc/ops.cu", 488), ("csrc/ops.cuh", 117))},
    **{("bitsandbytes", "csrc/pythonInterface.c", n):
       "a choice of the port: a second switch, BUILD_HIP, beside BUILD_CUDA (`#if defined(BUILD_CUDA) || "
       "defined(BUILD_HIP)`), where convert's copy keeps BUILD_CUDA on its HIP build lines (the converted Makefile's "
       "g++ line) and pytorch_scatter's port defines its WITH_CUDA for ROCm too; 133 and 300 close its NO_HIPBLASLT "
       "build, 263 and 347 open the hipSPARSE context and managed-memory calls it wrote again beside the CUDA ones"
       for n in (18, 133, 172, 263, 300, 347)},
    ("causal-conv1d", "csrc/causal_conv1d_common.h", 7): HELPERS,
    ("mamba", "csrc/selective_scan/selective_scan_common.h", 7): HELPERS,
    ("mamba", "csrc/selective_scan/selective_scan_common.h", 9): HELPERS,
    ("causal-conv1d", "csrc/causal_conv1d_update.cu", 9):
        "not needed: hipCUB includes and `namespace cub = hipcub` in a file that uses no cub:: name (torch's hipify "
        "maps the includes itself)",
    ("mamba", "csrc/selective_scan/reverse_scan.cuh", 7):
        "not needed: hipCUB includes and `namespace cub = hipcub`, where torch's hipify maps the includes and every "
        "cub:: name of the file itself (its CUB_WARP_THREADS is PK001's, line 92)",
    **{("pytorch_scatter", "csrc/version.cpp", n):
       "not needed: the include of hip_version.h for the HIP_VERSION the port returns where the CUDA build returns "
       "CUDA_VERSION (PK104, line 26): torch's hipify writes <cuda.h> as <hip/hip_runtime.h>, which includes it"
       for n in (9, 10)},
    **{("pytorch_scatter", "csrc/cuda/atomics.cuh", n): SCATTER_BF16 for n in (71, 80, 158, 185, 214, 241, 270)},
    **{("pytorch_scatter", f"csrc/cuda/{f}.cu", n): SCATTER_BF16
       for f, n in (("scatter_cuda", 114), ("segment_coo_cuda", 217), ("segment_coo_cuda", 368),
                    ("segment_csr_cuda", 150), ("segment_csr_cuda", 267))},
}

# What the human changed at a missed site, first match wins (the upstream lines and the port's).
CAUSES = (
    ("a dependent name clang wants typename/template for (nvcc accepts it)", r"typename\s+\w+::\w+\(|\.template\s|\w<float>\("),
    ("auto from a built-in index (HIP's own coordinate types)", r"auto\s+\w+\s*=\s*(blockIdx|threadIdx|blockDim|gridDim)"),
    ("std::min/max in constexpr or device code", r"std::(min|max)\b|constexpr_m(in|ax)|custom_m(in|ax)"),
    ("warp size 32 / lane masks", r"\b32\b|0xffffffff|WARP_SIZE|warpSize|lane|__ballot|__activemask"),
    ("warp shuffles / votes", r"__shfl|__any|__all|__popc|__ffs"),
    ("CUB / hipCUB / rocPRIM", r"\bcub::|hipcub|rocprim|<cub/"),
    ("half / bfloat16 types and intrinsics", r"__half|__nv_bfloat16|bfloat16|BFloat16|\bhalf\b|__float2half|__hadd"),
    ("inline PTX / asm", r"\basm\b|asm volatile|ptx"),
    ("shared memory size / attribute", r"cudaFuncSetAttribute|MaxDynamicSharedMemory|__shared__|smem"),
    ("launch bounds / block size", r"__launch_bounds__|kNThreads|BLOCK_SIZE|blockDim|THREADS"),
    ("BLAS / sparse library calls", r"cublas|cusparse|hipblas|rocblas|CUBLAS"),
    ("math / device intrinsics", r"__expf|__logf|exp2f|__fdividef|rsqrt|__ldg|atomic"),
    ("includes", r"#\s*include"),
    ("a USE_ROCM / __HIP_PLATFORM__ branch around unchanged code", r"USE_ROCM|__HIP_PLATFORM|HIP|ROCM"),
)


@dataclass
class Sites:
    """The human's sites and how the audit met them, over the kernel sources of one project."""

    runs: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)   # path -> runs, their text
    hit: int = 0
    converted: int = 0   # not hit by a finding, but convert's output changes a line within WINDOW
    missed: list[tuple[str, int, int, str]] = field(default_factory=list)   # path, lo, hi, cause
    not_porting: int = 0   # missed sites read by hand as no porting change (NOT_PORTING's labels)
    above_low: int = 0
    candidates: list[dict] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(r) for r in self.runs.values())


def changed_runs(a_lines: list[str], b_lines: list[str]) -> list[tuple[int, int, str]]:
    """Runs of upstream line numbers (1-based, inclusive) the port removed or replaced, an insertion
    counting at the line before it (port_compare.py's rule), each with the text removed and added.
    A run that changes only whitespace or comments is no site: no compiler sees it (apex's port
    stripped trailing blanks from a licence comment: 20 "sites" in xentropy_kernel.cu alone)."""
    runs = []
    a_code, b_code = code_of(a_lines), code_of(b_lines)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes():
        if tag != "equal" and [c for c in a_code[i1:i2] if c] == [c for c in b_code[j1:j2] if c]:
            continue
        text = "\n".join(a_lines[i1:i2] + b_lines[j1:j2])
        if tag in ("replace", "delete"):
            runs.append((i1 + 1, i2, text))
        elif tag == "insert":
            runs.append((max(i1, 1), max(i1, 1), text))
    return runs


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


# hipify-perl's launch, `hipLaunchKernelGGL(( K), dim3(g), dim3(b), s, t, args...)`, and `K<<<g, b>>>(args)`
# with its defaults written out: one spelling of the same launch (bitsandbytes' .hip copies are hipify-perl's)
_GGL = re.compile(r"hipLaunchKernelGGL\(\(\s*(.+?)\s*\),\s*dim3\((.*?)\),\s*dim3\((.*?)\),\s*([^,]+?),\s*([^,]+?)\s*(?:,\s*|(?=\)))")
_CHEVRONS = re.compile(r"<<<([^<>]*)>>>\s*\(")


def _launch(line: str) -> str:
    line = _GGL.sub(lambda m: f"{m[1]}<<<{m[2]}, {m[3]}, {m[4]}, {m[5]}>>>(", line)
    return _CHEVRONS.sub(lambda m: "<<<" + ", ".join((*(a.strip() for a in m[1].split(",")), "0", "0")[:4]) + ">>>(",
                         line)


def code_of(lines: list[str]) -> list[str]:
    """Each line without its comments, its launch in one spelling and its whitespace collapsed (a
    comment spanning lines blanks each line it covers, so the numbering stays)."""
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), "\n".join(lines))
    return [" ".join(_launch(line).split()) for line in text.split("\n")]


def map_back(runs: list[tuple[int, int, str]], upstream: list[str], converted: list[str]) -> list[tuple[int, int, str]]:
    """Runs in convert's output, as upstream lines: a line convert left is the same line upstream;
    one convert wrote maps to the start of the upstream lines it replaced."""
    where = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, upstream, converted, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            where[j + 1] = i1 + 1 + (j - j1) if tag == "equal" else max(i1, 1)
    mapped = {}
    for lo, hi, text in runs:
        start = where.get(lo, lo)
        key = (start, max(start, where.get(hi, hi)))
        mapped[key] = (mapped[key] + "\n" + text) if key in mapped else text
    return [(lo, hi, text) for (lo, hi), text in sorted(mapped.items())]


def kernel_sources(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and _kernel(str(p.relative_to(root))))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def human_runs(upstream: Path, port: Path, converted: Path | None,
               at: Path | None = None) -> dict[str, list[tuple[int, int, str]]]:
    """Path -> the upstream line runs the human changed, in the kernel sources both trees hold;
    a file the port keeps only as a hipified copy is compared through convert's output. Where the
    port is compared with a later upstream commit (`at`: histories.toml's upstream_at, the upstream
    the port merged), the port's changes are read against that commit and mapped back to the base's
    lines, so that what the upstream itself changed in between is not counted as the human's
    (apex's release carries NVIDIA's vectorised loads, merged from upstream in "[Upstream] IFU"),
    nor what the upstream added after the port's last merge (a run is a site only where the port
    differs from both the base and that commit)."""
    sites = {}
    for rel in kernel_sources(upstream):
        up = _lines(upstream / rel)
        copy = port / Path(rel).with_suffix(COPIES.get(Path(rel).suffix, Path(rel).suffix))
        if copy != port / rel and copy.is_file() and converted is not None and (converted / rel).is_file():
            out = _lines(converted / rel)
            runs = map_back(changed_runs(out, _lines(copy)), up, out)
        elif (port / rel).is_file() and at is not None and (at / rel).is_file():
            later, mine = _lines(at / rel), _lines(port / rel)
            direct = changed_runs(up, mine)   # where the port left the base's text, it is no change of the human's
            runs = [r for r in map_back(changed_runs(later, mine), up, later)
                    if any(r[0] - 1 <= hi and lo <= r[1] + 1 for lo, hi, _ in direct)]
        elif (port / rel).is_file():
            runs = changed_runs(up, _lines(port / rel))
        else:
            continue
        if runs:
            sites[rel] = runs
    return sites


def score(name: str, runs: dict[str, list[tuple[int, int, str]]], findings: list[dict],
          rewritten: dict[str, list[tuple[int, int, str]]] | None = None) -> Sites:
    """Recall over the sites, and the false-positive candidates among the kernel sources' findings
    above low (a finding of any severity hits a site; only those above low cost a person time)."""
    out = Sites(runs=runs)
    mine = [f for f in findings if f["path"] in runs or _kernel(f["path"])]
    near = lambda f, lo, hi: lo - WINDOW <= f["line"] <= hi + WINDOW   # noqa: E731
    for rel, spans in sorted(runs.items()):
        for lo, hi, text in spans:
            if any(f["path"] == rel and near(f, lo, hi) for f in mine):
                out.hit += 1
            elif any(a - WINDOW <= hi and lo <= b + WINDOW for a, b, _ in (rewritten or {}).get(rel, [])):
                out.converted += 1
            else:
                label = READ.get((name, rel, lo))
                out.missed.append((rel, lo, hi, label or cause(text)))
                out.not_porting += bool(label and label.startswith(NOT_PORTING))
    for f in mine:
        if f.get("severity") in LOW:
            continue
        out.above_low += 1
        if not any(near(f, lo, hi) for lo, hi, _ in runs.get(f["path"], [])):
            checked = CHECKED.get((name, f["path"], f["code"], f["line"])) or CHECKED.get((name, f["path"], f["code"]))
            out.candidates.append({**f, "checked": checked})
    return out


def _kernel(rel: str) -> bool:
    return Path(rel).suffix in KERNEL and "csrc" in Path(rel).parts


def cause(text: str) -> str:
    """The first of CAUSES whose pattern the lines the human removed and wrote match."""
    for label, pattern in CAUSES:
        if re.search(pattern, text):
            return label
    return "other (read the diff)"


@dataclass
class Outcome:
    """One extension's numbers."""

    name: str
    base: str = ""
    release: str = ""
    sites: Sites = field(default_factory=Sites)
    verify: dict = field(default_factory=dict)
    port_verify: dict = field(default_factory=dict)
    builds_up: bool | None = None
    builds_port: bool | None = None


def trees(project: dict, mirrors: Path, cache: Path) -> tuple[Path, Path, Path | None]:
    """The upstream at the port's base, the port at its first AMD release, and the upstream branch
    at the commit the port is compared with (histories.toml's upstream_at; None where it is the
    base), written once from the mirrors."""
    measured = project["measured"]
    sides = [("upstream", project["upstream"], measured["base"]), ("port", project["port"], measured["release_commit"])]
    if measured.get("upstream_at", measured["base"])[:10] != measured["base"][:10]:
        sides.append(("upstream-at", project["upstream"], measured["upstream_at"]))
    made = [_tree(project["name"], side, repo, rev, mirrors, cache) for side, repo, rev in sides]
    return made[0], made[1], made[2] if len(made) > 2 else None


def _tree(name: str, side: str, repo: str, rev: str, mirrors: Path, cache: Path) -> Path:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise SystemExit(f"{git_dir}: no mirror (fetch github:{repo})")
    where = cache / name / side
    stamp = where.parent / f"{side}.commit"
    if not (stamp.is_file() and stamp.read_text() == rev and where.is_dir()):
        where.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", rev],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
        stamp.write_text(rev)
    return where


def portkit(*args: str, timeout: int = 3600) -> subprocess.CompletedProcess:
    """The CLI as a user runs it (this checkout's portkit), never through a shell."""
    return subprocess.run([sys.executable, "-m", "portkit", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def audit(tree: Path, report: Path) -> dict:
    portkit("audit", str(tree), "--rocm", "6.2", "--format", "json", "-o", str(report))
    if not report.is_file():
        raise SystemExit(f"{tree}: audit wrote no report")
    return json.loads(report.read_text(encoding="utf-8"))


def verify(out: Path, source: Path, packs: list[str], report: Path) -> dict:
    """verify's summary, with the units a reached failure names; an error is kept as its line."""
    report.unlink(missing_ok=True)
    done = portkit("verify", str(out), "--source", str(source), "--rocm", "6.2", "-j", "2", *packs, "--offline",
                   "--format", "json", "-o", str(report), timeout=7200)
    if not report.is_file():
        return {"error": (done.stderr.strip() or done.stdout.strip())[-160:]}
    doc = json.loads(report.read_text(encoding="utf-8"))
    failed = [u for u in doc["units"] if u["status"] == "failed" and not u["not_reached"]]
    failing = [u["path"] for u in failed]
    # a unit that fails only where the code was written for an older torch or ROCm than the packs'
    # (the THC/THH headers torch 1.11 removed, a noexcept function at C++17, a shuffle of a torch half
    # that ROCm 5.6's __half overloads make ambiguous: verify/torch_release.py)
    older_only = [u["path"] for u in failed if u["errors"] and all(
        e["consequence_of"] or any(f["code"] == "PK506" and "written for an older" in f["message"]
                                   for f in e["findings"]) for e in u["errors"])]
    older = re.search(r"built with (\S+), which torch", (doc.get("torch") or {}).get("pack") or "")
    return {**doc["summary"], "failing": failing, "older_only": older_only,
            "older_torch": older.group(1) if older else "",
            "missing": Counter(h for u in doc["units"] if u["not_reached"] for h in u["missing_headers"][:1])}


def pack_args(work: Path, torch: Path | None) -> list[str]:
    """The pinned ROCm 6.2 pack unpacked (verify takes a folder), and the torch pack when one is
    given or pinned beside it (fixtures/rocm-headers/torch-*-headers.tar.xz)."""
    with tarfile.open(PACKS / "rocm-6.2.0-headers.tar.xz") as tar:
        tar.extractall(work / "packs", filter="data")
    args = ["--rocm-headers", str((work / "packs" / "rocm-6.2.0-headers").resolve())]
    torch = torch or next(iter(sorted(PACKS.glob("torch-*-headers.tar.xz"))), None)
    return args + (["--torch-headers", str(torch.resolve())] if torch else [])


def measure(project: dict, mirrors: Path, cache: Path, packs: list[str] | None) -> Outcome:
    """One extension's numbers; packs None (--no-verify) measures recall and false positives only."""
    upstream, port, at = trees(project, mirrors, cache)
    work = upstream.parent
    o = Outcome(project["name"], project["measured"]["base"], project["measured"]["release_commit"])
    doc = audit(upstream, work / "audit-upstream.json")
    o.builds_up = doc["summary"]["platforms"]["builds_for_amd"]
    o.builds_port = audit(port, work / "audit-port.json")["summary"]["platforms"]["builds_for_amd"]
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    portkit("convert", str(upstream), "-o", str(out), "--rocm", "6.2", "--format", "json")
    rewritten = {rel: changed_runs(_lines(upstream / rel), _lines(out / rel))
                 for rel in kernel_sources(upstream) if (out / rel).is_file()}
    o.sites = score(o.name, human_runs(upstream, port, out if out.is_dir() else None, at), doc["findings"],
                    rewritten)
    if packs is None:
        return o
    o.verify = verify(out, upstream, packs, work / "verify-upstream.json")
    port_out = work / "port-out"
    shutil.rmtree(port_out, ignore_errors=True)
    portkit("convert", str(port), "-o", str(port_out), "--rocm", "6.2", "--format", "json")
    o.port_verify = verify(port_out, port, packs, work / "verify-port.json")
    return o


def pct(n: int, d: int) -> str:
    return f"{n / d:.0%}" if d else "-"


def row(o: Outcome) -> str:
    s, v, pv = o.sites, o.verify, o.port_verify
    fp = sum(1 for c in s.candidates if c["checked"] and not c["checked"][0])
    tp = sum(1 for c in s.candidates if c["checked"] and c["checked"][0])
    open_ = len(s.candidates) - fp - tp
    units = (f"{v['units']} | {v['units'] - v['not_reached']} ({pct(v['units'] - v['not_reached'], v['units'])}) | "
             f"{v['compiled']} | {v['explained']} | {v['unexplained']}") if "units" in v else f"{v.get('error')} | | | |"
    port = (f"{pv['units'] - pv['not_reached']} of {pv['units']} reached, {len(pv['failing'])} failing"
            if "units" in pv else pv.get("error"))
    if pv.get("older_only"):   # failing for the torch release the port was written for, not for AMD
        port += f" ({len(pv['older_only'])} of them only where written for an older torch or ROCm than the packs')"
    if pv.get("older_torch"):   # verify's torch line: the port's build names a C++ torch 2.5.1 refuses
        port += f" (built with {pv['older_torch']}: written for a torch older than the pack's)"
    return (f"| {o.name} | {o.base[:8]}..{o.release[:8]} | {s.total} in {len(s.runs)} | {s.hit} ({pct(s.hit, s.total)}) | "
            f"{s.hit + s.converted} ({pct(s.hit + s.converted, s.total)}) | "
            f"{s.hit + s.converted} of {s.total - s.not_porting} ({pct(s.hit + s.converted, s.total - s.not_porting)}) | "
            f"{s.above_low} | {len(s.candidates)}: {fp} FP, {tp} TP, {open_} unchecked | "
            f"{pct(fp, s.above_low)} to {pct(fp + open_, s.above_low)} | {units} | {o.builds_up} | {o.builds_port}; {port} |")


def table(outcomes: list[Outcome], head: str) -> str:
    lines = [f"# PyTorch CUDA extensions against their human AMD ports (portkit {head}, ROCm 6.2)", "",
             "Written by `python benchmarks/torch_extensions.py --md benchmarks/results/torch_extensions.md`. "
             "Sites: the upstream lines of the kernel sources (csrc/) the human changed, a run once; hit: a "
             f"finding within {WINDOW} lines (hit or converted: or convert's output changes a line that near). "
             "Porting sites: the same, without the missed sites read by hand as no port of CUDA code to AMD at "
             "ROCm 6.2 (labels starting 'not porting:', 'not needed:' or 'compiles at ROCm 6.2', listed below; a "
             "site hit is never read so and stays in). FP: findings above low at no site, checked by hand (the range "
             "counts the unchecked ones as false). Verify: the converted upstream; the port's column verifies "
             "the human port as it stands and gives its audit's builds_for_amd.", "",
             "| project | base..release | human kernel sites (files) | hit (recall) | hit or converted | porting sites: hit or converted | findings above low | "
             "FP candidates | FP share | units | reached | compiled | explained | unexplained | "
             "upstream builds_for_amd | port: builds_for_amd; its units |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|---|"]
    lines += [row(o) for o in outcomes]
    return "\n".join(lines + [""] + details(outcomes)) + "\n"


def details(outcomes: list[Outcome]) -> list[str]:
    """The misses grouped by cause, the candidates with their verdicts, why units are not reached."""
    causes = Counter(c for o in outcomes for *_, c in o.sites.missed)
    lines = ["## Missed sites by cause (all projects)", ""]
    lines += [f"- {n} × {c}" for c, n in causes.most_common()]
    for o in outcomes:
        lines += ["", f"## {o.name}", ""]
        lines += [f"- missed {rel}:{lo}-{hi} ({c})" for rel, lo, hi, c in o.sites.missed]
        for f in o.sites.candidates:
            verdict = ("unchecked" if not f["checked"] else
                       ("true positive: " if f["checked"][0] else "false positive: ") + f["checked"][1])
            lines.append(f"- candidate {f['path']}:{f['line']} {f['code']} ({f['severity']}): {verdict}")
        for side, v in (("upstream", o.verify), ("port", o.port_verify)):
            if v.get("missing"):
                lines.append(f"- {side} units not reached, first missing header: "
                             + ", ".join(f"{h} × {n}" for h, n in v["missing"].most_common(5)))
            if v.get("failing"):
                lines.append(f"- {side} units failing: " + ", ".join(
                    p + (" (only where written for an older torch or ROCm)" if p in v.get("older_only", ()) else "")
                    for p in v["failing"]))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"projects of histories.toml (default: {', '.join(PROJECTS)})")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/torchx"))
    ap.add_argument("--torch-headers", type=Path, help="a torch header pack (default: one pinned in fixtures/rocm-headers)")
    ap.add_argument("--md", type=Path, help="also write the table here")
    ap.add_argument("--no-verify", action="store_true",
                    help="audit and convert only: recall and false positives in minutes, no verify columns")
    args = ap.parse_args(argv)
    known = {p["name"]: p for p in tomllib.loads(HISTORIES.read_text(encoding="utf-8"))["project"]}
    packs = None if args.no_verify else pack_args(args.cache, args.torch_headers)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    outcomes = []
    for name in args.names or PROJECTS:
        if name not in known:
            raise SystemExit(f"{name}: not in {HISTORIES.name}")
        outcomes.append(measure(known[name], args.mirrors, args.cache, packs))
        print(row(outcomes[-1]), flush=True)
    text = table(outcomes, head)
    print(text)
    if args.md:
        args.md.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
