# CMake toolchain file for ROCm as Debian and Ubuntu package it (apt-get install hipcc
# libamdhip64-dev rocm-device-libs libamd-comgr-dev libhsa-runtime-dev), for CMake's native HIP
# language (enable_language(HIP), what `portkit convert` writes). Not needed with AMD's own
# ROCm packages in /opt/rocm.
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=tools/debian-rocm.cmake
#
# `portkit verify --configure` passes this file itself (tools/debian-rocm.cmake includes it).
#
# Why each setting (CMake 3.21-3.27; 3.28+ finds more of this itself):
# - hipconfig reports /usr/bin as clang's directory, but Debian installs clang++ as
#   clang++-<version> (and in /usr/lib/llvm-<version>/bin): name it.
# - CMake looks for <ROCm root>/lib/cmake/hip-lang/hip-lang-config.cmake; Debian's multiarch
#   layout has it in /usr/lib/<triplet>/cmake. A small root in the build tree links to it.
# - Those packages' own dependencies (amd_comgr, AMDDeviceLibs) are found through the same
#   directory, and clang needs --rocm-path and the device-library path.

set(_pk_multiarch "/usr/lib/x86_64-linux-gnu")
if(NOT EXISTS "${_pk_multiarch}/cmake/hip-lang/hip-lang-config.cmake")
  file(GLOB _pk_hip_lang "/usr/lib/*-linux-gnu*/cmake/hip-lang/hip-lang-config.cmake")
  if(_pk_hip_lang)
    list(GET _pk_hip_lang 0 _pk_hip_lang)
    get_filename_component(_pk_multiarch "${_pk_hip_lang}/../../.." ABSOLUTE)
  endif()
endif()

if(NOT CMAKE_HIP_COMPILER)
  # hipcc's own clang first: the device libraries are built for it. Debian's hipcc.pl names it
  # (clang++-15); a newer clang installed beside it (deep mode's clang-19) must not win.
  find_program(_pk_hipcc hipcc)
  if(_pk_hipcc AND EXISTS "${_pk_hipcc}.pl")
    file(STRINGS "${_pk_hipcc}.pl" _pk_line REGEX "clang\\+\\+-[0-9]+" LIMIT_COUNT 1)
    string(REGEX MATCH "clang\\+\\+-([0-9]+)" _pk_match "${_pk_line}")
    if(_pk_match AND EXISTS "/usr/lib/llvm-${CMAKE_MATCH_1}/bin/clang++")
      set(CMAKE_HIP_COMPILER "/usr/lib/llvm-${CMAKE_MATCH_1}/bin/clang++")
    endif()
  endif()
endif()

if(NOT CMAKE_HIP_COMPILER)
  file(GLOB _pk_clangs "/usr/lib/llvm-*/bin/clang++")
  list(SORT _pk_clangs COMPARE NATURAL ORDER DESCENDING)
  # The newest installed clang. If several are installed, pass -DCMAKE_HIP_COMPILER=... with the
  # one hipcc runs (HIPCC_VERBOSE=1 hipcc --version prints it): the device libraries match it.
  if(_pk_clangs)
    list(GET _pk_clangs 0 CMAKE_HIP_COMPILER)
  endif()
endif()

if(NOT CMAKE_HIP_COMPILER_ROCM_ROOT AND EXISTS "${_pk_multiarch}/cmake/hip-lang")
  set(_pk_root "${CMAKE_BINARY_DIR}/portkit-rocm-root")
  file(MAKE_DIRECTORY "${_pk_root}/lib")
  if(NOT EXISTS "${_pk_root}/lib/cmake")
    file(CREATE_LINK "${_pk_multiarch}/cmake" "${_pk_root}/lib/cmake" SYMBOLIC)
  endif()
  set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_pk_root}")
endif()

list(APPEND CMAKE_PREFIX_PATH "${_pk_multiarch}/cmake")
set(ENV{CMAKE_PREFIX_PATH} "${_pk_multiarch}/cmake")
set(CMAKE_HIP_FLAGS_INIT "--rocm-path=/usr --hip-device-lib-path=${_pk_multiarch}/amdgcn/bitcode")
