// ptxlint: launch block=256 grid=32 param.2=8192 buffer.0=32768 buffer.1=32768
// Block-wide inclusive scan: a warp scan with __shfl_up_sync, the warps' totals through
// shared memory, scanned by warp 0, added back.
#define BLOCK 256
#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned lane)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK) block_scan(const float* __restrict__ in,
                                                           float* __restrict__ out, int n)
{
    __shared__ float warp_total[WARPS];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_inclusive_scan(v, lane);
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < WARPS ? warp_total[lane] : 0.0f;
        t = warp_inclusive_scan(t, lane);
        if (lane < WARPS) warp_total[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warp_total[warp - 1];
    if (i < n) out[i] = v;
}
