// ptxlint: launch block=256 grid=64
// Lanes step by 2, 8 and 32 elements through `in`; the atomics step by 8 and 32 words.
extern "C" __global__ void strided(float* out, const float* in, unsigned* count, float* hist)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[2 * i];
    float b = in[8 * i];
    float c = in[32 * i];
    unsigned slot = atomicAdd(&count[8 * i], 1u);
    atomicAdd(&hist[32 * i], a);
    out[i] = a + b + c + slot;
}
// ptx-expect: ld\.global\.f32\s+%f1, => uncoalesced-access sectors_per_request=8 stride_bytes=8
// ptx-expect: ld\.global\.f32\s+%f2, => uncoalesced-access sectors_per_request=32 stride_bytes=32
// ptx-expect: ld\.global\.f32\s+%f3, => uncoalesced-access sectors_per_request=32 stride_bytes=128
// ptx-expect: atom\.global\.add\.u32 => uncoalesced-access sectors_per_request=32 stride_bytes=32
// ptx-expect: atom\.global\.add\.f32 => uncoalesced-access sectors_per_request=32 stride_bytes=128
