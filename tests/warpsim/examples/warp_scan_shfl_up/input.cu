// Inclusive warp scan (Kogge-Stone with __shfl_up); the warp total is read from lane 31.
#include <cuda_runtime.h>
#define FULL_MASK 0xffffffff

__global__ void warp_scan(const int* inp, int* out, int* totals)
{
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int x = inp[threadIdx.x];
    for (int d = 1; d < 32; d <<= 1) {
        int y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d)
            x += y;
    }
    out[threadIdx.x] = x;
    int total = __shfl_sync(FULL_MASK, x, 31);
    if (lane == 0)
        totals[warp] = total;
}
