"""The same tree gives the same findings in every process: fingerprints are what a baseline
and the commit gate compare, so a message that changes from run to run makes a finding "new".

PK504 named `CMAKE_CUDA_FLAGS` and `CMAKE_CUDA_FLAGS_DEBUG` (and `CUDA::nvrtc`, `CUDA::nvrtc_static`)
in the order of a set of strings, which Python's hash randomisation reorders per process: nccl's
and Transformer Engine's audits differed between two runs of the same code (2026-11-28).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

CMAKE = ('cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX CUDA)\n'
         'set(CMAKE_CUDA_FLAGS_DEBUG "${CMAKE_CUDA_FLAGS} -G")\n'
         'target_link_libraries(demo CUDA::nvrtc_static CUDA::nvrtc)\n')


def _messages(root: Path, seed: int) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONHASHSEED=str(seed), PORTKIT_NO_CACHE="1")
    out = subprocess.run([sys.executable, "-m", "portkit", "audit", str(root), "--format", "json", "--no-cache"],
                         capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    return [f"{f['line']} {f['message']} {f['fingerprint']}" for f in json.loads(out.stdout)["findings"]
            if f["code"] == "PK504"]


def test_findings_name_what_they_found_in_the_order_it_stands_in_every_process(tmp_path: Path):
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    runs = {seed: _messages(tmp_path, seed) for seed in range(6)}
    first = runs[0]
    assert [m.split(" ", 1)[1].rsplit(" ", 1)[0] for m in first] == [
        "`CMAKE_CUDA_FLAGS_DEBUG`, `CMAKE_CUDA_FLAGS`: CUDA-only CMake; HIP has its own targets and flags",
        "`CUDA::nvrtc_static`, `CUDA::nvrtc`: CUDA-only CMake; HIP has its own targets and flags"]
    assert all(messages == first for messages in runs.values())
