/* portkit deep mode: stand-in for curand_mtgp32_kernel.h, which this CUDA installation lacks (see README.md). */
