// ptxlint: launch block=256 grid=4 param.2=1000
// The twin: every thread reaches the barrier; the threads past the end skip the work.
extern "C" __global__ void shift_left(float* out, const float* in, int n)
{
    __shared__ float s[256];
    const int t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (i < n)
        s[t] = in[i];
    __syncthreads();
    if (i < n)
        out[i] = s[(t + 1) % 256];
}
