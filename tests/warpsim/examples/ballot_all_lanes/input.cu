// "Every lane agrees": the ballot compared with the full 32-lane mask.
#include <cuda_runtime.h>

__global__ void all_positive(const float* inp, int* flags)
{
    int warp = threadIdx.x / warpSize;
    unsigned mask = __ballot_sync(0xffffffff, inp[threadIdx.x] > 0.0f);
    if (threadIdx.x % warpSize == 0)
        flags[warp] = mask == 0xffffffff;
}
