// ptxlint: launch block=32 grid=8
// Consecutive float4 and float2 reads: each quarter-warp (half-warp) covers 128
// consecutive bytes, one word per bank.
extern "C" __global__ void dense_vectors(float4* o4, float2* o2, const float4* a4, const float2* a2)
{
    __shared__ float4 s4[64];
    __shared__ float2 s2[64];
    int t = threadIdx.x;
    s4[t] = a4[blockIdx.x * 64 + t];
    s4[t + 32] = a4[blockIdx.x * 64 + t + 32];
    s2[t] = a2[blockIdx.x * 64 + t];
    s2[t + 32] = a2[blockIdx.x * 64 + t + 32];
    __syncthreads();
    o4[blockIdx.x * 32 + t] = s4[t + 32];
    o2[blockIdx.x * 32 + t] = s2[t + 32];
}
