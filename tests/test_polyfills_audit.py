"""audit and polyfills (docs/polyfills.md): a name convert would polyfill at the audit's --rocm is
converted (priced as review of the mechanical conversion), not left for people, and the JSON
summary, the text report and the HTML report list the polyfills the tree would need."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO
from portkit.cli.app import main
from portkit.report.shape import audit_problem

FIXTURES = REPO / "fixtures" / "polyfills"


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    shutil.copy(FIXTURES / "sparse" / "input.cu", tree / "sub" / "report.cu")
    shutil.copy(FIXTURES / "device" / "input.cu", tree / "k.cu")
    return tree


def _audit(tmp_path: Path, capsys, *extra: str) -> dict:
    assert main(["audit", str(_tree(tmp_path)), "--rocm", "5.2", "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_polyfilled_names_are_converted_and_listed(tmp_path, capsys):
    doc = _audit(tmp_path, capsys)
    s = doc["summary"]
    assert s["by_code"] == {"PK206": 2}
    assert (s["cuda_refs"], s["refs_converted"], s["refs_left"]) == (24, 24, 0)
    fills = {p["name"]: p for p in s["polyfills"]}
    assert list(fills) == ["__stcs", "__vabsdiffs4", "__vabsdiffu4", "__vadd4", "__vaddss4", "__vcmpeq4",
                           "__vcmpne4", "__vsub4", "__vsubss4", "hipsparseGetErrorName", "hipsparseGetErrorString",
                           "portkit_llmax", "portkit_llmin", "portkit_syncwarp", "portkit_trap",
                           "portkit_ullmax", "portkit_ullmin", "portkit_umax", "portkit_umin"]
    assert fills["portkit_syncwarp"] == {
        "name": "portkit_syncwarp", "serves": ["__syncwarp"], "files": ["k.cu"],
        "note": "a wavefront barrier with wavefront-scope release/acquire fences; the mask is ignored (the lanes "
                "of a wavefront run in lockstep)"}
    assert fills["hipsparseGetErrorString"]["serves"] == ["cusparseGetErrorString"]
    assert fills["hipsparseGetErrorString"]["files"] == ["sub/report.cu"]
    review = next(i for i in doc["estimate"]["items"] if i["key"] == "review_converted_ref")
    assert review["facts"]["refs_converted"] == 24
    assert audit_problem(doc) is None


def test_no_polyfills_prices_them_as_left(tmp_path, capsys):
    doc = _audit(tmp_path, capsys, "--no-polyfills")
    s = doc["summary"]
    assert s["polyfills"] == []
    assert s["by_code"] == {"PK001": 16, "PK002": 2, "PK206": 2}
    assert (s["cuda_refs"], s["refs_converted"], s["refs_left"]) == (24, 4, 20)
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"] if f["code"] == "PK002"] == [
        ("sub/report.cu", 7, "PK002"), ("sub/report.cu", 7, "PK002")]


def test_text_report_names_them(tmp_path, capsys):
    assert main(["audit", str(_tree(tmp_path)), "--rocm", "5.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("Polyfills: convert defines 19 names ROCm 5.2 lacks in portkit_polyfills.h (priced as review): "
            "__stcs, __vabsdiffs4, __vabsdiffu4, __vadd4, __vaddss4, __vcmpeq4, __vcmpne4, __vsub4, __vsubss4, "
            "hipsparseGetErrorName, hipsparseGetErrorString, portkit_llmax, portkit_llmin, portkit_syncwarp, portkit_trap, "
            "portkit_ullmax, portkit_ullmin, portkit_umax, portkit_umin") in lines


def test_html_report_shows_them_and_reads_older_documents(tmp_path, capsys):
    doc = _audit(tmp_path, capsys)
    saved = tmp_path / "audit.json"
    saved.write_text(json.dumps(doc))
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert '<details id="polyfills" class="section">' in page   # folded, below the first screen (issue 33)
    assert ('<tr><td class="mono">hipsparseGetErrorName</td><td class="mono">cusparseGetErrorName</td>'
            '<td><span class="path"><span class="seg">sub</span>/<wbr><span class="seg">report.cu</span></span></td>'
            '<td>a switch over hipsparseStatus_t</td></tr>') in page   # paths break only after '/'
    del doc["summary"]["polyfills"]   # saved before the field existed: no section, no error
    saved.write_text(json.dumps(doc))
    assert main(["report", str(saved), "-o", str(tmp_path / "old.html")]) == 0
    assert 'id="polyfills"' not in (tmp_path / "old.html").read_text()
    doc["summary"]["polyfills"] = [{"name": "x", "serves": [], "files": "k.cu", "note": ""}]
    saved.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["report", str(saved), "-o", str(tmp_path / "bad.html")]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {saved}: not a valid portkit audit: "
                                       f"summary.polyfills[0].files: expected a list, got 'k.cu'\n")
