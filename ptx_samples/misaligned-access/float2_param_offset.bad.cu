// ptxlint: launch block=256 grid=4
// float2 loads from `in + first`, with `first` a runtime float count: the address
// is only known to be 4-byte aligned, so the 8-byte loads fault for an odd `first`.
extern "C" __global__ void sum_pairs(const float* in, float* out, int first)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 p = reinterpret_cast<const float2*>(in + first)[i];
    out[i] = p.x + p.y;
}
// ptx-expect: ld\.global\.v2\.f32 => misaligned-access width=8 alignment=4 offset_residue=0
