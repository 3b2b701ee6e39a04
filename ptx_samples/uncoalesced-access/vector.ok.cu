// ptxlint: launch block=128 grid=32
// Contiguous vector accesses: each warp request covers exactly its bytes.
extern "C" __global__ void vectors(float4* o4, const float4* a4, float2* o2, const float2* a2,
                                   double* od, const double* ad)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    o4[i] = a4[i];
    o2[i] = a2[i];
    od[i] = ad[i];
}
