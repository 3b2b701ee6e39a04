// ptxlint: launch block=256 grid=4 param.2=1000 buffer.0=4000 buffer.1=4000
// The guarded twin of missing_guard.bad.cu: `if (i < n)` keeps the last block's
// 24 extra threads away from the 1000-float buffers.
extern "C" __global__ void scale(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
