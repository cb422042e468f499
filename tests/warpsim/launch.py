"""Launching a kernel: targets, blocks, wavefronts, and `__syncthreads` as phases.

A block's threads are numbered x-fastest and cut into wavefronts of `wave` lanes, as both vendors
do. Each wavefront runs in its own Python thread, but only one runs at a time: a wavefront runs
until it reaches a barrier or ends, then hands over to the next, in wavefront order. The order of
everything is therefore fixed, and a racy kernel gives the same (documented) answer on every run.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass


from .cvalues import INT, NAMED, UINT, PtrType, SimError, convert
from .expr import constant_machine
from .memory import Buffer, Pointer, Var, Vec
from .preprocess import preprocess
from .program import Program, declared, qualifiers, text
from .stmt import Frame, WarpMachine


# What HIP's NVIDIA header (nvidia_hip_runtime_api.h, 5.2 and since) makes of the mask-less shuffles;
# it maps no vote, so a mask-less vote there is CUDA's own (an error for sm_70 and later).
HIP_NVIDIA_SHUFFLES = {f"__shfl{kind}(...)": f"__shfl{kind}_sync(0xffffffff, __VA_ARGS__)"
                       for kind in ("", "_up", "_down", "_xor")}


@dataclass(frozen=True)
class Target:
    """What the compiler defines for a device: the vendor and the wavefront width."""

    platform: str  # "cuda", "amd", or "hip-nvidia" (HIP code built through HIP's NVIDIA backend)
    wave: int
    strict: bool = True  # check `_sync` masks and that a cub/hipcub collective's logical warp is all executing;
    # False runs the masks as HIP's mask-less forms would, and a collective reading absent lanes as 0
    host: bool = False  # the host pass of the same compile: no device macros, no wavefront size

    def lenient(self) -> "Target":
        return Target(self.platform, self.wave, False, self.host)

    def host_pass(self) -> "Target":
        return Target(self.platform, self.wave, self.strict, True)

    def macros(self) -> dict[str, str]:
        if self.platform == "hip-nvidia":  # HIP's NVIDIA backend: hipcc -> nvcc with the platform macro
            return {"__HIP_PLATFORM_NVIDIA__": "1", "__HIPCC__": "1", "__CUDACC__": "1", "__NVCC__": "1",
                    **HIP_NVIDIA_SHUFFLES, **({} if self.host else {"__CUDA_ARCH__": "900"})}
        if self.platform == "cuda":
            return {"__CUDACC__": "1", "__NVCC__": "1", **({} if self.host else {"__CUDA_ARCH__": "800"})}
        if self.host:  # hipcc's host pass: no __HIP_DEVICE_COMPILE__, no __AMDGCN_WAVEFRONT_SIZE, no gfx
            return {"__HIP_PLATFORM_AMD__": "1", "__HIP_PLATFORM_HCC__": "1", "__HIPCC__": "1", "__HIP__": "1"}
        gfx = {"__GFX9__": "1", "__gfx90a__": "1"} if self.wave == 64 else {"__GFX11__": "1", "__gfx1100__": "1"}
        return {"__HIP_PLATFORM_AMD__": "1", "__HIP_PLATFORM_HCC__": "1", "__HIPCC__": "1", "__HIP__": "1",
                "__HIP_DEVICE_COMPILE__": "1", "__AMDGCN__": "1", "__AMDGCN_WAVEFRONT_SIZE": str(self.wave), **gfx}


CUDA32 = Target("cuda", 32)
CUDA64 = Target("cuda", 64)
AMD32 = Target("amd", 32)
AMD64 = Target("amd", 64)
HIP_NVIDIA = Target("hip-nvidia", 32)


class _Abort(BaseException):
    """Unwinds a parked wavefront when another one failed."""


class Block:
    """One thread block: its shared memory and the hand-over between its wavefronts."""

    def __init__(self, globals_: dict, shared_bytes: int):
        self.shared: dict = {}
        self.globals = globals_
        self.shared_bytes = shared_bytes
        self._turn: dict[int, threading.Semaphore] = {}
        self._parked = threading.Semaphore(0)
        self._abort = False

    def dynamic_shared(self, ctype) -> int:
        return self.shared_bytes // max(1, ctype.bits // 8)

    def barrier(self, machine) -> None:
        self._parked.release()
        self._turn[id(machine)].acquire()
        if self._abort:
            raise _Abort

    def run(self, machines: list, body) -> None:
        errors: list[BaseException] = []
        done: set[int] = set()

        def main(machine):
            self._turn[id(machine)].acquire()
            try:
                if not self._abort:
                    body(machine)
            except _Abort:
                pass
            except BaseException as err:  # handed to the launching thread
                errors.append(err)
            finally:
                done.add(id(machine))
                self._parked.release()

        threads = []
        for machine in machines:
            self._turn[id(machine)] = threading.Semaphore(0)
            threads.append(threading.Thread(target=main, args=(machine,), daemon=True))
            threads[-1].start()
        while len(done) < len(machines) and not errors:
            for machine in machines:
                if id(machine) in done or errors:
                    continue
                self._turn[id(machine)].release()
                self._parked.acquire()
        self._abort = True
        for machine in machines:
            if id(machine) not in done:
                self._turn[id(machine)].release()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]


def _builtins(target: Target, warp: int, block: tuple, grid: tuple, block_id: tuple) -> tuple[dict, int]:
    wave = target.wave
    count = math.prod(block)
    ids = [warp * wave + lane for lane in range(wave)]
    absent = sum(1 << lane for lane, tid in enumerate(ids) if tid >= count)
    coords = [(t % block[0], t // block[0] % block[1], t // (block[0] * block[1])) for t in ids]
    names: dict[str, Vec] = {"warpSize": Vec.uniform(INT, wave, wave)}
    for axis, index in (("x", 0), ("y", 1), ("z", 2)):
        names[f"threadIdx.{axis}"] = Vec(UINT, [c[index] for c in coords])
        names[f"blockIdx.{axis}"] = Vec.uniform(UINT, block_id[index], wave)
        names[f"blockDim.{axis}"] = Vec.uniform(UINT, block[index], wave)
        names[f"gridDim.{axis}"] = Vec.uniform(UINT, grid[index], wave)
    return names, absent


def load(source: str, target: Target, defines: dict[str, str] | None = None) -> Program:
    """The source preprocessed and indexed for one target."""
    holder: list = []

    def const_eval(expression: str) -> int:
        program = Program(f"int __pk_if = ({expression});", lambda node: 0)
        node = program.global_decls[0].child_by_field_name("declarator").child_by_field_name("value")
        return constant_machine(program, target.platform).eval(node, 1).vals[0]

    macros = {**target.macros(), **(defines or {})}
    program = Program(preprocess(source, macros, const_eval), lambda node: holder[0].eval(node, 1).vals[0])
    holder.append(constant_machine(program, target.platform))
    return program


def _globals(program: Program, target: Target, pool: dict) -> None:
    """Namespace-scope constants become `Const`; `__device__`/`__constant__` data become storage."""
    machine = WarpMachine(program, target.wave, {}, target.platform, _StaticBlock(pool), 0)
    machine.frames.append(Frame(None, target.wave))
    for decl in program.global_decls:
        quals = qualifiers(decl)
        if "extern" in quals and "__shared__" not in quals:
            continue
        try:  # host-side or unsupported globals are skipped: a kernel using one fails by name
            base = machine.type_of(decl.child_by_field_name("type"))
            for declarator in decl.children_by_field_name("declarator"):
                found = declared(declarator, base)
                if declarator.type == "function_declarator" or found.value is None and not (quals & {"__device__", "__constant__"}):
                    continue
                program.globals[found.name] = machine.bind(found, quals, 1, declarator)
        except SimError:
            continue


class _StaticBlock:
    def __init__(self, pool: dict):
        self.shared, self.globals = {}, pool

    def dynamic_shared(self, ctype) -> int:
        raise SimError("dynamic shared memory outside a kernel")


class Device:
    """A program loaded for one target, its global buffers, and kernel launches over them."""

    def __init__(self, source: str, target: Target, defines: dict | None = None):
        self.target = target
        self.program = load(source, target, defines)
        self.buffers: dict[str, Buffer] = {}
        _globals(self.program, target, {})

    def alloc(self, name: str, type_name: str, data: list) -> Buffer:
        ctype = self.program.types.get(type_name) or NAMED[type_name]
        self.buffers[name] = Buffer(name, ctype, [convert(v, ctype) for v in data], "global")
        return self.buffers[name]

    def launch(self, kernel: str, grid, block, args: list, template=(), shared_bytes: int = 0) -> None:
        """Run `kernel`; a string in `args` names a buffer, a Pointer points into one (from host
        code), anything else is a scalar by value."""
        found = self.program.functions.get(kernel)
        if not found:
            raise SimError(f"no kernel named {kernel}")
        fn = found[0]
        if len(args) != len(fn.params):
            raise SimError(f"{kernel} takes {len(fn.params)} arguments, {len(args)} given")
        preset = template if isinstance(template, dict) else _template_names(fn, list(template))
        params = [(param, Pointer(self.buffers[arg], 0) if isinstance(arg, str) else
                   arg if isinstance(arg, Pointer) else None, arg) for param, arg in zip(fn.params, args)]
        block, grid = _dims(block), _dims(grid)
        warps = -(-math.prod(block) // self.target.wave)
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    _run_block(self.program, fn, self.target, block, grid, (bx, by, bz), params, warps,
                               preset, shared_bytes)


def _template_names(fn, values: list) -> dict:
    names = []
    for decl in fn.template:
        node = decl.child_by_field_name("declarator") or decl.child_by_field_name("name") or decl.named_children[0]
        names.append(text(node))
    return dict(zip(names, values))


def run(source: str, kernel: str, target: Target, block, args: dict, grid=(1, 1, 1),
        template=(), defines: dict | None = None, shared_bytes: int = 0) -> dict[str, list]:
    """One launch; array arguments are lists (their element type is the parameter's), scalars
    are numbers. Returns the final contents of every array argument by name."""
    device = Device(source, target, defines)
    found = device.program.functions.get(kernel)
    if not found:
        raise SimError(f"no kernel named {kernel}")
    ordered = []
    for param in found[0].params:
        name = declared(param.child_by_field_name("declarator"), None).name
        if name not in args:
            raise SimError(f"no argument given for parameter {name}")
        if isinstance(args[name], list):
            elem = constant_machine(device.program, target.platform).type_of(param.child_by_field_name("type"))
            device.buffers[name] = Buffer(name, elem, [convert(v, elem) for v in args[name]], "global")
            ordered.append(name)
        else:
            ordered.append(args[name])
    device.launch(kernel, grid, block, ordered, template, shared_bytes)
    return {name: list(buf.data) for name, buf in device.buffers.items()}


def _dims(value) -> tuple[int, int, int]:
    value = (value,) if isinstance(value, int) else tuple(value)
    return tuple(value) + (1,) * (3 - len(value))


def _run_block(program, fn, target, block, grid, block_id, params, warps, template, shared_bytes) -> None:
    unit = Block({}, shared_bytes)
    machines = []
    for warp in range(warps):
        names, absent = _builtins(target, warp, block, grid, block_id)
        machines.append(WarpMachine(program, target.wave, names, target.platform, unit, absent))
        machines[-1].strict = target.strict

    def body(machine: WarpMachine) -> None:
        mask = ((1 << target.wave) - 1) & ~machine.absent
        machine.bind_template(fn, [], machine.scope, machine.types, [], [], template or {})
        for param, pointer, value in params:
            name = declared(param.child_by_field_name("declarator"), None).name
            ctype = machine.type_of(param.child_by_field_name("type"))
            var = Var(name, PtrType(ctype) if pointer is not None else ctype, target.wave)
            var.vals = [pointer] * target.wave if pointer is not None else [convert(value, ctype)] * target.wave
            machine.scope.names[name] = var
        machine.invoke(fn, mask)

    unit.run(machines, body)
