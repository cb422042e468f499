"""A region of the file could not be parsed.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    A region tree-sitter could not parse: an #if branch that cuts a construct in two, an unusual
    macro. Names inside it are still converted and audited; larger constructs (kernel launches,
    symbol arguments) spanning it may be missed. Only in files that are parsed: a C or C++ file
    holding nothing any pass or rule acts on (no CUDA name, header, launch or marker) is not.

Why it matters on AMD GPUs:
    Findings and conversions inside the region are less complete than elsewhere.

Example:
    #if USE_FAST
    foo(a,
    #else
    foo(b,
    #endif
       c);

Instead:
    Review the region by hand after conversion. Deep mode (`--engine clang`) reads the file for
    one configuration and drops the note when it finds no kernel launch that tree-sitter missed.

Effort:
    Nothing in itself: a note on the quality of the scan.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK005", name="partially-parsed", severity="info", category="parsing",
              outcome="partially-parsed")
