// ptxlint: launch block=128 grid=16 param.2=64
// The twin: one barrier per step. Within a step the two buffers never meet (k & 1 and
// (k + 1) & 1 differ), which the analysis sees by comparing the two addresses for the same k.
extern "C" __global__ void smooth(float* out, const float* in, int steps)
{
    __shared__ float buf[2][129];
    const unsigned t = threadIdx.x;
    buf[0][t] = in[blockIdx.x * 128 + t];
    if (t == 0)
        buf[0][128] = buf[1][128] = 0.0f;
    __syncthreads();
    for (int k = 0; k < steps; ++k) {
        const float* from = buf[k & 1];
        float* to = buf[(k + 1) & 1];
        to[t] = 0.5f * (from[t] + from[t + 1]);
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = buf[steps & 1][t];
}
