// Stream compaction inside a warp: rank = popcount of the ballot below my lane (lanemask_lt).
#include <hip/hip_runtime.h>

__global__ void compact_odd(const int* inp, int* out, int* count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    bool keep = i < n && (inp[i] & 1);
    unsigned long long votes = __ballot(keep);
    unsigned long long below = votes & ((1ull << lane) - 1);
    int base = 0;
    if (lane == 0)
        base = atomicAdd(count, __popcll(votes));
    base = __shfl(base, 0);
    if (keep)
        out[base + __popcll(below)] = inp[i];
}
