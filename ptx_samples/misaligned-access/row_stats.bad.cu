// ptxlint: launch block=64 grid=128
// Row statistics for a layer norm: one block per row of K floats, read as float4 (the
// host guarantees K % 4 == 0: a note states the condition, it is not a defect of the
// kernel). The block's partial sums go through a shared float array that the first 16
// threads read back as float4: declared float[], the PTX gives it `.align 4`, so the
// 16-byte loads hold only while ptxas happens to place it at a multiple of 16.
#define THREADS 64
extern "C" __global__ void row_stats(const float* __restrict__ x, float2* __restrict__ stats,
                                     int K)
{
    __shared__ float partial[2 * THREADS];
    const float4* row = reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * K);
    float s = 0.f, q = 0.f;
    for (int i = threadIdx.x; i < K / 4; i += THREADS) {
        float4 v = row[i];
        s += v.x + v.y + v.z + v.w;
        q += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    partial[threadIdx.x] = s;
    partial[THREADS + threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.x < THREADS / 4) {
        float4 a = reinterpret_cast<const float4*>(partial)[threadIdx.x];
        float4 b = reinterpret_cast<const float4*>(partial + THREADS)[threadIdx.x];
        float ss = a.x + a.y + a.z + a.w, qq = b.x + b.y + b.z + b.w;
        for (int o = 8; o > 0; o >>= 1) {
            ss += __shfl_down_sync(0xffffu, ss, o);
            qq += __shfl_down_sync(0xffffu, qq, o);
        }
        if (threadIdx.x == 0) {
            float mean = ss / K;
            stats[blockIdx.x] = make_float2(mean, qq / K - mean * mean);
        }
    }
}
// ptx-expect: ld\.shared\.v4\.f32 => misaligned-access width=16 alignment=4 offset_residue=0
// ptx-expect: ld\.global\.nc\.v4\.f32 => misaligned-access parameter=row_stats_param_2 multiple=4
