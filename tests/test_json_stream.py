"""The JSON reports are written as they are encoded (report/json.dump): the same text as dumps(),
escapes included, whatever falls on a piece's edge; never the whole document held twice."""

from __future__ import annotations

import io
import json

from portkit.report import json as json_report


def _value() -> dict:
    names = [f"src/f{i}\x85\udcff.cu" if i % 7 == 0 else f"src/é{i}\x7f.cu" for i in range(3000)]
    return {"files": names, "nested": [{"path": n, "line": i, "ok": i % 2 == 0, "none": None, "hours": i / 3}
                                       for i, n in enumerate(names)], "empty": {}, "list": []}


def test_dump_writes_what_dumps_returns_in_pieces(monkeypatch):
    value = _value()
    whole = json_report.dumps(value)
    assert "\\u0085" in whole and "\\udcff" in whole and "\\u007f" in whole and "é" in whole
    for chunk in (1, 7, 1 << 10, 1 << 16, 1 << 30):
        monkeypatch.setattr(json_report, "CHUNK", chunk)
        writes: list[str] = []
        stream = io.StringIO()
        real = stream.write
        stream.write = lambda text: writes.append(text) or real(text)   # type: ignore[method-assign]
        json_report.dump(value, stream)
        assert stream.getvalue() == whole, chunk
        assert max(map(len, writes)) < len(whole) // 4 or chunk >= len(whole)
    assert json.loads(whole)["files"][1] == "src/é1\x7f.cu"


def _sample_audit(tmp_path):
    from pathlib import Path

    from portkit.cli import main
    from portkit.report.audit_load import load
    out = tmp_path / "audit.json"
    repo = Path(__file__).resolve().parents[1]
    main(["audit", str(repo / "fixtures" / "sample_project"), "--format", "json", "-o", str(out), "-q"])
    return load(json.loads(out.read_text(encoding="utf-8")))


def test_render_writes_to_json_and_turns_the_findings_into_data_one_at_a_time(tmp_path, monkeypatch):
    """render() is dumps(to_json()) + a newline, and it never holds every finding as JSON data at
    once: its allocation peak over 20,000 findings is a small part of building the whole document."""
    import dataclasses
    import tracemalloc

    audit = _sample_audit(tmp_path)
    assert audit.findings and audit.files
    many = dataclasses.replace(audit, findings=audit.findings * (3_000 // len(audit.findings) + 1))
    stream = io.StringIO()
    json_report.render(many, stream)
    assert stream.getvalue() == json_report.dumps(many.to_json()) + "\n"

    class Sink:
        def write(self, text: str) -> None:
            pass

    monkeypatch.setattr(json_report, "CHUNK", 4096)   # the pieces joined for a write: not what is measured
    tracemalloc.start()
    try:
        json_report.render(many, Sink())
        _, streamed = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        document = many.to_json()
        _, whole = tracemalloc.get_traced_memory()
        del document
    finally:
        tracemalloc.stop()
    assert streamed < whole / 4, (streamed, whole)
