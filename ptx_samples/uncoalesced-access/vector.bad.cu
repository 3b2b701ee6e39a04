// ptxlint: launch block=128 grid=32
// Vector accesses that skip every other element: float4 and float2 at a 32-byte stride,
// double at 16 bytes.
extern "C" __global__ void vectors(float4* o4, const float4* a4, float2* o2, const float2* a2,
                                   double* od, const double* ad)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    o4[i] = a4[2 * i];
    o2[i] = a2[4 * i];
    od[i] = ad[2 * i];
}
// ptx-expect: ld\.global\.v4 => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=16 stride_bytes=32
// ptx-expect: ld\.global\.v2 => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=8 stride_bytes=32
// ptx-expect: ld\.global\.f64 => uncoalesced-access sectors_per_request=16 ideal_sectors_per_request=8 stride_bytes=16
