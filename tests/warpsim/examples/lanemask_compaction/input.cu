// Stream compaction inside a warp: rank = popcount of the ballot below my lane (lanemask_lt).
#include <cuda_runtime.h>

__global__ void compact_odd(const int* inp, int* out, int* count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    bool keep = i < n && (inp[i] & 1);
    unsigned int votes = __ballot_sync(0xffffffff, keep);
    unsigned int below = votes & ((1u << lane) - 1);
    int base = 0;
    if (lane == 0)
        base = atomicAdd(count, __popc(votes));
    base = __shfl_sync(0xffffffff, base, 0);
    if (keep)
        out[base + __popc(below)] = inp[i];
}
