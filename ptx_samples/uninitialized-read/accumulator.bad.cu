// ptxlint: launch block=32 grid=16 param.2=64 buffer.0=4096 buffer.1=64
// A row sum whose accumulator is never initialised: the first addition reads whatever
// the register held. nvcc compiles it without a warning.
extern "C" __global__ void row_sum(const float* in, float* out, int n)
{
    float acc;
    for (int k = 0; k < n; ++k)
        acc += in[blockIdx.x * n + k];
    if (threadIdx.x == 0)
        out[blockIdx.x] = acc;
}
// ptx-expect[1]: add\.f32\s+%f\d+, %f21, => uninitialized-read kind=register register=%f21
