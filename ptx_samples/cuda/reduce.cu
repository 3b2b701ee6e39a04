// Block sum reduction: shared-memory tree down to one warp, then warp shuffles.
// Also counts positive inputs per warp with __ballot_sync + __popc.
#include <cstdint>

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void block_reduce(const float* in, float* block_sums,
                                        unsigned* positive_counts, int n)
{
    extern __shared__ float partial[];          // blockDim.x floats, sized at launch
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + tid;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];

    unsigned positive = __ballot_sync(0xffffffffu, v > 0.0f);
    if ((tid & 31) == 0)
        atomicAdd(&positive_counts[blockIdx.x], __popc(positive));

    partial[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = partial[tid] + (blockDim.x > 32 ? partial[tid + 32] : 0.0f);
        v = warp_sum(v);
        if (tid == 0) block_sums[blockIdx.x] = v;
    }
}

// Warp-level max with __shfl_xor_sync (butterfly) and an __any_sync early-out.
extern "C" __global__ void warp_max(const int* in, int* out)
{
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    if (!__any_sync(0xffffffffu, v != 0)) {
        if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = 0;
        return;
    }
    for (int m = 16; m > 0; m >>= 1)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, m));
    if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
