#!/usr/bin/env bash
# Compile every CUDA input fixture with nvcc and report the ones that fail.
#
#   tools/check_fixture_inputs.sh [CASE_NAME...]
#
# Environment:
#   NVCC               nvcc to use           (default /usr/local/cuda/bin/nvcc)
#   CUDA_LIB_INCLUDE   cuBLAS/cuRAND/cuFFT/cuSPARSE headers (default /tmp/nvinc/include)
#   FIXTURES_DIR       fixtures root          (default <repo>/fixtures)
#   VERBOSE=1          print nvcc output for failures
#
# Layout checked:
#   fixtures/convert/<case>/input.{cu,cuh,cpp,h}  single-file case
#   fixtures/convert/<case>/input/                multi-file case (each .cu/.cpp compiled
#                                                 with -I input/; headers are checked
#                                                 through the files that include them)
#   fixtures/convert/<case>/case.toml             optional nvcc_flags = ["..."]
#   fixtures/sample_project/                      every .cu/.cpp under it (-I its src/)
#
# Exit status: 0 when everything compiles, 1 otherwise.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
CUDA_LIB_INCLUDE="${CUDA_LIB_INCLUDE:-/tmp/nvinc/include}"
FIXTURES_DIR="${FIXTURES_DIR:-$repo/fixtures}"
VERBOSE="${VERBOSE:-0}"

if ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "check_fixture_inputs: nvcc not found at '$NVCC' (set NVCC)" >&2
    exit 2
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

n_ok=0
n_fail=0
n_bad=0      # layout problems (missing input, missing description), not compile failures
failed=()

# nvcc_flags = ["-a", "-b"] from case.toml (single line form), one flag per line
case_flags() {
    local toml="$1"
    [ -f "$toml" ] || return 0
    sed -n 's/^[[:space:]]*nvcc_flags[[:space:]]*=[[:space:]]*\[\(.*\)\].*$/\1/p' "$toml" |
        grep -o '"[^"]*"' | tr -d '"'
}

# compile FILE [extra nvcc args...]
compile() {
    local file="$1"; shift
    local lang=()
    case "$file" in
        *.cu) ;;
        *) lang=(-x cu) ;;  # .cuh/.h/.cpp/.hpp: compile as CUDA
    esac
    if "$NVCC" -I"$CUDA_LIB_INCLUDE" "$@" "${lang[@]}" -c "$file" -o /dev/null >"$log" 2>&1; then
        n_ok=$((n_ok + 1))
        [ "$VERBOSE" = 1 ] && echo "ok    ${file#"$FIXTURES_DIR"/}"
    else
        n_fail=$((n_fail + 1))
        failed+=("${file#"$FIXTURES_DIR"/}")
        echo "FAIL  ${file#"$FIXTURES_DIR"/}"
        if [ "$VERBOSE" = 1 ]; then sed 's/^/      /' "$log"; else head -n 5 "$log" | sed 's/^/      /'; fi
    fi
}

check_case() {
    local dir="$1" name flags=() f
    name="$(basename "$dir")"
    mapfile -t flags < <(case_flags "$dir/case.toml")
    if [ -d "$dir/input" ]; then
        local found=0
        while IFS= read -r -d '' f; do
            found=1
            compile "$f" -I"$dir/input" "${flags[@]}"
        done < <(find "$dir/input" -type f \( -name '*.cu' -o -name '*.cpp' \) -print0 | sort -z)
        if [ "$found" = 0 ]; then
            n_bad=$((n_bad + 1)); failed+=("convert/$name (no .cu/.cpp in input/)")
            echo "FAIL  convert/$name: input/ has no .cu or .cpp"
        fi
    else
        local inputs=()
        for f in "$dir"/input.cu "$dir"/input.cuh "$dir"/input.cpp "$dir"/input.h; do
            [ -f "$f" ] && inputs+=("$f")
        done
        if [ "${#inputs[@]}" -ne 1 ]; then
            n_bad=$((n_bad + 1)); failed+=("convert/$name (expected one input file, found ${#inputs[@]})")
            echo "FAIL  convert/$name: expected exactly one input.{cu,cuh,cpp,h}, found ${#inputs[@]}"
            return
        fi
        compile "${inputs[0]}" "${flags[@]}"
    fi
    if [ ! -f "$dir/case.toml" ] || ! grep -q '^description[[:space:]]*=' "$dir/case.toml"; then
        n_bad=$((n_bad + 1)); failed+=("convert/$name (case.toml without description)")
        echo "FAIL  convert/$name: case.toml missing or has no description"
    fi
}

n_cases=0
if [ "$#" -gt 0 ]; then
    for name in "$@"; do
        n_cases=$((n_cases + 1))
        if [ ! -d "$FIXTURES_DIR/convert/$name" ]; then
            n_bad=$((n_bad + 1)); failed+=("convert/$name (no such case)")
            echo "FAIL  convert/$name: no such case"; continue
        fi
        check_case "$FIXTURES_DIR/convert/$name"
    done
else
    for dir in "$FIXTURES_DIR"/convert/*/; do
        [ -d "$dir" ] || continue
        check_case "${dir%/}"; n_cases=$((n_cases + 1))
    done
    if [ -d "$FIXTURES_DIR/sample_project" ]; then
        sp="$FIXTURES_DIR/sample_project"
        while IFS= read -r -d '' f; do
            compile "$f" -I"$sp/src"
        done < <(find "$sp" -type f \( -name '*.cu' -o -name '*.cpp' \) -print0 | sort -z)
    fi
fi

echo "----"
echo "cases: $n_cases  files compiled: $((n_ok + n_fail))  ok: $n_ok  failed: $n_fail  layout problems: $n_bad"
if [ "$n_fail" -gt 0 ] || [ "$n_bad" -gt 0 ]; then
    printf '  failed: %s\n' "${failed[@]}"
    exit 1
fi
exit 0
