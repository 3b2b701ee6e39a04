// ptxlint: launch block=128 grid=64
// The twin: every thread reaches both barriers; only the work is conditional.
extern "C" __global__ void stage_first_warp(float* out, const float* in)
{
    __shared__ float s[128];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    float sum = 0.0f;
    if (t < 32)
        sum = s[t] + s[t + 32] + s[t + 64] + s[t + 96];
    __syncthreads();
    if (t < 32)
        s[t] = sum;
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[t % 32];
}
