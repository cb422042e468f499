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
