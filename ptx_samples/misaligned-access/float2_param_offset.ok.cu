// ptxlint: launch block=256 grid=4
// The fixed twin of float2_param_offset.bad.cu: the offset counts float2 pairs, so
// `in + 2 * first` stays 8-byte aligned.
extern "C" __global__ void sum_pairs(const float* in, float* out, int first)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 p = reinterpret_cast<const float2*>(in + 2 * first)[i];
    out[i] = p.x + p.y;
}
