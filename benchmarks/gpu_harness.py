"""The GPU side of gpu_fixture_check.py: `prepare` copies this file into the bundle as run_on_gpu.py.

    python3 .gpu/run_on_gpu.py --out $OUT [--compile-only] [--workers 16] [--only SUBSTRING]

gpu_tree_check.py (a real source tree, llm.c's dev/cuda) uses it too: there a variant's "runs" name
several argument lists for one binary (one kernel number each), whose results go under "runs", and
the manifest's "runner" entry sets the timeouts, parallel runs and deadline that bundle needs.

It runs on a machine with an NVIDIA GPU and nothing of portkit's (no tree-sitter, no network), so
it is standard library only and reads everything from manifest.json beside it. Every variant is
built with the manifest's exact argument list (its first element, "nvcc", is resolved here), in
parallel, then each binary is run, a few at a time so the GPU is not crowded. One failure never
stops the run; a deadline stops starting new work so that the results always come back, written
to $OUT/gpu_results.json after each phase and each run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent
COMPILE_TIMEOUT = 120
RUN_TIMEOUT = 20
STDOUT_LIMIT = 20_000
STDERR_LIMIT = 3_000


def tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "...[cut]..." + text[-limit:]


def execute(cmd: list[str], cwd: Path, timeout: int) -> dict:
    """Run without a shell; a timeout or a missing program is a result (rc 124 / 127), not an error."""
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, exc.stdout or b"", (exc.stderr or b"") + f"\n[timed out after {timeout} s]".encode()
    except OSError as exc:
        rc, out, err = 127, b"", str(exc).encode()
    return {"rc": rc, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "seconds": round(time.monotonic() - start, 2)}


def environment(nvcc: str) -> dict:
    """What the machine is, printed first so a failed run still says where it ran."""
    found = {}
    for key, cmd in (("nvidia_smi", ["nvidia-smi", "-L"]), ("nvcc_version", [nvcc, "--version"])):
        got = execute(cmd, BUNDLE, 60)
        found[key] = (got["stdout"] + got["stderr"]).strip()
        print(f"$ {' '.join(cmd)}\n{found[key]}", flush=True)
    return found


class Results:
    """gpu_results.json, rewritten whole after each change (a killed run keeps what it finished)."""

    def __init__(self, out: Path, env: dict, compile_only: bool):
        self.path = out / "gpu_results.json"
        self.data = {"environment": env, "compile_only": compile_only, "cases": {}}
        self.lock = threading.Lock()

    def put(self, case: str, variant: str, **fields) -> None:
        with self.lock:
            self.data["cases"].setdefault(case, {}).setdefault(variant, {}).update(fields)

    def put_run(self, case: str, variant: str, name: str, **fields) -> None:
        with self.lock:
            got = self.data["cases"].setdefault(case, {}).setdefault(variant, {})
            got.setdefault("runs", {}).setdefault(name, {}).update(fields)

    def save(self) -> None:
        with self.lock:
            text = json.dumps(self.data, indent=1, sort_keys=True)
        self.path.write_text(text, encoding="utf-8")


def driver_library() -> str | None:
    """A folder holding libcuda.so for the linker: CUDA's stub, else a link to the driver's
    libcuda.so.1 (a machine with a driver but without the toolkit's stubs has only that)."""
    candidates = [Path("/usr/local/cuda/lib64/stubs/libcuda.so")]
    listing = execute(["ldconfig", "-p"], BUNDLE, 30)["stdout"]
    candidates += [Path(line.split("=>")[-1].strip()) for line in listing.splitlines() if "libcuda.so" in line]
    for folder in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/cuda/compat", "/usr/lib/wsl/lib"):
        candidates += [Path(folder, "libcuda.so"), Path(folder, "libcuda.so.1")]
    for path in candidates:
        if path.is_file() and path.name == "libcuda.so":
            return str(path.parent)
        if path.is_file():
            link = BUNDLE / "build" / "libcuda" / "libcuda.so"
            link.parent.mkdir(parents=True, exist_ok=True)
            try:
                link.symlink_to(path)
            except FileExistsError:   # another build made it first
                pass
            return str(link.parent)
    return None


def guarded(step):
    """A step that records its own crash instead of raising: the pool must finish every job."""
    def call(job: tuple, *rest) -> None:
        try:
            step(job, *rest)
        except Exception as exc:  # noqa: BLE001 - any failure of one job is that job's result
            rest[0].put(job[0], job[1], harness_error=f"{type(exc).__name__}: {exc}")
    return call


@guarded
def build(job: tuple, results: Results, nvcc: str, deadline: float, extra: list[str]) -> None:
    case, variant, spec = job
    if time.monotonic() > deadline:
        results.put(case, variant, compile_rc=None, compile_stderr="not built: the run's deadline passed")
        return
    (BUNDLE / spec["binary"]).parent.mkdir(parents=True, exist_ok=True)
    cmd = [nvcc, *spec["compile"][1:], *extra]
    got = execute(cmd, BUNDLE, COMPILE_TIMEOUT)
    if got["rc"] and "cannot find -lcuda" in got["stderr"] and (found := driver_library()):
        cmd = [*cmd, "-L", found]   # the driver's libcuda.so.1 where the toolkit has no stub
        got = execute(cmd, BUNDLE, COMPILE_TIMEOUT)
        results.put(case, variant, link_retry=cmd)
    results.put(case, variant, compile_rc=got["rc"], compile_s=got["seconds"],
                compile_stderr=tail(got["stdout"] + got["stderr"], STDERR_LIMIT))


def run_jobs(jobs: list[tuple]) -> list[tuple]:
    """(case, variant, spec, run name, arguments), the first run of every binary before any second
    one, so a deadline cuts all programs alike and a run's variants run one after another."""
    out = []
    for order, (case, variant, spec) in enumerate(jobs):
        for index, (name, args) in enumerate((spec.get("runs") or {None: []}).items()):
            out.append((index, order, (case, variant, spec, name, args)))
    return [job for _, _, job in sorted(out, key=lambda item: item[:2])]


@guarded
def run(job: tuple, results: Results, deadline: float) -> None:
    case, variant, spec, name, args = job
    put = (lambda **f: results.put_run(case, variant, name, **f)) if name else (
        lambda **f: results.put(case, variant, **f))
    if results.data["cases"][case][variant].get("compile_rc") != 0:
        return
    if time.monotonic() > deadline:
        put(run_rc=None, run_stderr="not run: the run's deadline passed")
        return
    binary = BUNDLE / spec["binary"]
    got = execute([str(binary), *args], binary.parent, RUN_TIMEOUT)
    put(run_rc=got["rc"], run_s=got["seconds"], stdout=tail(got["stdout"], STDOUT_LIMIT),
        run_stderr=tail(got["stderr"], STDERR_LIMIT))
    results.save()


def summary_line(case: str, variants: dict) -> str:
    parts = []
    for name, got in sorted(variants.items()):
        if got.get("compile_rc") != 0:
            parts.append(f"{name}: compile rc={got.get('compile_rc')}")
        elif got.get("runs"):
            rcs = [r.get("run_rc") for r in got["runs"].values()]
            parts.append(f"{name}: {rcs.count(0)}/{len(rcs)} runs rc=0")
        elif "run_rc" in got:
            parts.append(f"{name}: run rc={got['run_rc']}")
        else:
            parts.append(f"{name}: built")
    return f"{case:<48} " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_results.json")
    parser.add_argument("--compile-only", action="store_true", help="build every variant, run none")
    parser.add_argument("--workers", type=int, default=16, help="parallel builds (default 16)")
    parser.add_argument("--run-workers", type=int, help="binaries run at once (default 4, or the manifest's)")
    parser.add_argument("--only", action="append", default=[], help="cases whose id contains this (repeatable)")
    parser.add_argument("--deadline", type=float, help="seconds after which nothing new starts (default 330)")
    parser.add_argument("--extra-flag", action="append", default=[], metavar="FLAG",
                        help="append to every build, e.g. --extra-flag=-c for a dry run without the GPU's libraries")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = parser.parse_args(argv)
    manifest = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))
    settings = {"run_workers": 4, "deadline": 330, **manifest.get("runner", {})}
    global COMPILE_TIMEOUT, RUN_TIMEOUT   # noqa: PLW0603 - one bundle per process, set once here
    COMPILE_TIMEOUT = settings.get("compile_timeout", COMPILE_TIMEOUT)
    RUN_TIMEOUT = settings.get("run_timeout", RUN_TIMEOUT)
    run_workers = args.run_workers or settings["run_workers"]
    deadline = time.monotonic() + (args.deadline or settings["deadline"])
    args.out.mkdir(parents=True, exist_ok=True)
    results = Results(args.out, environment(args.nvcc), args.compile_only)
    shutil.rmtree(BUNDLE / "build", ignore_errors=True)
    jobs = []
    for case in manifest["cases"]:
        if args.only and not any(s in case["id"] for s in args.only):
            continue
        if case.get("skipped"):
            results.put(case["id"], "skipped", reason=case["skipped"])
            continue
        jobs += [(case["id"], name, spec) for name, spec in case["variants"].items()]
    print(f"building {len(jobs)} variants with {args.workers} workers", flush=True)
    with ThreadPoolExecutor(args.workers) as pool:
        list(pool.map(lambda job: build(job, results, args.nvcc, deadline, args.extra_flag), jobs))
    results.save()
    if not args.compile_only:
        with ThreadPoolExecutor(run_workers) as pool:
            list(pool.map(lambda job: run(job, results, deadline), run_jobs(jobs)))
    results.save()
    for case, variants in sorted(results.data["cases"].items()):
        print(summary_line(case, variants) if "skipped" not in variants
              else f"{case:<48} skipped: {variants['skipped']['reason']}")
    print(f"wrote {results.path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
