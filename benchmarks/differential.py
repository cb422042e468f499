"""Benchmark: portkit convert against hipify-perl, line by line, with a verdict for every difference.

    python benchmarks/differential.py [--samples DIR] [--hipify DIR] [--work DIR] [--out FILE]

Inputs: every .cu/.cuh/.h/.cpp file of NVIDIA's cuda-samples (--samples, a local checkout, never
committed) that names CUDA, and the fixture inputs (fixtures/convert/*/input*). Each is copied
under a plain name (hipify-perl hands its file names to a shell), then converted twice by each
tool: the defaults (both keep <<<>>> launches: hipify-perl's $cuda_kernel_execution_syntax = 1,
hipify-clang's --cuda-kernel-execution-syntax defaults to true), and with launches rewritten
(portkit --launch-syntax hip, hipify-perl -hip-kernel-execution-syntax).

The two outputs of a file are aligned line by line (difflib); every differing line gets a
category and a verdict: which output hipify-clang itself would write, decided from HIPIFY's
sources (--hipify DIR: src/CUDA2HIP_*.cpp for every name, its HIP spelling and support flags;
HipifyAction.cpp for what hipify-clang never touches: comments, code its preprocessor skips).
The summary goes to stdout; the full list (or, past --max-lines, samples per category) to --out.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUFFIXES = (".cu", ".cuh", ".h", ".cpp")
USES_CUDA = re.compile(rb"\bcuda[A-Z_]\w*|\bcu[A-Z]\w*|__global__|__device__|<<<|[<\"]cuda")
# {"cudaMalloc", {"hipMalloc", "", CONV_MEMORY, API_RUNTIME, SEC::MEMORY[, FLAGS]}}
ENTRY = re.compile(r'\{"(\w+)",\s*\{"([\w:]*)",\s*"([^"]*)",\s*CONV_\w+,\s*API_\w+(?:,\s*(?:SEC::\w+|\d+))?'
                   r'(?:,\s*([A-Z_0-9 |]+))?\}\}')
TOKEN = re.compile(r"\w+|\S")
VARIANTS = {"default": ([], []), "hip-launch": (["--launch-syntax", "hip"], ["-hip-kernel-execution-syntax"])}
PK, PERL, BOTH = "portkit right", "hipify-perl right", "both acceptable"


@dataclass(frozen=True)
class Clang:
    """hipify-clang's view of one CUDA name."""

    hip: str
    flags: str

    @property
    def converts(self) -> bool:
        # FindAndReplace: experimental names need --experimental; unsupported ones stay
        return not re.search(r"\b(HIP_UNSUPPORTED|UNSUPPORTED|HIP_EXPERIMENTAL)\b", self.flags)


# What hipify-clang writes into a call beyond renaming it (HipifyAction.cpp): constants its
# FuncArgCasts add (hipHostMallocDefault, 603, ...) and the HIP names its FuncOverloads pick by
# argument count (hipEventCreateWithFlags). Filled by hipify_call_rewrites().
ARG_CONSTANTS: set[str] = set()
OVERLOADS: set[str] = set()


def hipify_call_rewrites(hipify: Path) -> None:
    text = (hipify / "src" / "HipifyAction.cpp").read_text(encoding="utf-8", errors="replace")
    ARG_CONSTANTS.update(re.findall(r'e_add_const_argument,\s*\w+,\s*"([^"]+)"', text))
    OVERLOADS.update(re.findall(r'\{"(hip\w+)",\s*"",\s*CONV_\w+,\s*API_\w+,[^}]*\},\s*ot_arguments_number', text))


def clang_table(hipify: Path) -> dict[str, Clang]:
    table: dict[str, Clang] = {}
    for path in sorted((hipify / "src").glob("CUDA2HIP_*.cpp")):
        for m in ENTRY.finditer(path.read_text(encoding="utf-8", errors="replace")):
            table.setdefault(m.group(1), Clang(m.group(2), m.group(4) or ""))
    return table


def inputs(samples: Path | None) -> list[tuple[str, str, Path]]:
    """(label, group, path): a group is one tree for portkit (cuda-samples, or one fixture case:
    a case's shim header must not make the other cases' names "already ported")."""
    found = []
    if samples is not None:
        for p in sorted(samples.rglob("*")):
            if p.suffix in SUFFIXES and p.is_file() and USES_CUDA.search(p.read_bytes()):
                found.append((f"cuda-samples/{p.relative_to(samples)}", "samples", p))
    cases = REPO / "fixtures" / "convert"
    for p in sorted(cases.glob("*/input*")):
        for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())):
            if f.suffix in SUFFIXES:
                found.append((f"fixtures/{f.relative_to(cases)}", p.parent.name, f))
    return found


def staged_names(files: list[tuple[str, str, Path]]) -> list[str]:
    return [f"{group}/f{i:04d}{path.suffix}" for i, (_, group, path) in enumerate(files)]


