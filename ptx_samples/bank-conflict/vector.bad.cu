// ptxlint: launch block=32 grid=8
// float4 and float2 reads from shared memory that skip every other element: lanes of a
// quarter-warp (float4) or half-warp (float2) span 256 bytes, two words per bank.
extern "C" __global__ void skip_vectors(float4* o4, float2* o2, const float4* a4, const float2* a2)
{
    __shared__ float4 s4[64];
    __shared__ float2 s2[64];
    int t = threadIdx.x;
    s4[t] = a4[blockIdx.x * 64 + t];
    s4[t + 32] = a4[blockIdx.x * 64 + t + 32];
    s2[t] = a2[blockIdx.x * 64 + t];
    s2[t + 32] = a2[blockIdx.x * 64 + t + 32];
    __syncthreads();
    o4[blockIdx.x * 32 + t] = s4[2 * t];
    o2[blockIdx.x * 32 + t] = s2[2 * t];
}
// ptx-expect: ld\.shared\.v4 => bank-conflict ways=2 bank=0
// ptx-expect: ld\.shared\.v2 => bank-conflict ways=2 bank=0
