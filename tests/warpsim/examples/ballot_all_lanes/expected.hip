// "Every lane agrees": the ballot compared with the full 32-lane mask.
#include <hip/hip_runtime.h>

__global__ void all_positive(const float* inp, int* flags)
{
    int warp = threadIdx.x / warpSize;
    int mask = __all(inp[threadIdx.x] > 0.0f);
    if (threadIdx.x % warpSize == 0)
        flags[warp] = mask;
}
