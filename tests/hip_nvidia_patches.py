"""The textual patches that let Debian's HIP headers (ROCm 5.2) compile with CUDA 13 (tests only).

HIP 5.2's NVIDIA backend wraps CUDA runtime calls that CUDA 13 removed or re-signed. Each patch is
a (file, old text, new text) triple whose old text must occur exactly once, so a different header
fails the tests loudly instead of being patched somewhere unintended. Two kinds, both keeping the
original under `#if CUDART_VERSION < 13000` (nothing is deleted; an older CUDA sees the header as is):

- `_guard`: CUDA 13 removed the feature (texture references, multi-device cooperative launch, some
  cudaDeviceProp fields): the wrapper, or the line, is compiled out under CUDA 13.
- `_either`: CUDA 13 changed the signature: the `#else` branch calls the new one with the argument
  the old call implied (a cudaMemLocation for a device id, NULL graph edge data, NULL context
  parameters), so the HIP function stays callable (hipCtxCreate is used by a fixture).
"""

from __future__ import annotations

from typing import NamedTuple

API = "nvidia_detail/nvidia_hip_runtime_api.h"
IF_OLD = "#if CUDART_VERSION < 13000  // portkit tests: {why}\n"


class Patch(NamedTuple):
    file: str     # relative to the hip/ include folder
    old: str      # must occur exactly once in the file
    new: str
    why: str


def _guard(old: str, why: str, file: str = API) -> Patch:
    return Patch(file, old, IF_OLD.format(why=why) + old + "#endif\n", why)


def _either(old: str, cuda13: str, why: str, file: str = API) -> Patch:
    return Patch(file, old, IF_OLD.format(why=why) + old + "#else\n" + cuda13 + "#endif\n", why)


def _ret(call: str) -> str:
    """The wrappers' one-line body around a CUDA runtime call."""
    return f"    return hipCUDAErrorTohipError({call});\n"


_LOCATION = ("    struct cudaMemLocation location = {device == cudaCpuDeviceId ? cudaMemLocationTypeHost\n"
             "                                                                : cudaMemLocationTypeDevice, device};\n")

_TEXTURE_TEMPLATES = "".join(
    f"template <class T, int dim, enum cudaTextureReadMode readMode>\n{signature}\n{_ret(call)}}}\n\n"
    for signature, call in (
        ("inline static hipError_t hipBindTexture(size_t* offset, const struct texture<T, dim, readMode>& tex,\n"
         "                                        const void* devPtr, size_t size = UINT_MAX) {",
         "cudaBindTexture(offset, tex, devPtr, size)"),
        ("inline static hipError_t hipBindTexture(size_t* offset, struct texture<T, dim, readMode>& tex,\n"
         "                                        const void* devPtr, const hipChannelFormatDesc& desc,\n"
         "                                        size_t size = UINT_MAX) {",
         "cudaBindTexture(offset, tex, devPtr, desc, size)"),
        ("__HIP_DEPRECATED inline static hipError_t hipUnbindTexture(struct texture<T, dim, readMode>* tex) {",
         "cudaUnbindTexture(tex)"),
        ("__HIP_DEPRECATED inline static hipError_t hipUnbindTexture(struct texture<T, dim, readMode>& tex) {",
         "cudaUnbindTexture(tex)"),
        ("__HIP_DEPRECATED inline static hipError_t hipBindTextureToArray(\n"
         "    struct texture<T, dim, readMode>& tex, hipArray_const_t array,\n"
         "    const hipChannelFormatDesc& desc) {",
         "cudaBindTextureToArray(tex, array, desc)"),
        ("__HIP_DEPRECATED inline static hipError_t hipBindTextureToArray(\n"
         "    struct texture<T, dim, readMode>* tex, hipArray_const_t array,\n"
         "    const hipChannelFormatDesc* desc) {",
         "cudaBindTextureToArray(tex, array, desc)"),
        ("__HIP_DEPRECATED inline static hipError_t hipBindTextureToArray(\n"
         "    struct texture<T, dim, readMode>& tex, hipArray_const_t array) {",
         "cudaBindTextureToArray(tex, array)"),
    ))

