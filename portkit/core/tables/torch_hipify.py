"""torch's build-time hipify map (mappings/torch_hipify.toml): the words it renames, what it writes.

tools/torch_hipify_table.py writes the file from a torch wheel: hipify_python's PYTORCH_MAP (the
map `is_pytorch_extension=True` reads) and MATH_TRANSPILATIONS. convert reads the keys (what it
leaves to torch, commands/scan/torch_gaps.py); verify reads both, to make the copy torch's build
would compile (commands/verify/torch_hipify.py). Checked on load: a map that is not strings, or an
unknown table, is a one-line MappingError.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from ..errors import MappingError
from .mappings import tables_dir


@dataclass(frozen=True)
class TorchHipify:
    version: str              # the torch release the map is from
    names: dict[str, str]     # PYTORCH_MAP: CUDA word -> what torch's hipify writes
    math: dict[str, str]      # MATH_TRANSPILATIONS: `std::max` -> `::max`, in .cu/.cuh only

    @property
    def words(self) -> re.Pattern[bytes]:
        return _words(tuple(self.names))


@lru_cache(maxsize=1)
def load() -> TorchHipify:
    path = tables_dir() / "torch_hipify.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MappingError(f"{path}: {exc}") from None
    tables = (doc.get("map"), doc.get("math"))
    if set(doc) != {"torch", "map", "math"} or not all(isinstance(t, dict) and t for t in tables) \
            or not all(isinstance(v, str) for t in tables for v in t.values()):
        raise MappingError(f"{path}: expected `torch` and the tables `map` and `math`, of strings")
    return TorchHipify(str(doc["torch"]), dict(doc["map"]), dict(doc["math"]))


@lru_cache(maxsize=2)
def _words(names: tuple[str, ...]) -> re.Pattern[bytes]:
    """The map's words as hipify_python's RE_PYTORCH_PREPROCESSOR matches them: between non-word
    characters, the longest that fits first (its trie's regex backtracks the same way)."""
    words = b"|".join(re.escape(n.encode()) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(rb"(?<=\W)(?:" + words + rb")(?=\W)")
