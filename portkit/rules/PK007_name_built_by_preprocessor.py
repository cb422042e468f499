"""A CUDA name the converter cannot see whole: split by a backslash-newline or built with ##.

Reported by the converter (portkit/rewrite/preproc_names.py), from the mapping tables.

What it finds:
    A CUDA name written across lines with a backslash-newline inside it (`cuda\\` then
    `Malloc(...)` on the next line), and a macro that builds CUDA names by token pasting
    (`#define API(n) cuda##n`, used as `API(Malloc)(&p, size)`). The compiler joins these
    before it reads a name; the converter reads the source as written, so it cannot rewrite
    them, and they count as CUDA references left unconverted.

Why it matters on AMD GPUs:
    The converted file still calls the CUDA API (`cudaMalloc`), which does not exist in a HIP
    build: the port fails to compile, or links against the wrong runtime.

Example:
    #define API(n) cuda##n
    API(Malloc)(&buffer, bytes);

Instead:
    Write the name out on one line (`cudaMalloc(&buffer, bytes)`) and convert again; for a
    pasting macro, paste the HIP prefix under `#if defined(__HIP_PLATFORM_AMD__)`
    (`#define API(n) hip##n`), or list the calls it makes.

Effort:
    Minutes for a split name; for a pasting macro, an hour to check every name it makes
    against HIP.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK007", name="name-built-by-preprocessor", severity="high", category="api",
              outcome="left")