PATCHES = (
    _either("    return hipCUDAErrorTohipError(cudaMemAdvise(dev_ptr, count,\n"
            "        hipMemoryAdviseTocudaMemoryAdvise(advice), device));\n",
            _LOCATION + _ret("cudaMemAdvise(dev_ptr, count, hipMemoryAdviseTocudaMemoryAdvise(advice), location)"),
            "cudaMemAdvise takes a cudaMemLocation"),
    _either(_ret("cudaMemPrefetchAsync(dev_ptr, count, device, stream)"),
            _LOCATION + _ret("cudaMemPrefetchAsync(dev_ptr, count, location, 0, stream)"),
            "cudaMemPrefetchAsync takes a cudaMemLocation and flags"),
    _guard("    cdprop.clockRate = prop->clockRate;\n", "cudaDeviceProp::clockRate removed"),
    _guard("    cdprop.computeMode = prop->computeMode;\n", "cudaDeviceProp::computeMode removed"),
    _guard("    cdprop.memoryClockRate = prop->memoryClockRate;\n", "cudaDeviceProp::memoryClockRate removed"),
    _either("    p_prop->clockRate = cdprop.clockRate;\n"
            "    p_prop->memoryClockRate = cdprop.memoryClockRate;\n",
            "    cudaDeviceGetAttribute(&p_prop->clockRate, cudaDevAttrClockRate, device);\n"
            "    cudaDeviceGetAttribute(&p_prop->memoryClockRate, cudaDevAttrMemoryClockRate, device);\n",
            "clock rates are device attributes only"),
    _either("    p_prop->computeMode = cdprop.computeMode;\n"
            "    p_prop->clockInstructionRate = cdprop.clockRate; // Same as clock-rate:\n",
            "    cudaDeviceGetAttribute(&p_prop->computeMode, cudaDevAttrComputeMode, device);\n"
            "    p_prop->clockInstructionRate = p_prop->clockRate;\n",
            "computeMode and clockRate are device attributes only"),
    _either("    p_prop->cooperativeMultiDeviceLaunch = cdprop.cooperativeMultiDeviceLaunch;\n",
            "    p_prop->cooperativeMultiDeviceLaunch = 0;\n",
            "multi-device cooperative launch removed"),
    _either("    p_prop->kernelExecTimeoutEnabled = cdprop.kernelExecTimeoutEnabled;\n",
            "    cudaDeviceGetAttribute(&p_prop->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout, device);\n",
            "kernelExecTimeoutEnabled is a device attribute only"),
    _guard("        case hipDeviceAttributeCooperativeMultiDeviceLaunch:\n"
           "            cdattr = cudaDevAttrCooperativeMultiDeviceLaunch;\n"
           "            break;\n", "multi-device cooperative launch removed"),
    _either("    return hipCUResultTohipError(cuCtxCreate(ctx, flags, device));\n",
            "    return hipCUResultTohipError(cuCtxCreate(ctx, NULL, flags, device));\n",
            "cuCtxCreate takes CUctxCreateParams"),
    _guard("__HIP_DEPRECATED inline static hipError_t hipBindTexture(size_t* offset,\n"
           "                                                         struct textureReference* tex,\n"
           "                                                         const void* devPtr,\n"
           "                                                         const hipChannelFormatDesc* desc,\n"
           "                                                         size_t size __dparm(UINT_MAX)) {\n"
           + _ret("cudaBindTexture(offset, tex, devPtr, desc, size)") + "}\n\n"
           "__HIP_DEPRECATED inline static hipError_t hipBindTexture2D(\n"
           "    size_t* offset, struct textureReference* tex, const void* devPtr,\n"
           "    const hipChannelFormatDesc* desc, size_t width, size_t height, size_t pitch) {\n"
           + _ret("cudaBindTexture2D(offset, tex, devPtr, desc, width, height, pitch)") + "}\n",
           "texture references removed"),
    _guard("__HIP_DEPRECATED inline static hipError_t hipGetTextureAlignmentOffset(\n"
           "    size_t* offset, const struct textureReference* texref) {\n"
           + _ret("cudaGetTextureAlignmentOffset(offset,texref)") + "}\n", "texture references removed"),
    _guard("inline static hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* launchParamsList,\n"
           "                                                 int  numDevices, unsigned int  flags) {\n"
           + _ret("cudaLaunchCooperativeKernelMultiDevice(launchParamsList, numDevices, flags)") + "}\n",
           "multi-device cooperative launch removed"),
    _guard(_TEXTURE_TEMPLATES, "texture references removed"),
    _either(_ret("cudaGraphAddDependencies(graph, from, to, numDependencies)"),
            _ret("cudaGraphAddDependencies(graph, from, to, NULL, numDependencies)"), "graph edges take edge data"),
    _either(_ret("cudaGraphRemoveDependencies(graph, from, to, numDependencies)"),
            _ret("cudaGraphRemoveDependencies(graph, from, to, NULL, numDependencies)"), "graph edges take edge data"),
    _either(_ret("cudaGraphGetEdges(graph, from, to, numEdges)"),
            _ret("cudaGraphGetEdges(graph, from, to, NULL, numEdges)"), "graph edges take edge data"),
    _either("        cudaGraphNodeGetDependencies(node, pDependencies, pNumDependencies));\n",
            "        cudaGraphNodeGetDependencies(node, pDependencies, NULL, pNumDependencies));\n",
            "graph edges take edge data"),
    _either("        cudaGraphNodeGetDependentNodes(node, pDependentNodes, pNumDependentNodes));\n",
            "        cudaGraphNodeGetDependentNodes(node, pDependentNodes, NULL, pNumDependentNodes));\n",
            "graph edges take edge data"),
    _either("    return hipCUDAErrorTohipError(cudaStreamGetCaptureInfo_v2(\n"
            "        stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out));\n",
            "    return hipCUDAErrorTohipError(cudaStreamGetCaptureInfo(\n"
            "        stream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out));\n",
            "cudaStreamGetCaptureInfo_v2 is cudaStreamGetCaptureInfo with edge data"),
    _either("    return hipCUDAErrorTohipError(cudaStreamUpdateCaptureDependencies(stream, dependencies,\n"
            "                                                                      numDependencies, flags));\n",
            "    return hipCUDAErrorTohipError(cudaStreamUpdateCaptureDependencies(stream, dependencies, NULL,\n"
            "                                                                      numDependencies, flags));\n",
            "capture dependencies take edge data"),
)
