// ptxlint: launch block=32 grid=16 param.2=64 buffer.0=4096 buffer.1=64
// The fix: the accumulator starts at zero.
extern "C" __global__ void row_sum(const float* in, float* out, int n)
{
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += in[blockIdx.x * n + k];
    if (threadIdx.x == 0)
        out[blockIdx.x] = acc;
}
