# CMake toolchain file for ROCm as Debian and Ubuntu package it: the one `portkit verify
# --configure` uses, which ships inside the package (portkit/commands/verify/debian-rocm.cmake,
# where its settings are explained). This path stays for those who configure by hand:
#
#   HIP_PLATFORM=amd cmake -S converted -B build -DCMAKE_TOOLCHAIN_FILE=tools/debian-rocm.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../portkit/commands/verify/debian-rocm.cmake")
