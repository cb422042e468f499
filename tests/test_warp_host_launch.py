"""The lane simulator's host side (tests/warpsim/host.py): launch configurations computed by host code.

A `[[launch]]` with `host = "fn"` runs a host function on the HOST pass of the source (no
`__CUDA_ARCH__`, no `__HIP_DEVICE_COMPILE__`, no `__AMDGCN_WAVEFRONT_SIZE`) and each kernel it
launches on the device pass at the target's lane count; these tests pin what it runs, exactly.
"""

from __future__ import annotations

import pytest

from warpsim import AMD32, AMD64, CUDA32, Device, OutOfBounds, SimError, run_host

# Each launch's kernel writes its gridDim and blockDim into a slot of 6.
SHAPES = """
__global__ void shape(unsigned* out, int slot) {
    if (blockIdx.x + blockIdx.y + threadIdx.x + threadIdx.y + threadIdx.z == 0) {
        out[slot * 6 + 0] = gridDim.x; out[slot * 6 + 1] = gridDim.y; out[slot * 6 + 2] = gridDim.z;
        out[slot * 6 + 3] = blockDim.x; out[slot * 6 + 4] = blockDim.y; out[slot * 6 + 5] = blockDim.z;
    }
}
"""


def device(source: str, target, size: int) -> Device:
    dev = Device(source, target)
    dev.alloc("out", "unsigned", [0] * size)
    return dev


def slots(dev: Device, count: int) -> list[list[int]]:
    data = dev.buffers["out"].data
    return [data[i * 6:i * 6 + 6] for i in range(count)]


def test_dim3_forms_and_both_launch_syntaxes():
    source = SHAPES + """
    void launch(unsigned* out, int n) {
        dim3 a(n, 2, 3);
        dim3 b = {4, 8};
        dim3 c{n / 2};
        dim3 d(n);
        a.z = 1;
        shape<<<a, b>>>(out, 0);
        shape<<<dim3(2, n), c, 0, 0>>>(out, 1);
        shape<<<1, d.x * b.y>>>(out, 2);
        hipLaunchKernelGGL(shape, dim3(n), dim3(b.x, 1, b.y / 4), 0, 0, out, 3);
    }
    """
    dev = device(source, CUDA32, 24)
    run_host(dev, source, "launch", ["out", 3])
    assert slots(dev, 4) == [[3, 2, 1, 4, 8, 1], [2, 3, 1, 1, 1, 1], [1, 1, 1, 24, 1, 1], [3, 1, 1, 4, 1, 2]]


def test_host_pass_sees_no_device_macros_and_the_kernel_sees_its_target():
    source = """
    #if defined(__AMDGCN_WAVEFRONT_SIZE)
    #define WAVE __AMDGCN_WAVEFRONT_SIZE
    #elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    #define WAVE 1000
    #elif defined(__HIP__) && defined(__HIPCC__) && defined(__HIP_PLATFORM_AMD__)
    #define WAVE 3
    #elif defined(__CUDACC__)
    #define WAVE 5
    #endif
    __global__ void k(unsigned* out) { if (blockIdx.x == 0) { out[0] = WAVE; out[1] = gridDim.x; } }
    void launch(unsigned* out) { k<<<WAVE, 1>>>(out); }
    """
    got = []
    for target in (CUDA32, AMD32, AMD64):
        dev = device(source, target, 2)
        run_host(dev, source, "launch", ["out"])
        got.append(dev.buffers["out"].data)
    assert got == [[1000, 5], [32, 3], [64, 3]]


def test_host_defines_reach_the_host_pass_only():
    source = """
    #ifndef PORTKIT_WAVEFRONT_SIZE
    #if defined(__AMDGCN_WAVEFRONT_SIZE)
    #define PORTKIT_WAVEFRONT_SIZE __AMDGCN_WAVEFRONT_SIZE
    #else
    #define PORTKIT_WAVEFRONT_SIZE 64
    #endif
    #endif
    __global__ void k(unsigned* out) { out[0] = PORTKIT_WAVEFRONT_SIZE; out[1] = blockDim.x; }
    void launch(unsigned* out, int block_size) { k<<<1, block_size / PORTKIT_WAVEFRONT_SIZE>>>(out); }
    """
    dev = device(source, AMD32, 2)
    run_host(dev, source, "launch", ["out", 256])
    assert dev.buffers["out"].data == [32, 4]        # host pass: 64, device pass: 32
    dev = device(source, AMD32, 2)
    run_host(dev, source, "launch", ["out", 256], {"PORTKIT_WAVEFRONT_SIZE": "32"})
    assert dev.buffers["out"].data == [32, 8]


def test_template_kernels_and_dynamic_shared_memory():
    source = """
    template <int scale>
    __global__ void k(int* out, int i) { extern __shared__ int dyn[]; dyn[2 * i + 1] = scale; out[i] = dyn[2 * i + 1] * 100; }
    void launch(int* out, int bytes) {
        k<3><<<1, 1, bytes>>>(out, 0);
        hipLaunchKernelGGL(HIP_KERNEL_NAME(k<5>), 1, 1, 2 * bytes, 0, out, 1);
    }
    """
    dev = Device(source, AMD64)
    dev.alloc("out", "int", [0, 0])
    run_host(dev, source, "launch", ["out", 8])
    assert dev.buffers["out"].data == [300, 500]
    with pytest.raises(OutOfBounds) as error:      # 4 bytes: one int; the first launch writes dyn[1]
        run_host(dev, source, "launch", ["out", 4])
    assert str(error.value) == "__shared__ array dyn[1]: element 1 is out of bounds (lane 0)"


def test_a_host_function_is_looked_up_by_name_and_arity():
    source = SHAPES + "void launch(unsigned* out) { shape<<<1, 1>>>(out, 0); }"
    dev = device(source, CUDA32, 6)
    with pytest.raises(SimError) as error:
        run_host(dev, source, "launch", ["out", 1])
    assert str(error.value) == "no host function launch taking 2 arguments"
    with pytest.raises(SimError) as error:
        run_host(dev, source, "shape", ["out", 1])
    assert str(error.value) == "no host function shape taking 2 arguments"
