"""What the parse costs before any of portkit's own work: issue 34's floor for convert --jobs 1.

    python benchmarks/parse_floor.py --corpus DIR [--runs 3]

Times, in one process over every file of DIR read once into memory: a parse with each tree-sitter
grammar installed (tree-sitter-cuda, which portkit uses; tree-sitter-cpp and tree-sitter-c when
present, for comparison), then walks of the parsed cuda trees with portkit's scan query and with
smaller queries (the cost of the walk itself), and `#any-of?` name filters of growing length (the
py-tree-sitter binding checks them one name at a time). Best of --runs for each line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tree_sitter import Language, Parser, Query, QueryCursor  # noqa: E402


def best(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    files = [Path(d, f).read_bytes() for d, _, names in os.walk(args.corpus) for f in sorted(names)]
    print(f"corpus: {args.corpus}: {len(files)} files, {sum(map(len, files)) / 1e6:.1f} MB; best of {args.runs}")
    for module in ("tree_sitter_cuda", "tree_sitter_cpp", "tree_sitter_c"):
        try:
            grammar = importlib.import_module(module)
        except ImportError:
            print(f"parse {module}: not installed")
            continue
        parser = Parser(Language(grammar.language()))
        print(f"parse {module}: {best(args.runs, lambda: [parser.parse(b) for b in files]):.2f} s")
    from portkit.core import parse
    trees = [parse.parse(b) for b in files]
    variants = {"portkit's scan query": parse.scan_query(()),
                "(kernel_call_syntax) only": "(kernel_call_syntax) @n",
                "the four node kinds": "[(preproc_arg) (preproc_include) (kernel_call_syntax) (string_literal)] @n",
                "every name": "[(identifier) (type_identifier) (namespace_identifier)] @n"}
    for label, query in variants.items():
        compiled = Query(parse.language(), query) if isinstance(query, str) else query
        seconds = best(args.runs, lambda: [QueryCursor(compiled).captures(t.root_node) for t in trees])
        print(f"query walk, {label}: {seconds:.2f} s")
    names = sorted(f"name{i}" for i in range(1000))
    for count in (10, 100, 1000):
        text = " ".join(f'"{n}"' for n in names[:count])
        compiled = Query(parse.language(), f"((identifier) @n (#any-of? @n {text}))")
        seconds = best(1, lambda: [QueryCursor(compiled).captures(t.root_node) for t in trees])
        print(f"query walk, identifiers filtered by #any-of? with {count} names: {seconds:.2f} s")


if __name__ == "__main__":
    main()
