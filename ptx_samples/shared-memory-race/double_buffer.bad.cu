// ptxlint: launch block=128 grid=16 param.2=64
// A smoothing stencil iterated in shared memory with two buffers: step k reads buf[k & 1]
// and writes buf[(k + 1) & 1], so one barrier per step suffices. It is missing: step k + 1
// reads the neighbour's value while the neighbour may still be on step k.
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
    }
    out[blockIdx.x * 128 + t] = buf[steps & 1][t];
}
// ptx-expect[2]: st\.shared\.f32 => shared-memory-race kinds=write-read
