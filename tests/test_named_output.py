"""A report file is encoded into its output as it is rendered (cli/common.emit_rendered over
core/named_output.write_output_with): never held whole as text and again as bytes (issue 52: a
10M-line audit's 45 MB JSON report was the run's memory peak). A regular file still changes only
when the report is complete."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portkit.cli.common import emit_rendered
from portkit.core.output import is_temp_name

PIECE = "x" * 4095 + "\n"


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if is_temp_name(p.name)]


def test_the_report_reaches_the_disk_while_it_is_rendered_and_replaces_the_file_when_done(tmp_path: Path, capsys):
    target = tmp_path / "report.json"
    target.write_text("old\n")
    seen: list[int] = []

    def render(stream) -> None:
        for _ in range(256):   # 1 MB, far past the text and byte buffers (8 KB each)
            stream.write(PIECE)
        seen.append(sum(p.stat().st_size for p in temp_files(tmp_path)))
        assert target.read_text() == "old\n"   # readers see the old file until the new one is whole
        stream.write("end\n")

    emit_rendered(render, target, "the json report")
    assert seen[0] >= 256 * len(PIECE) - 2 * 8192   # on disk, not in a buffer, before render returned
    assert target.read_text() == PIECE * 256 + "end\n"
    assert temp_files(tmp_path) == []
    assert capsys.readouterr().err == f"portkit: wrote the json report to {target}\n"


def test_a_render_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path: Path, capsys):
    target = tmp_path / "report.json"
    target.write_text("old\n")

    def render(stream) -> None:
        stream.write(PIECE * 64)
        raise RuntimeError("the renderer broke")

    with pytest.raises(RuntimeError, match="the renderer broke"):
        emit_rendered(render, target, "the json report")
    assert target.read_text() == "old\n"
    assert temp_files(tmp_path) == []
    assert capsys.readouterr().err == ""


def test_text_is_written_as_its_bytes_without_newline_translation(tmp_path: Path):
    """A file name's undecodable bytes (kept as surrogates) go back as those bytes; \\r\\n stays."""
    target = tmp_path / "out" / "report.txt"   # its folder is made, as -o always did
    emit_rendered(lambda s: s.write("a\r\nb\udcff\u00e9\n"), target, "the report", quiet=True)
    assert target.read_bytes() == b"a\r\nb\xff\xc3\xa9\n"


def test_a_fifo_gets_the_report_as_a_stream(tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # a reader waits: the write is not refused
    try:
        emit_rendered(lambda s: s.write("streamed\n"), fifo, "the report", quiet=True)
        assert os.read(reader, 100) == b"streamed\n"
    finally:
        os.close(reader)
