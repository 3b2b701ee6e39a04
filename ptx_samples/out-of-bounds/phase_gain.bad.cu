// ptxlint: launch block=256 grid=64 param.4=16384
// Rotates complex samples by a phase and applies a gain from a 64-entry shared table
// indexed by the phase. sinf and cosf are the accurate ones (no --use_fast_math): for
// |x| >= 105615 they reduce the argument with a 24-byte table (`__cudart_i2opi_f`) and a
// 28-byte local array, indexed by a loop counter and by the float's exponent; none of
// those accesses is reported. The defect: the table index is masked with 64 instead of
// 63, so it is 0 or 64, one past the last entry.
#define LUT 64
extern "C" __global__ void rotate_gain(const float* __restrict__ phase,
                                       const float2* __restrict__ in,
                                       float2* __restrict__ out,
                                       const float* __restrict__ gain, int n)
{
    __shared__ float g[LUT];
    if (threadIdx.x < LUT)
        g[threadIdx.x] = gain[threadIdx.x];
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float a = phase[i];
    const float s = sinf(a), c = cosf(a);
    const int k = (int)(a * (LUT / 6.2831853f)) & LUT;
    const float2 v = in[i];
    out[i] = make_float2(g[k] * (c * v.x - s * v.y), g[k] * (s * v.x + c * v.y));
}
// ptx-expect: ld\.shared\.f32 => out-of-bounds first_bad_byte=256
