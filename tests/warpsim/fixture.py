"""Running a warp fixture pair (fixtures/warp/NAME/: input.cu, expected.hip, case.toml) on the simulator.

case.toml's format is fixtures/warp/README.md's: global buffers with an initial content, launches
in order, and the buffers expected after the last launch. This module only runs a source as a
case says and returns what it computed; the test decides what that proves.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .host import run_host
from .launch import Device, Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PAIR = ("input.cu", "expected.hip", "case.toml")


def read_case(folder: Path) -> dict:
    with open(folder / "case.toml", "rb") as handle:
        return tomllib.load(handle)


def initial(spec: dict) -> list:
    size, init = spec["size"], spec.get("init", "zeros")
    if init == "data":
        if len(spec["data"]) != size:
            raise ValueError(f"data has {len(spec['data'])} values, size is {size}")
        return list(spec["data"])
    return {"iota": list(range(size)), "zeros": [0] * size, "ones": [1] * size}[init]


def simulate(source: str, case: dict, target: Target, host_defines: dict | None = None) -> dict[str, list]:
    """The contents of the buffers `[expect]` names after the case's launches (SimError if refused).
    A launch naming a `host` function runs it on the host pass, with `host_defines` predefined there."""
    device = Device(source, target)
    for name, spec in case.get("buffers", {}).items():
        device.alloc(name, spec["type"], initial(spec))
    for launch in case["launch"]:
        if "host" in launch:
            run_host(device, source, launch["host"], launch.get("args", []), host_defines)
            continue
        device.launch(launch["kernel"], launch.get("grid", [1, 1, 1]), launch["block"], launch.get("args", []),
                      launch.get("template", []), launch.get("shared_bytes", 0))
    return {name: device.buffers[name].data for name in case["expect"]}


def expected(case: dict, wave: int) -> dict[str, list]:
    """What the fixed code must compute at `wave` lanes: `[expect64]` at 64 where given."""
    return case.get("expect64", case["expect"]) if wave == 64 else case["expect"]


def folders(*roots: Path) -> list[Path]:
    return sorted(p.parent for root in roots if root.is_dir() for p in root.glob("*/case.toml"))
