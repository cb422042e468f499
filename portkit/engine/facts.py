"""What portkit learns about a project before the scan, kept apart from what the user asked for.

`Options` (options.py) holds the user's flags and settings; `ProjectFacts` holds what the
project pipeline (pipeline.py) learned from the tree: the AMD selector macros and the names the
project's own shim headers map, the polyfill names it defines itself, the files --rename moves,
and, in deep mode, the lines clang's preprocessor skipped. Every file of a run is scanned with
the same facts, whichever command runs it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import cached_property

from ..core.tables import ecosystem
from .rename_plan import RenamePlan


@dataclass(frozen=True)
class ProjectFacts:
    """The tree's facts every file is scanned with (picklable: they travel to worker processes)."""

    amd_macros: tuple[str, ...] = ()     # AMD selector macros: configured (amd-macros), then learned
    shim_names: frozenset[bytes] = frozenset()   # CUDA names the project's shim headers map to HIP
    one_world: tuple[tuple[str, str], ...] = ()   # (macro, "amd"|"nvidia"): defined only in that world's code
    amd_shim: bool = False               # the tree has its own CUDA-to-HIP shim header: it already builds for AMD
    amd_files: frozenset[str] = frozenset()   # headers only AMD branches include (engine/platform/amd_headers.py)
    project_defined: frozenset[str] = frozenset()   # polyfill names the project defines itself: none for them
    own_packages: frozenset[str] = frozenset()   # Python packages the project is (normalized): never its own dependency
    # the distributions the project requires (normalized; None: it declares none) and, per extra,
    # those an extra adds (project/packages.py): a framework only an extra names is optional interop
    requirements: frozenset[str] | None = None
    extras: tuple[tuple[str, frozenset[str]], ...] = ()
    rename: "RenamePlan | None" = None   # --rename: the files getting new names (their #includes follow)
    # --active-only --engine clang: (rel, inactive line runs) of every file clang preprocessed;
    # for these its preprocessor decides, for the others ppexpr under -D/-U does
    clang_inactive: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    # (library id, directory) of the vendor-neutral libraries the tree carries as source
    # (project/carried.py): their names are the project's own
    carried: tuple[tuple[str, str], ...] = ()
    # headers the tree generates from a template (src/nccl.h.in -> src/nccl.h): NCCL's own API
    # header, which its 80 sources include as "nccl.h", is never RCCL's
    generated_headers: frozenset[str] = frozenset()
    # (name, file, line): the macros that write inline assembly (`#define SYNC() asm(...)`, an alias
    # `#define ASM asm`), in audit mode (project/asm_macros.py): a use in device code is PTX (PK301)
    asm_macros: tuple[tuple[str, str, int], ...] = ()
    # the namespaces named like a CUDA library's that the tree declares inside its own ("ctranslate2::cuda",
    # project/own_namespaces.py): an unqualified `cuda::` where one is visible is the project's, not libcu++'s
    own_namespaces: tuple[str, ...] = ()
    # (name, header, line, literal, uses): a header's constant of 32 that is the block size of a
    # one-warp launch in a file that includes it, with every use that depends on it ((file, line,
    # what), project/warp_constants.py): PK208/PK201 report it once, at its definition
    warp_constants: tuple[tuple[str, str, int, bool, tuple[tuple[str, int, str], ...]], ...] = ()
    # the files a PyTorch extension's build hands to torch's build-time hipify (project/torch_extension.py):
    # convert writes there only what torch's hipify cannot (commands/torch_sources.py)
    torch_sources: frozenset[str] = frozenset()
    # the tree's files named like a CUDA library's headers (project/own_headers.py): an include
    # that reaches one from its file's folder or one above is the project's (csrc/cuda/scatter_cuda.h)
    own_headers: frozenset[str] = frozenset()
    # a source of the tree names a CUDA bfloat16 type or function: a header of it that includes cuBLAS
    # gets <hip/hip_bf16.h>, which hipBLAS's headers do not include (rewrite/transitive.py)
    bf16_tree: bool = False
    # the files no GPU compiler reads (project/gpu_reach.py): host code, where what the AMD GPU needs
    # (the rules and passes that declare gpu_only) says nothing
    host_only: frozenset[str] = frozenset()

    @cached_property   # the names the walk hands PK208 (FACT_NAMES): their definitions are in headers
    def warp_constant_names(self) -> frozenset[bytes]:
        return frozenset(name.encode("latin-1") for name, *_ in self.warp_constants)

    def warp_constant(self, rel: str, name: bytes) -> "tuple[str, str, int, bool, tuple] | None":
        """The header constant `name` as `rel` sees it: defined there, or used there (a file that
        includes its header)."""
        text = name.decode("latin-1")
        return next((c for c in self.warp_constants if c[0] == text and (c[1] == rel or any(u[0] == rel for u in c[4]))),
                    None)

    @cached_property   # the names the walk hands PK301 (rules' FACT_NAMES)
    def asm_macro_names(self) -> frozenset[bytes]:
        return frozenset(name.encode("latin-1") for name, _, _ in self.asm_macros)

    @cached_property   # name -> the outer paths it is declared under: (b"cuda": {("ctranslate2",)})
    def _namespace_parents(self) -> dict[bytes, frozenset[tuple[str, ...]]]:
        out: dict[bytes, set[tuple[str, ...]]] = {}
        for full in self.own_namespaces:
            *outer, name = full.split("::")
            out.setdefault(name.encode("latin-1"), set()).add(tuple(outer))
        return {name: frozenset(paths) for name, paths in out.items()}

    def namespace_parents(self, name: bytes) -> frozenset[tuple[str, ...]]:
        """The outer namespaces under which the tree declares its own namespace `name`."""
        return self._namespace_parents.get(name, frozenset()) if self.own_namespaces else frozenset()

    def asm_macro(self, name: bytes) -> tuple[str, int]:
        """Where the assembly macro `name` is defined: (file, line)."""
        text = name.decode("latin-1")
        return next((rel, line) for macro, rel, line in self.asm_macros if macro == text)

    @cached_property   # asked for each CUDA name a file holds: computed once per facts
    def carried_libraries(self) -> frozenset[str]:
        return frozenset(library for library, _ in self.carried)

    def carries_name(self, family: str, name: str) -> bool:
        """Whether `name`, of the mapping family `family` (a library's id: nvtx), is declared for
        AMD builds too by a library copy the tree carries: the project's own name, not CUDA's."""
        if not self.carried or family not in self.carried_libraries:
            return False
        copy = ecosystem.default().by_id[family].copy
        return copy is not None and copy.keeps(name)

    def generates(self, include: str) -> bool:
        """Whether the header an include names is one the tree generates from a template."""
        return any(rel == include or rel.endswith("/" + include) for rel in self.generated_headers)

    @cached_property
    def own_libraries(self) -> frozenset[str]:
        """The ecosystem libraries whose header the tree generates: the project is that library
        (NCCL's src/nccl.h.in), and the library's names (a mapping family of its id) are its own."""
        if not self.generated_headers:
            return frozenset()
        eco = ecosystem.default()
        return frozenset(library.id for rel in self.generated_headers
                         if (library := eco.header(rel.rsplit("/", 1)[-1])) is not None)

    def owns(self, library: "ecosystem.Library") -> bool:
        """Whether the project is the library itself: one of its own Python packages carries the
        library's name (Transformer Engine's transformer_engine/, whose C++ headers its sources
        include as <transformer_engine/...>), or it generates the library's header (NCCL)."""
        own = self.own_packages
        return (library.id in self.own_libraries or ecosystem.normalize(library.id) in own
                or any(ecosystem.normalize(name) in own for name in library.python))

    def own_header(self, include: str, includer: str) -> bool:
        """Whether `include`, spelled in the file `includer`, names a header of the tree's own
        (own_headers) from the includer's folder or, for a path with a folder (`cuda/utils.h`), a
        folder above it, where a build's -I points. A bare name is looked for beside the includer
        only: tiny-cuda-nn's optimizers/shampoo.h includes NVIDIA's <mma.h>, not the project's
        include/tiny-cuda-nn/mma.h two folders up."""
        if not self.own_headers or include.startswith("/"):
            return False
        folder = posixpath.dirname(includer)
        while True:
            if posixpath.normpath(posixpath.join(folder, include)) in self.own_headers:
                return True
            if not folder or "/" not in include:
                return False
            folder = posixpath.dirname(folder)

    def carries_header(self, include: str) -> bool:
        """Whether the header `include` names is one of a carried copy's that needs no CUDA."""
        if not self.carried:
            return False
        library = ecosystem.default().header(include)
        return library is not None and library.id in self.carried_libraries and library.copy is not None \
            and library.copy.keeps_header(include)
