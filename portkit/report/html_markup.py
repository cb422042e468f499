"""Markup for untrusted text in the HTML report: `code` spans and paths that wrap only at '/'.

Messages and advice are written with backticks around code (`threadIdx.x & 31`); shown raw, the
backticks read as noise, so the report shows each balanced pair as <code>. Paths are long and
narrow columns broke them mid-name (`attention_for` / `ward.cu`); each segment is kept whole
(CSS: .seg is nowrap) and a line may break only after a '/' (<wbr>). Long CUDA names in labels
may break after an underscore. Everything else is escaped:
the text comes from the audited tree and may hold markup.
"""

from __future__ import annotations

from markupsafe import Markup, escape


def code_spans(text: str) -> Markup:
    """`text` escaped, each balanced `...` pair as <code>; a lone backtick stays a backtick."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:            # an odd number of backticks: the last one has no partner
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return Markup("").join(escape(p) if k % 2 == 0 else Markup("<code>%s</code>") % p for k, p in enumerate(parts))


def name_breaks(text: str) -> Markup:
    """code_spans(text) with a break allowed after each '_' (CUBLASLT_MATMUL_DESC_SCALE_TYPE in a
    work item's label): a narrow column breaks such a name between its words, not inside one."""
    return Markup(str(code_spans(text)).replace("_", "_<wbr>"))   # escaped text and <code> tags hold no markup '_'


def path(text: str) -> Markup:
    """`text` escaped, each '/'-separated segment unbreakable, a break allowed after each '/'."""
    segments = str(text).split("/")
    return Markup('<span class="path">%s</span>') % Markup("/<wbr>").join(
        Markup('<span class="seg">%s</span>') % s for s in segments)