def stage(files: list[tuple[str, str, Path]], work: Path) -> list[str]:
    """Copies under plain names (samples/f0001.cu ...), so no name reaches hipify-perl's shell."""
    src = work / "src"
    shutil.rmtree(src, ignore_errors=True)
    names = staged_names(files)
    for name, (_, _, path) in zip(names, files):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, src / name)
    return names


def run_tools(work: Path, names: list[str], hipify: Path, variant: str) -> None:
    from portkit import scan_options
    from portkit.commands.convert import ConvertOptions, convert_paths
    pk_args, perl_args = VARIANTS[variant]
    pk_out, perl_out = work / f"portkit-{variant}", work / f"perl-{variant}"
    shutil.rmtree(pk_out, ignore_errors=True)
    options = scan_options(launch_syntax="hip" if pk_args else "cuda", build_files=False)
    for group in sorted({n.split("/")[0] for n in names}):   # each tree on its own, as `portkit convert` sees it
        convert_paths([work / "src" / group], ConvertOptions(output=pk_out / group, scan=options))
    shutil.rmtree(perl_out, ignore_errors=True)
    shutil.copytree(work / "src", perl_out)
    subprocess.run(["perl", str(hipify / "bin" / "hipify-perl"), "-inplace", "-quiet-warnings", *perl_args, *names],
                   cwd=perl_out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def lines(path: Path) -> list[str]:
    return [line.rstrip("\r\n") for line in path.read_bytes().decode("utf-8", "surrogateescape").splitlines(True)]


def pairs(a: list[str], b: list[str]):
    """(portkit line, hipify-perl line, line number in portkit's output) for each differing line."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            yield (a[i1 + k] if i1 + k < i2 else None, b[j1 + k] if j1 + k < j2 else None, i1 + min(k, i2 - i1))


def token_diffs(a: str, b: str) -> list[tuple[str, str]]:
    ta, tb = TOKEN.findall(a), TOKEN.findall(b)
    return [(" ".join(ta[i1:i2]), " ".join(tb[j1:j2]))
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()
            if tag != "equal"]


def in_comment_or_string(line: str, token: str) -> bool:
    at = line.find(token)
    if at < 0:
        return False
    before = line[:at]
    return "//" in before or "/*" in before or before.lstrip().startswith("*") or before.count('"') % 2 == 1


def classify(pk: str | None, perl: str | None, clang: dict[str, Clang]) -> tuple[str, str, str]:
    """(category, verdict, why) of one differing line."""
    if pk is None or perl is None:
        only, line = ("portkit", pk) if perl is None else ("hipify-perl", perl)
        if line is not None and line.strip().startswith("#include"):
            return f"include added only by {only}", *_include_verdict(only, line)
        return f"line only in {only}'s output", BOTH, "alignment: a line one tool split or joined"
    if pk.split() == perl.split():
        return "whitespace", BOTH, "same tokens"
    if "hipLaunchKernelGGL" in pk + perl or "<<<" in pk + perl:
        return "launch syntax", BOTH, "routed: launch syntax (another branch)"
    if pk.lstrip().startswith("#include") or perl.lstrip().startswith("#include"):
        return "include", BOTH, "routed: headers (another branch)"
    diffs = token_diffs(pk, perl)
    verdicts = [_token_verdict(a, b, pk, perl, clang) for a, b in diffs]
    if len({v[0] for v in verdicts}) == 1:
        return verdicts[0]
    return "mixed", BOTH, "; ".join(f"{c}: {w}" for c, _, w in verdicts)


def _include_verdict(only: str, line: str) -> tuple[str, str]:
    if "hip/hip_runtime.h" in line:
        return BOTH, "routed: headers (hipify-clang adds hip_runtime.h only where a CUDA header was)"
    return BOTH, "routed: headers"


def _token_verdict(a: str, b: str, pk: str, perl: str, clang: dict[str, Clang]) -> tuple[str, str, str]:
    if in_comment_or_string(perl, b) and b not in pk:
        if in_comment_or_string(pk, a) and not (a in clang or b in clang or a.startswith("cu")):
            pass
        elif _in_comment(perl, b):
            return "comment text", PK, "hipify-clang rewrites tokens, never comments (RewriteToken)"
        else:
            return _string_verdict(a, b, pk, clang)
    if a in clang:   # portkit kept the CUDA name
        c = clang[a]
        if not c.converts:
            return "name left by portkit (hipify-clang leaves it too)", PK, f"{a}: {c.flags.strip()} in CUDA2HIP"
        if c.hip == b:
            return f"name left by portkit: {a}", PERL, f"{a} -> {b} in CUDA2HIP"
        return f"name left by portkit: {a}", BOTH, f"hipify-clang writes {c.hip}"
    if b in clang:   # hipify-perl kept the CUDA name
        c = clang[b]
        if not c.converts:
            return f"name converted by portkit, hipify-clang leaves it ({c.flags.strip()})", PERL, b
        if c.hip == a:
            return "name left by hipify-perl", PK, f"{b} -> {a} in CUDA2HIP"
        return "name left by hipify-perl", BOTH, f"hipify-clang writes {c.hip}"
    if not b and any(w in ARG_CONSTANTS for w in re.findall(r"[\w:]+", a)):
        return "argument hipify-clang adds", PK, f"{a.strip(', ')}: FuncArgCasts e_add_const_argument"
    if a in OVERLOADS and b != a:
        return "HIP function chosen by argument count", PK, f"{a}: hipify-clang's FuncOverloads"
    targets = {c.hip for c in clang.values()}
    if a in targets or b in targets:   # both converted, differently
        verdict = PK if a in targets and b not in targets else PERL if b in targets and a not in targets else BOTH
        return "different HIP name", verdict, f"{a} vs {b}: {'both are' if verdict == BOTH else 'one is'} a CUDA2HIP target"
    return "other", BOTH, f"{a!r} vs {b!r}"


def _in_comment(line: str, token: str) -> bool:
    before = line[:line.find(token)]
    return "//" in before or "/*" in before or before.lstrip().startswith("*")


def _string_verdict(a: str, b: str, line: str, clang: dict[str, Clang]) -> tuple[str, str, str]:
    """RewriteString: in a string literal, each run from a "cu" to the next space (or the end) that
    is a whole CUDA name hipify-clang converts is rewritten; nothing else in strings is."""
    c = clang.get(a)
    at = line.find(a)
    whole = at >= 0 and line[at + len(a):at + len(a) + 1] in (" ", '"')
    if c is not None and c.converts and c.hip == b and a.startswith("cu") and whole:
        return "string literal text", PERL, f"{a}: RewriteString rewrites a whole word starting 'cu'"
    return "string literal text", PK, "RewriteString rewrites only whole words starting 'cu' (up to a space)"


def compare(work: Path, files: list[tuple[str, Path]], names: list[str], variant: str, clang: dict[str, Clang]):
    rows, stats = [], collections.Counter()
    for (label, _, _), name in zip(files, names):
        a = lines(work / f"portkit-{variant}" / name)
        b = lines(work / f"perl-{variant}" / name)
        stats["files"] += 1
        stats["lines"] += max(len(a), len(b))
        if a == b:
            stats["identical"] += 1
            continue
        for pk, perl, at in pairs(a, b):
            category, verdict, why = classify(pk, perl, clang)
            rows.append((label, at + 1, category, verdict, why, pk, perl))
    return rows, stats


def summary(variant: str, rows: list, stats: collections.Counter) -> str:
    by_cat = collections.Counter(r[2] for r in rows)
    by_verdict = collections.Counter(r[3] for r in rows)
    out = [f"== {variant}: {stats['files']} files, {stats['lines']} lines compared, {stats['identical']} identical "
           f"files, {len(rows)} differing lines",
           "   verdicts: " + ", ".join(f"{v} {by_verdict[v]}" for v in (PK, PERL, BOTH))]
    out += [f"   {n:6d}  {cat}" for cat, n in by_cat.most_common()]
    return "\n".join(out)


def write_list(out: Path, sections: list[tuple[str, list]], max_lines: int, per_category: int) -> None:
    text = []
    for variant, rows in sections:
        text.append(f"#### {variant}: {len(rows)} differing lines")
        shown = rows if len(rows) <= max_lines else _samples(rows, per_category)
        if shown is not rows:
            text.append(f"(more than {max_lines}: {per_category} samples per category and verdict)")
        for label, line, category, verdict, why, pk, perl in shown:
            text.append(f"{label}:{line}: [{category}] {verdict}: {why}\n  portkit:     {_cut(pk)}\n  hipify-perl: {_cut(perl)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(text) + "\n", encoding="utf-8", errors="surrogateescape")


def _cut(line: str | None, width: int = 160) -> str | None:
    return line if line is None or len(line) <= width else line[:width] + "..."


def _samples(rows: list, n: int) -> list:
    seen: collections.Counter = collections.Counter()
    kept = []
    for r in rows:
        key = (r[2], r[3], r[4] if r[2].startswith("name") else "")
        if seen[key] < n:
            seen[key] += 1
            kept.append(r)
    return kept


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, help="a checkout of NVIDIA's cuda-samples")
    ap.add_argument("--hipify", type=Path, default=Path("/tmp/pk/hipify"), help="HIPIFY (src/, bin/hipify-perl)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/portkit-differential"))
    ap.add_argument("--reuse", action="store_true", help="compare the outputs already in --work")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "differential.txt")
    ap.add_argument("--max-lines", type=int, default=1000)
    ap.add_argument("--per-category", type=int, default=5)
    args = ap.parse_args()
    files = inputs(args.samples)
    names = staged_names(files) if args.reuse else stage(files, args.work)
    clang = clang_table(args.hipify)
    hipify_call_rewrites(args.hipify)
    sections = []
    for variant in VARIANTS:
        if not args.reuse:
            run_tools(args.work, names, args.hipify, variant)
        rows, stats = compare(args.work, files, names, variant, clang)
        print(summary(variant, rows, stats))
        sections.append((variant, rows))
    write_list(args.out, sections, args.max_lines, args.per_category)
    print(f"full list: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
