/* portkit deep mode: stand-in for texture_fetch_functions.h, which this CUDA installation lacks (see README.md). */
