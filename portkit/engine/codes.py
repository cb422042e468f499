"""Every rule code, named: the one place outside the rule modules where a code is spelled.

Code outside portkit/rules/ names a rule by its constant (`Code.CUDA_VISIBLE_DEVICES`), never by
the string "PK507"; tests/test_architecture.py holds it. `Code.ALL` lists them in registry order,
and a test checks that it matches the rule modules exactly. The names sit in the engine so that
rewriters and build-file handlers name the codes they report without importing rules/.
"""

from __future__ import annotations


class Code:
    """The rule codes, each named after its rule (rules.get(Code.X).name in upper snake case)."""

    NO_HIP_EQUIVALENT = "PK001"
    NEEDS_NEWER_ROCM = "PK002"
    REMOVED_IN_ROCM = "PK003"
    PARTIAL_CONVERSION = "PK004"
    PARTIALLY_PARSED = "PK005"
    LAUNCH_NOT_CONVERTED = "PK006"
    NAME_BUILT_BY_PREPROCESSOR = "PK007"
    WARP_FIX_CHOICE = "PK008"
    REGISTER_STORAGE_CLASS = "PK011"
    REDEFINES_HIP_DEVICE_FUNCTION = "PK012"
    NARROWING_BRACE_INIT = "PK013"
    DEVICEPTR_AS_INTEGER = "PK014"
    DEPRECATED_CUDA_API = "PK101"
    EXPERIMENTAL_HIP_API = "PK102"
    CUDA_VERSION_GUARD = "PK103"
    CUDA_VERSION_VALUE = "PK104"
    HARDCODED_WARP_SIZE = "PK201"
    SHUFFLE_OFFSET_FROM_16 = "PK202"
    FULL_WARP_MASK = "PK203"
    BALLOT_IN_32_BITS = "PK204"
    WARP_SIZED_ARRAY = "PK205"
    WARP_SYNCHRONOUS_CODE = "PK206"
    WARP_SIZE_AS_CONSTANT = "PK207"
    ONE_WARP_BLOCK = "PK208"
    WARP_TRANSPOSE_BLOCK_SIZE = "PK209"
    INLINE_PTX_ASM = "PK301"
    DYNAMIC_PARALLELISM = "PK302"
    COOPERATIVE_LAUNCH_NEEDED = "PK303"
    TEXTURE_SURFACE_REFERENCE = "PK304"
    WMMA_TENSOR_CORES = "PK305"
    HOPPER_FEATURES = "PK306"
    LARGE_SHARED_MEMORY = "PK307"
    NANOSLEEP = "PK308"
    THREADFENCE_SYSTEM = "PK309"
    HOST_ONLY_STD_IN_DEVICE_CODE = "PK310"
    DEPENDENT_TYPE_WITHOUT_TYPENAME = "PK311"
    TORCH_HIPIFY_MIN_MAX = "PK312"
    DEVICE_FUNCTION_WITHOUT_RETURN = "PK313"
    HOST_CALL_TO_DEVICE_MATH = "PK314"
    CUDA_ONLY_LIBRARY = "PK401"
    REWRITE_BLOCKER = "PK402"
    CMAKE_CUDA_LANGUAGE = "PK501"
    CUDA_ARCHITECTURES = "PK502"
    FIND_PACKAGE_CUDA = "PK503"
    CMAKE_CUDA_TARGETS = "PK504"
    NVCC_FLAGS = "PK505"
    TORCH_CUDA_EXTENSION = "PK506"
    CUDA_VISIBLE_DEVICES = "PK507"
    BUILD_STEP_NOT_MIGRATED = "PK508"
    BUILD_MIGRATION_CHOICE = "PK509"
    CUDA_ONLY_SUBDIRECTORY = "PK510"
    CUDA_ONLY_PYTHON_PACKAGE = "PK601"
    ROCM_LIBRARY_NOT_INSTALLED = "PK701"
    INCLUDE_NOT_FOUND = "PK702"
    HIP_MATH_TEMPLATE_AMBIGUITY = "PK703"
    VECTOR_OPERATOR_AMBIGUITY = "PK704"
    UNUSED_SUPPRESSION = "PK901"
    GATE_POLICY_CHANGED = "PK902"

    ALL: tuple[str, ...] = ()


Code.ALL = tuple(v for k, v in vars(Code).items() if k.isupper() and k != "ALL")
