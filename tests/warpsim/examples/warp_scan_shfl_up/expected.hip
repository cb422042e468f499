// Inclusive warp scan (Kogge-Stone with __shfl_up); the warp total is read from lane 31.
#include <hip/hip_runtime.h>
#define FULL_MASK 0xffffffff

__global__ void warp_scan(const int* inp, int* out, int* totals)
{
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int x = inp[threadIdx.x];
    for (int d = 1; d < warpSize; d <<= 1) {
        int y = __shfl_up(x, d);
        if (lane >= d)
            x += y;
    }
    out[threadIdx.x] = x;
    int total = __shfl(x, warpSize - 1);
    if (lane == 0)
        totals[warp] = total;
}
