// ptxlint: launch block=128 grid=512 param.3=1024 buffer.0=2097152 buffer.1=2097152 buffer.2=4096
// Layer norm, one block per row: float4 loads, warp reductions by __shfl_xor_sync, the
// warps' partial sums through shared memory, then the scaled row written as float4.
#define BLOCK 128
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK) layer_norm(const float* __restrict__ x,
        float* __restrict__ y, const float* __restrict__ gamma, int cols)
{
    __shared__ float part[2][BLOCK / 32];
    const float4* row = reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * cols);
    float4* dst = reinterpret_cast<float4*>(y + (size_t)blockIdx.x * cols);
    const float4* g = reinterpret_cast<const float4*>(gamma);
    float s = 0.f, q = 0.f;
    for (int i = threadIdx.x; i < cols / 4; i += BLOCK) {
        const float4 v = row[i];
        s += v.x + v.y + v.z + v.w;
        q += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    s = warp_sum(s);
    q = warp_sum(q);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) { part[0][warp] = s; part[1][warp] = q; }
    __syncthreads();
    s = 0.f; q = 0.f;
#pragma unroll
    for (int w = 0; w < BLOCK / 32; ++w) { s += part[0][w]; q += part[1][w]; }
    const float mean = s / cols, inv = rsqrtf(q / cols - mean * mean + 1e-5f);
    for (int i = threadIdx.x; i < cols / 4; i += BLOCK) {
        const float4 v = row[i], w = g[i];
        dst[i] = make_float4((v.x - mean) * inv * w.x, (v.y - mean) * inv * w.y,
                             (v.z - mean) * inv * w.z, (v.w - mean) * inv * w.w);
    }
}
