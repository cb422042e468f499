"""core/memory.give_back_freed: the pages a finished phase freed go back to the system, where
glibc can (prepare's many file-sized bytes objects left the process's resident memory at its
peak through the scan and the estimate)."""

from __future__ import annotations

import ctypes
import sys

import pytest

from portkit.core.memory import give_back_freed


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / (1 << 20)


def glibc() -> bool:
    try:
        ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    return sys.platform.startswith("linux")


@pytest.mark.skipif(not glibc(), reason="malloc_trim is glibc's (Linux); elsewhere give_back_freed does nothing")
def test_freed_file_sized_buffers_go_back_to_the_system():
    """What prepare leaves: 48 MB of 12 KB buffers (below glibc's mmap threshold: on the heap),
    each followed by a small object that stays, then the buffers freed."""
    held, kept = [], []
    for i in range(4000):
        held.append(bytearray(12 << 10))
        kept.append(bytes(40 + i % 7))   # a survivor between the freed buffers: the heap cannot shrink from its top
    before_free = resident_mb()
    del held
    freed = resident_mb()
    give_back_freed()
    after = resident_mb()
    assert before_free - freed < 16, (before_free, freed)   # glibc kept the pages: the situation this is for
    assert freed - after > 32, (before_free, freed, after)
    assert len(kept) == 4000


def test_it_does_nothing_where_there_is_no_malloc_trim(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    give_back_freed()   # returns without looking for the function
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: (_ for _ in ()).throw(OSError("no C library")))
    give_back_freed()
